package testweb

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
)

// ---- bytes.test: ordinary web bytes a crawler must store, not choke on (Config.Bytes). ------
//
// A robots.txt with a Latin-1 comment, header values with bytes >= 0x80, a page in
// ISO-8859-1 with NULs and a non-UTF-8 <html lang>, a sitemap reached through a redirect whose
// <loc> comes in thousands of pieces, gzipped, listing a page nothing links to, and a page
// robots.txt forbids.

type bytesSite struct{ w *Web }

func (s *bytesSite) host() string { return "bytes.test" }

func (s *bytesSite) robots() robotsSpec {
	return robotsSpec{profile: "bytes", status: 200,
		body:  "# Caf\xe9 \xab robots \xbb \x00\nUser-agent: *\nDisallow: /private/\n\nSitemap: http://bytes.test/old-sitemap.xml\n",
		rules: ruleset{rules: []rule{{false, "/private/"}}}}
}

func (s *bytesSite) sitemapPages() []string { return []string{"http://bytes.test/sitemap-only"} }

// BytesLatin1Text is a phrase of bytes.test/latin1, as a crawler that decodes the page by its
// declared charset stores it.
const BytesLatin1Text = "Café crème brûlée, naïve"

func (s *bytesSite) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		listPage(w, "bytes host", "/latin1", "/header", "/private/secret")
	case "/latin1":
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		_, _ = w.Write([]byte("<html lang=\"fr\xe9\x00\"><head><title>Caf\xe9</title></head><body><main><p>Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve\x00 " +
			strings.Repeat("un texte en Latin-1 pour le test ", 20) + "</p><a href=\"/\">accueil</a></main></body></html>"))
	case "/header":
		// Header values with obs-text (RFC 9110 §5.5), as many servers send them.
		w.Header().Set("X-Note", "caf\xe9 \xff")
		w.Header().Set("ETag", "\"\xe9t\xe9\"")
		w.Header().Set("Content-Language", "fr\xe9")
		htmlPage(w, doc{title: "headers", paragraphs: []string{"A page whose response head holds bytes above 0x7f."},
			links: []link{{href: "/", text: "home"}}})
	case "/private/secret", "/sitemap-only":
		htmlPage(w, doc{title: r.URL.Path, paragraphs: []string{"A page at " + r.URL.Path + "."}, links: []link{{href: "/", text: "home"}}})
	case "/old-sitemap.xml":
		http.Redirect(w, r, "/sitemap.xml.gz", http.StatusMovedPermanently)
	case "/sitemap.xml.gz":
		var loc strings.Builder
		for _, c := range "http://bytes.test/sitemap-only" { // a comment between every character
			loc.WriteRune(c)
			loc.WriteString("<!-- -->")
		}
		var body strings.Builder
		body.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := 0; i < 300; i++ {
			body.WriteString("<url><loc>" + loc.String() + "</loc></url>")
		}
		body.WriteString("</urlset>")
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte(body.String()))
		_ = zw.Close()
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(buf.Bytes())
	default:
		http.NotFound(w, r)
	}
}

func (s *bytesSite) page(p, q string) pageInfo {
	if q != "" {
		return pageInfo{}
	}
	switch p {
	case "/":
		return okLinks(s.host(), "/latin1", "/header", "/private/secret")
	case "/latin1", "/header", "/private/secret", "/sitemap-only":
		return okLinks(s.host(), "/")
	}
	return pageInfo{}
}

// ---- moved.test (with Config.Bytes): its robots.txt redirects to bytes.test's. -------------
//
// The hop is a request to bytes.test, which must keep bytes.test's delay from its other
// requests; the rules it finds apply to moved.test.

type movedSite struct{ w *Web }

func (s *movedSite) host() string { return "moved.test" }

func (s *movedSite) robots() robotsSpec {
	spec := (&bytesSite{}).robots()
	spec.profile, spec.redirect = "cross-host redirect", "http://bytes.test/robots.txt"
	return spec
}

func (s *movedSite) sitemapPages() []string { return nil }

func (s *movedSite) serve(w http.ResponseWriter, r *http.Request) {
	switch s.page(r.URL.Path, r.URL.RawQuery).kind {
	case pageOK:
		listPage(w, "moved "+r.URL.Path, "/", "/page", "/private/x")
	default:
		http.NotFound(w, r)
	}
}

func (s *movedSite) page(p, q string) pageInfo {
	if q == "" && (p == "/" || p == "/page" || p == "/private/x") {
		return okLinks(s.host(), "/", "/page", "/private/x")
	}
	return pageInfo{}
}
