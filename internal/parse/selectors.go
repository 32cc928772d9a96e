package parse

import "github.com/andybalholm/cascadia"

// The selectors a parse runs, compiled once: goquery's Find compiles its selector at every
// call, which was 2.7% of the process worker's CPU on make bench (13 selectors a page).
var (
	selTitle           = cascadia.MustCompile("title")
	selHTML            = cascadia.MustCompile("html")
	selBase            = cascadia.MustCompile("base[href]")
	selMetaName        = cascadia.MustCompile("meta[name]")
	selCanonical       = cascadia.MustCompile(`link[rel~="canonical"]`)
	selAnchors         = cascadia.MustCompile("a[href], area[href]")
	selContentLanguage = cascadia.MustCompile(`meta[http-equiv="content-language" i]`)
	selBoilerplate     = cascadia.MustCompile(boilerplate)
	selMain            = cascadia.MustCompile(`main, [role="main"]`)
	selArticle         = cascadia.MustCompile("article")
	selMetaEquiv       = cascadia.MustCompile("meta[http-equiv][content]")
	selIframe          = cascadia.MustCompile("iframe[src]")
	selFrame           = cascadia.MustCompile("frame[src]")
	selLinkRel         = cascadia.MustCompile("link[href][rel]")
	selRequisites      = cascadia.MustCompile("img, source, input[type=image i], video, audio, track, script[src], link[href], object[data], embed[src], image, use, style, [style]")
)
