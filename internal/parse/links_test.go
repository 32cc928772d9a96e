package parse

import (
	"net/url"
	"slices"
	"testing"
)

// A page's links beyond its anchors are the ones a browser follows or a crawler should: frame
// and iframe sources, a meta refresh's target, rel=next/prev and hreflang alternates, each
// with its kind; a refresh that only reloads, an about: frame and a plain stylesheet link are
// not links.
func TestBrowserLinksAreFoundWithTheirKind(t *testing.T) {
	page, _ := url.Parse("http://a.test/dir/page")
	html := `<html><head>
<meta http-equiv="Refresh" content="5; URL='/moved'">
<meta http-equiv="refresh" content="30">
<link rel="next" href="/dir/page?p=2"><link rel="Prev" href="/dir/page?p=0">
<link rel="alternate" hreflang="de" href="http://a.test/de/page">
<link rel="alternate" type="application/rss+xml" href="/feed">
<link rel="stylesheet" href="/style.css">
</head><body>
<iframe src="/embed/video"></iframe><iframe src="about:blank"></iframe>
<a href="/plain">plain</a>
</body></html>`
	p, err := Parse([]byte(html), "text/html", page, 100, MaxRequisites, "trawlerbot")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range p.Links {
		got = append(got, l.Kind+" "+l.Href)
	}
	want := []string{"refresh /moved", "iframe /embed/video", "next /dir/page?p=2",
		"prev /dir/page?p=0", "hreflang http://a.test/de/page", "a /plain"}
	if !slices.Equal(got, want) {
		t.Errorf("links %q;\nwant %q", got, want)
	}
	frames, err := Parse([]byte(`<html><frameset><frame src="frames/left.html"><frame src="/right"></frameset></html>`), "text/html", page, 100, MaxRequisites, "")
	if err != nil || len(frames.Links) != 2 || frames.Links[0].Kind != LinkFrame || frames.Links[1].Href != "/right" {
		t.Errorf("a frameset's links: %+v (%v)", frames.Links, err)
	}
	// The cap holds over every kind.
	if p, _ := Parse([]byte(html), "text/html", page, 2, MaxRequisites, "trawlerbot"); len(p.Links) != 2 {
		t.Errorf("%d links with a cap of 2", len(p.Links))
	}
}

func TestRefreshTarget(t *testing.T) {
	for content, want := range map[string]string{
		"0; url=/next": "/next", "0;URL='/x y'": "/x y", `3; url="http://b.test/"`: "http://b.test/",
		"10": "", "0; /no-url-key": "", "0, url=/old-comma": "/old-comma", "": "",
	} {
		if got := refreshTarget(content); got != want {
			t.Errorf("refreshTarget(%q) = %q, want %q", content, got, want)
		}
	}
}
