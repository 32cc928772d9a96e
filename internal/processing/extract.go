package processing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/trawlerdev/trawler/internal/extract"

	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/parse"
	"github.com/trawlerdev/trawler/internal/robots"
)

// extracted is what processing reads from a body, whatever its kind.
type extracted struct {
	kind      content.Kind
	title     string
	text      string
	lang      string
	charset   string
	base      *url.URL // what relative links resolve against
	links     []parse.Link
	reqs      []parse.Requisite // the files a browser needs to show it (HTML only)
	canonical string
	meta      robots.Directives // the document's own robots directives (HTML's meta elements)
	source    crawl.Source      // how its links enter the frontier
	dates     []time.Time       // per link, when its feed item was published or updated (feeds only)
	fields    extract.Result    // what the crawl's extraction rules found (HTML only; nil: none matched)
}

// errNotRead is a body processing does not read (its reason is the error's text).
var errNotRead = errors.New("not read")

// extract reads a body by what it is (content.Sniff: the bytes win where the header lies),
// keeping at most maxLinks links; token is the crawl's robots product token. An error wrapping
// errNotRead fails that document only; others are ours (retry).
func (p *Stage) extract(ctx context.Context, body []byte, contentType string, pu *url.URL, maxLinks, maxRequisites int, token string, rules *extract.Rules) (*extracted, error) {
	kind := content.Sniff(contentType, body)
	ex := &extracted{kind: kind, base: pu, source: crawl.SourceLink}
	switch kind {
	case content.HTML:
		var visit func(*goquery.Document)
		if page := pu.String(); rules.Matches(page) { // rules run on the tree parsed once for all
			visit = func(doc *goquery.Document) { ex.fields = rules.Run(page, doc) }
		}
		parsed, err := parse.ParseWith(body, contentType, pu, maxLinks, maxRequisites, token, visit)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNotRead, err)
		}
		if parsed.Binary {
			return nil, fmt.Errorf("%w: binary content served as HTML", errNotRead)
		}
		ex.title, ex.text, ex.lang, ex.charset, ex.base = parsed.Title, parsed.Text, parsed.Lang, parsed.Charset, parsed.Base
		ex.links, ex.canonical, ex.meta, ex.reqs = parsed.Links, parsed.Canonical, parsed.Meta, parsed.Requisites
	case content.Text:
		ex.title, ex.text, ex.charset = content.PlainText(body, contentType)
	case content.Feed:
		feed, err := content.ParseFeed(body, contentType, pu, maxLinks)
		if err != nil {
			return nil, fmt.Errorf("%w: feed: %v", errNotRead, err)
		}
		ex.title, ex.source = feed.Title, crawl.SourceFeed
		for _, it := range feed.Items {
			ex.links = append(ex.links, parse.Link{Href: it.URL, Kind: parse.LinkFeedItem})
			ex.dates = append(ex.dates, it.Date)
		}
	case content.PDF:
		doc, err := content.ReadPDF(ctx, body, p.pdfLimits())
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %v", errNotRead, err)
		}
		ex.title, ex.text = doc.Title, doc.Text
		for _, l := range doc.Links {
			if len(ex.links) < maxLinks {
				ex.links = append(ex.links, parse.Link{Href: l, Kind: parse.LinkAnchor})
			}
		}
	default:
		return nil, fmt.Errorf("%w: %s", errNotRead, content.MediaType(contentType, body))
	}
	return ex, nil
}

func (p *Stage) pdfLimits() content.PDFLimits {
	if p.PDF.Pages > 0 {
		return p.PDF
	}
	return content.DefaultPDFLimits
}
