package processing

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/parse"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
)

// Pages processes a batch of pages, then admits all their links in one batch per crawl (one
// wake-up per affected host), counting each page in done. Every step is idempotent, so a
// retried attempt simply processes the whole batch again. host is "" for a crawl's
// processing (its pages come from many hosts).
func (p *Stage) Pages(ctx context.Context, host string, pages []crawl.PageRef, done *atomic.Int64) (crawl.ProcessResult, error) {
	var res crawl.ProcessResult
	log := p.Hooks.log()
	// Per crawl, in the order met: links to admit (and refused ones by reason), documents to
	// finish once they are admitted, pages to render.
	type crawlBatch struct {
		found   *admit.Discovery
		docs    []store.Document
		renders [][]byte // pages the crawl renders (spec.render)
	}
	batches := map[string]*crawlBatch{}
	var crawlOrder []string
	// Parse every page first (the CPU-bound part, behind the gate), wait for their texts to be
	// stored, then save the documents in one transaction, admit their links, and finish them.
	// Each step's time goes to the batch's log line: a batch is a serial chain, and which
	// link holds it (parsing, the texts' segment, Postgres) is what a slow crawl asks.
	began := time.Now()
	preps, err := p.prepareAll(ctx, pages, &res, done)
	if err != nil {
		return res, err
	}
	parsed := time.Now()
	// The texts first: a document row names its text's segment, so the segment must exist
	// before the row does (a crash in between would leave rows naming text never stored).
	if err := textsStored(ctx, preps); err != nil {
		return res, err
	}
	textsAt := time.Now()
	saved, err := p.saveAll(ctx, preps, &res)
	if err != nil {
		return res, err
	}
	savedAt := time.Now()
	for i, pp := range preps {
		cb := batches[pp.page.CrawlID]
		if cb == nil {
			cb = &crawlBatch{found: &admit.Discovery{Rejected: map[string]int{}}}
			batches[pp.page.CrawlID] = cb
			crawlOrder = append(crawlOrder, pp.page.CrawlID)
		}
		if !saved[i] { // its links are not admitted; what was refused was refused all the same
			cb.found.Merge(&admit.Discovery{Rejected: pp.found.Rejected})
			continue
		}
		cb.docs = append(cb.docs, pp.doc)
		cb.found.Merge(pp.found)
		if pp.render {
			cb.renders = append(cb.renders, pp.page.Hash)
		}
	}
	var docs []store.Document
	for _, id := range crawlOrder {
		cb := batches[id]
		ci, err := p.Crawls.Get(ctx, id)
		if err != nil {
			return res, err
		}
		st, err := p.Admit(ctx, ci, cb.found)
		if err != nil {
			return res, err
		}
		// Queued before the pages are done, so the crawl never looks drained in between.
		if err := p.Renders.QueueRenders(ctx, id, cb.renders); err != nil {
			return res, err
		}
		docs = append(docs, cb.docs...)
		res.Admitted += st.New
		res.Duplicates += st.Duplicates
		res.Rejected += st.OverBudget
	}
	admittedAt := time.Now()
	// The pages are done only once their links are admitted: until then a crash leaves them
	// fetched, and their retry saves their documents again.
	if err := p.Store.FinishProcessed(ctx, docs); err != nil {
		return res, err
	}
	failpoint.Hit(failpoint.ProcessFinishing)
	ms := func(from, to time.Time) int64 { return to.Sub(from).Milliseconds() }
	log.Info("processed pages", "host", host, "crawls", crawlOrder, "pages", len(pages), "documents", res.Documents,
		"duplicates", res.DuplicateDocs, "admitted", res.Admitted, "rejected", res.Rejected, "failed", res.Failed,
		"parseMs", ms(began, parsed), "textsMs", ms(parsed, textsAt), "saveMs", ms(textsAt, savedAt),
		"admitMs", ms(savedAt, admittedAt), "finishMs", ms(admittedAt, time.Now()))
	return res, nil
}

// prepareAll prepares pages behind the gate, heartbeating done after each.
func (p *Stage) prepareAll(ctx context.Context, pages []crawl.PageRef, res *crawl.ProcessResult, done *atomic.Int64) ([]*prepared, error) {
	if p.Gate != nil {
		select {
		case p.Gate <- struct{}{}:
			defer func() { <-p.Gate }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var preps []*prepared
	for _, page := range pages {
		ci, err := p.Crawls.Get(ctx, page.CrawlID)
		if err != nil {
			return nil, err
		}
		pp, err := p.preparePage(ctx, ci, page, res)
		if err != nil {
			return nil, err
		}
		if pp != nil {
			preps = append(preps, pp)
		}
		p.Hooks.beat(done.Add(1))
	}
	return preps, nil
}

// prepared is a parsed page ready to be saved.
type prepared struct {
	ci     *policy.Crawl
	page   crawl.PageRef
	doc    store.Document
	links  []store.Link
	near   *store.NearDup              // its near-duplicate detection (nil: none)
	found  *admit.Discovery            // its links to admit, and those refused
	render bool                        // the crawl renders this page too (spec.render)
	stored func(context.Context) error // returns once the text's segment is stored (nil: nothing to wait for)
}

// preparePage parses one page, puts its text into the current text segment and decides its
// links; nil when the page cannot be processed (it is marked done with the reason).
func (p *Stage) preparePage(ctx context.Context, ci *policy.Crawl, page crawl.PageRef, res *crawl.ProcessResult) (*prepared, error) {
	spec := ci.Spec
	// Held until the page is parsed: its body and tree are garbage then (the text kept is
	// a small part of them).
	hold, err := p.Parse.Take(ctx, ParseCost(page.Size, spec.MaxBodyBytes))
	if err != nil {
		return nil, err
	}
	defer hold.Release()
	body, err := p.Body(ctx, page.BodyKey, spec.MaxBodyBytes+1)
	if err != nil {
		return nil, err
	}
	pageURL := page.URL
	if page.FinalURL != "" {
		pageURL = page.FinalURL
	}
	pu, err := url.Parse(pageURL)
	if err != nil {
		res.Failed++
		return nil, p.Store.MarkDone(ctx, page.CrawlID, page.Hash, page.BodyKey, "unparseable page URL")
	}
	ex, err := p.extract(ctx, body, page.ContentType, pu, spec.MaxOutlinks*4, requisitesRead(spec.Requisites), ci.Token, ci.Extract)
	if errors.Is(err, errNotRead) {
		res.Failed++
		return nil, p.Store.MarkDone(ctx, page.CrawlID, page.Hash, page.BodyKey, err.Error())
	}
	if err != nil {
		return nil, err
	}
	doc := store.Document{CrawlID: page.CrawlID, Hash: page.Hash, ContentHash: page.ContentHash, BodyKey: page.BodyKey,
		Title: ex.title, Lang: ex.lang, Charset: ex.charset, ContentType: page.ContentType, Size: page.Size,
		Deliver: len(spec.Outputs) > 0}
	if ex.fields != nil {
		if doc.Extract, err = json.Marshal(ex.fields); err != nil {
			return nil, fmt.Errorf("process: extracted fields of %s: %w", pageURL, err)
		}
	}
	header := robots.ParseList(page.RobotsTag)
	directives := header.Merge(ex.meta)
	doc.NoIndex, doc.NoFollow, doc.RobotsSignal = directives.NoIndex, directives.NoFollow, robotsSignal(header, ex.meta)
	var stored func(context.Context) error
	if !doc.NoIndex && ex.text != "" {
		if doc.TextKey, stored, err = p.StoreText(ctx, page.CrawlID, []byte(ex.text)); err != nil {
			return nil, err
		}
	}
	doc.TextBytes = len(ex.text)
	var near *store.NearDup
	if ci.Dedup != nil {
		near = NearDup(ci.Dedup, ex.text)
	}
	var links []store.Link
	found := admit.Discover(p.Crawls, ci, ex.base, admit.From{Depth: page.Depth + 1, Source: ex.source}, spec.MaxOutlinks)
	follow := func(l parse.Link, published time.Time) {
		nofollow := l.NoFollow || doc.NoFollow
		c, why := found.Add(admit.Found{Href: l.Href, NoFollow: nofollow, Published: published})
		if c.Key != "" && why != admit.FoundAgain { // the graph has one link per page to each key, however spelled
			links = append(links, store.Link{From: page.Hash, To: c.Hash, NoFollow: nofollow, Kind: cmp.Or(l.Kind, parse.LinkAnchor)})
		}
	}
	for i, l := range ex.links {
		var published time.Time
		if i < len(ex.dates) {
			published = ex.dates[i]
		}
		follow(l, published)
	}
	if ex.canonical != "" {
		if n, err := p.Crawls.Norm.Normalize(ex.canonical); err == nil {
			doc.Canonical = n // recorded by its key, and crawled like a link, as written
			follow(parse.Link{Href: ex.canonical, Kind: parse.LinkCanonical}, time.Time{})
		}
	}
	res.Rejected += found.Refused()
	doc.LinksOut = len(links)
	if embeds := p.requisites(ci, page, ex); embeds != nil {
		for _, c := range embeds.Cands {
			links = append(links, store.Link{From: page.Hash, To: c.Hash, Kind: parse.LinkEmbed})
		}
		res.Rejected += embeds.Refused()
		found.Merge(embeds)
	}
	// The recrawl schedule learns from this fetch: changed pages come back sooner.
	if next := spec.Recrawl.Next(time.Duration(page.RecrawlS)*time.Second, page.Change, time.Duration(page.HintS)*time.Second); next > 0 {
		at := time.Now().Add(next)
		doc.RecrawlAt, doc.RecrawlS = &at, int(next/time.Second)
	}
	render := ex.kind == content.HTML && ci.Renders(page.URL)
	return &prepared{ci: ci, page: page, doc: doc, links: links, near: near, found: found, stored: stored, render: render}, nil
}

// textsStored waits until the texts of prepared pages are stored.
func textsStored(ctx context.Context, preps []*prepared) error {
	for _, pp := range preps {
		if pp.stored != nil {
			if err := pp.stored(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// saveAll stores the prepared pages' documents and links in one transaction and says which
// were saved. When Postgres refuses what one of them holds, they are saved one by one, and
// that page alone is set aside (done, with the reason).
func (p *Stage) saveAll(ctx context.Context, preps []*prepared, res *crawl.ProcessResult) ([]bool, error) {
	saved := make([]bool, len(preps))
	if len(preps) == 0 {
		return saved, nil
	}
	saves := make([]store.DocumentSave, len(preps))
	for i, pp := range preps {
		saves[i] = store.DocumentSave{Doc: pp.doc, Links: pp.links, Near: pp.near}
	}
	dups, err := p.Store.SaveDocuments(ctx, saves)
	if err == nil {
		for i, pp := range preps {
			saved[i] = true
			p.counted(ctx, pp, dups[i], res)
		}
		return saved, nil
	}
	if !store.IsDataError(err) {
		return nil, err
	}
	for i, pp := range preps {
		dup, err := p.Store.SaveDocument(ctx, pp.doc, pp.links, pp.near)
		if store.IsDataError(err) { // what the page holds cannot be stored: this page only, not the batch
			p.Hooks.log().Warn("document not storable: marking the page done", "crawl", pp.page.CrawlID, "url", pp.page.URL, "error", err)
			p.Hooks.Count.Add(metrics.Unstorable, 1)
			res.Failed++
			if err := p.Store.MarkDone(ctx, pp.page.CrawlID, pp.page.Hash, pp.page.BodyKey, "unstorable document: "+err.Error()); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		saved[i] = true
		p.counted(ctx, pp, dup, res)
	}
	return saved, nil
}

// counted counts a saved document.
func (p *Stage) counted(ctx context.Context, pp *prepared, dup *store.Dup, res *crawl.ProcessResult) {
	failpoint.Hit(failpoint.DocumentSaved)
	res.Documents++
	res.Links += len(pp.links)
	p.Hooks.Count.Add(metrics.Documents, 1)
	if dup != nil {
		p.Hooks.Count.Add(metrics.Duplicates, 1, "kind", dup.Kind)
		res.DuplicateDocs++
		if dup.Kind != store.DupExact {
			res.NearDuplicates++
		}
	}
}

// robotsSignal names where a page's robots directives came from, for operators:
// "x-robots-tag: noindex; meta: nofollow".
func robotsSignal(header, meta robots.Directives) string {
	var parts []string
	if header.Any() {
		parts = append(parts, "x-robots-tag: "+header.String())
	}
	if meta.Any() {
		parts = append(parts, "meta: "+meta.String())
	}
	return strings.Join(parts, "; ")
}

// requisitesRead is how many requisites a page is parsed for: none when the crawl takes
// none, else as many as the parser keeps (the kinds and the per-page cap are judged after).
func requisitesRead(r *crawl.Requisites) int {
	if r.PerPage() == 0 {
		return 0
	}
	return parse.MaxRequisites
}

// requisites judges the page's requisites (crawl.Requisites): the files a browser needs to
// show it, admitted with its links as URLs of their own hosts, archived and never followed.
// nil when the crawl takes none or the page names none.
func (p *Stage) requisites(ci *policy.Crawl, page crawl.PageRef, ex *extracted) *admit.Discovery {
	spec := ci.Spec.Requisites
	if len(ex.reqs) == 0 || spec.PerPage() == 0 {
		return nil
	}
	embeds := admit.Discover(p.Crawls, ci, ex.base, admit.From{Depth: page.Depth, Source: crawl.SourceEmbed}, spec.PerPage())
	for _, r := range ex.reqs {
		if !spec.Takes(r.Kind) {
			embeds.Rejected[policy.RejectKind]++
			continue
		}
		embeds.Add(admit.Found{Href: r.Href})
	}
	embeds.LimitForeignHosts(crawl.MaxRequisiteHosts)
	return embeds
}
