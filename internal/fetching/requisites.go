package fetching

import (
	"context"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/parse"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
)

// A page's requisites (crawl.SourceEmbed) are fetched to be archived, never read for links:
// a stylesheet among them is read here, at fetch time, for its own requisites (@import, fonts,
// images), at most crawl.MaxRequisiteHops deep, crawl.MaxImports imports and
// crawl.MaxRequisiteHosts hosts out of scope each; nothing else of them is processed. So one
// page admits at most maxPerPage requisites of its own (free of the page budgets), and what
// their stylesheets name is free within the crawl's room for requisites (admit.Budget).

// isStylesheet says whether a requisite's answer is CSS: by its type, or, when the server
// sends none or a generic one, by how the page named it (a .css path).
func isStylesheet(contentType, rawURL string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "text/css":
		return true
	case "", "text/plain", "application/octet-stream":
		u, err := url.Parse(rawURL)
		return err == nil && strings.HasSuffix(strings.ToLower(u.Path), ".css")
	}
	return false
}

// readStylesheet admits what a fetched stylesheet needs as requisites of their own hosts. It
// returns a note on the stylesheet, and an error when the admission failed (ours: its outcome
// must not be recorded without them, or nothing would admit them again).
func (f *Stage) readStylesheet(ctx context.Context, ci *policy.Crawl, u crawl.Claimed, body []byte) (string, error) {
	spec := ci.Spec.Requisites
	if u.Hops+1 > crawl.MaxRequisiteHops || spec.PerPage() == 0 {
		return "", nil
	}
	base, err := url.Parse(u.URL)
	if err != nil {
		return "", nil
	}
	found := admit.Discover(f.Crawls, ci, base, admit.From{Depth: u.Depth, Hops: u.Hops + 1, Source: crawl.SourceEmbed}, spec.PerPage())
	imports := 0
	for _, r := range parse.CSSRefs(string(body), parse.MaxRequisites) {
		switch {
		case !spec.Takes(r.Kind):
			found.Rejected[policy.RejectKind]++
		case r.Kind == crawl.RequisiteStyle && imports >= crawl.MaxImports:
			found.Rejected[policy.RejectImports]++
		default:
			if _, why := found.Add(admit.Found{Href: r.Href}); why == "" && r.Kind == crawl.RequisiteStyle {
				imports++
			}
		}
	}
	found.LimitForeignHosts(crawl.MaxRequisiteHosts)
	if len(found.Cands) == 0 && found.Refused() == 0 {
		return "", nil
	}
	if _, err := f.Admit(ctx, ci, found); err != nil {
		if store.IsDataError(err) {
			return "admit stylesheet requisites: " + err.Error(), nil
		}
		return "", fmt.Errorf("admit requisites of %s: %w", u.URL, err)
	}
	return "", nil
}
