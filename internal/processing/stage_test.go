package processing

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/membudget"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// fakeStore records what the process stage writes, in order.
type fakeStore struct {
	steps    []string // "save", "admit", "finish", "done:<url hash>", "renders"
	docs     []store.Document
	links    int
	kinds    map[string]int    // links saved, by kind
	done     map[string]string // reason by page hash
	finished []store.Document
	claims   [][]store.FetchedPage
	state    crawl.CrawlState
	batchErr error                     // what SaveDocuments fails with
	badDoc   func(store.Document) bool // SaveDocument refuses these as data errors
}

func (s *fakeStore) ClaimFetched(_ context.Context, _, _ string, _ int, _ time.Duration, _ store.TakeBack, _ time.Time) (store.ProcessingClaim, error) {
	var c store.ProcessingClaim
	c.CrawlState = s.state
	if len(s.claims) > 0 {
		c.Pages, s.claims = s.claims[0], s.claims[1:]
	}
	return c, nil
}

func (s *fakeStore) SaveDocuments(_ context.Context, saves []store.DocumentSave) ([]*store.Dup, error) {
	if s.batchErr != nil {
		return nil, s.batchErr
	}
	s.steps = append(s.steps, "save")
	for _, sv := range saves {
		s.docs, s.links = append(s.docs, sv.Doc), s.links+len(sv.Links)
		for _, l := range sv.Links {
			if s.kinds == nil {
				s.kinds = map[string]int{}
			}
			s.kinds[l.Kind]++
		}
	}
	return make([]*store.Dup, len(saves)), nil
}

func (s *fakeStore) SaveDocument(_ context.Context, d store.Document, links []store.Link, _ *store.NearDup) (*store.Dup, error) {
	if s.badDoc != nil && s.badDoc(d) {
		return nil, &pgconn.PgError{Code: "22021", Message: "invalid byte sequence"}
	}
	s.steps = append(s.steps, "save")
	s.docs, s.links = append(s.docs, d), s.links+len(links)
	return nil, nil
}

func (s *fakeStore) MarkDone(_ context.Context, _ string, hash []byte, _, reason string) error {
	if s.done == nil {
		s.done = map[string]string{}
	}
	s.done[string(hash)] = reason
	s.steps = append(s.steps, "done:"+string(hash))
	return nil
}

func (s *fakeStore) QueueRenders(_ context.Context, _ string, hashes [][]byte) error {
	if len(hashes) > 0 {
		s.steps = append(s.steps, "renders")
	}
	return nil
}

func (s *fakeStore) FinishProcessed(_ context.Context, docs []store.Document) error {
	s.steps = append(s.steps, "finish")
	s.finished = append(s.finished, docs...)
	return nil
}

// fixture is a stage over a fake store, a crawl "c" confined to a.test, bodies served from a
// map, texts stored in memory, and admissions recorded.
type fixture struct {
	st       *fakeStore
	stage    *Stage
	bodies   map[string]string
	texts    []string
	admitted []store.Candidate
	rejected map[string]int
	events   []string // "text", "admit" in the order they happened, with the store's steps
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{st: &fakeStore{}, bodies: map[string]string{}, rejected: map[string]int{}}
	crawls := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: "TrawlerBot/1.0"}
	crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost}.WithDefaults())
	f.stage = &Stage{Store: f.st, Renders: f.st, Crawls: crawls,
		Admit: func(_ context.Context, _ *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error) {
			f.st.steps = append(f.st.steps, "admit")
			f.admitted = append(f.admitted, d.Cands...)
			for r, n := range d.Rejected {
				f.rejected[r] += n
			}
			return admit.AdmitStats{New: len(d.Cands)}, nil
		},
		Body: func(_ context.Context, ref string, _ int64) ([]byte, error) { return []byte(f.bodies[ref]), nil },
		StoreText: func(_ context.Context, _ string, text []byte) (string, func(context.Context) error, error) {
			f.texts = append(f.texts, string(text))
			key := "text/" + string(rune('0'+len(f.texts)))
			return key, func(context.Context) error { f.st.steps = append(f.st.steps, "text stored"); return nil }, nil
		}}
	return f
}

// page adds a fetched HTML page of crawl c under hash h.
func (f *fixture) page(h, url, ctype, body string) crawl.PageRef {
	f.bodies["body/"+h] = body
	return crawl.PageRef{CrawlID: "c", Hash: []byte(h), URL: url, BodyKey: "body/" + h, ContentType: ctype, ContentHash: []byte(h), Size: int64(len(body))}
}

const html = `<html><head><title>%s</title></head><body><p>Some words about %s, enough to be a page of its own.</p>
<a href="/next">next</a> <a href="http://elsewhere.test/x">away</a> <a href="/nofollow" rel="nofollow">no</a></body></html>`

func htmlOf(title string) string { return strings.ReplaceAll(html, "%s", title) }

// A batch's texts are stored before its documents (a document names its text), its
// documents saved in one transaction, its links admitted (out-of-scope ones counted by
// reason, nofollow ones recorded but not admitted), and its pages finished only after.
func TestPagesAreSavedAdmittedThenFinished(t *testing.T) {
	f := newFixture(t)
	pages := []crawl.PageRef{f.page("1", "http://a.test/", "text/html", htmlOf("one")), f.page("2", "http://a.test/two", "text/html", htmlOf("two"))}
	var done atomic.Int64
	var beats []int64
	f.stage.Hooks.Beat = func(n int64) { beats = append(beats, n) }
	res, err := f.stage.Pages(context.Background(), "a.test", pages, &done)
	if err != nil || res.Documents != 2 || done.Load() != 2 || !slices.Equal(beats, []int64{1, 2}) {
		t.Fatalf("result %+v, done %d, beats %v, err %v", res, done.Load(), beats, err)
	}
	if want := []string{"text stored", "text stored", "save", "admit", "finish"}; !slices.Equal(f.st.steps, want) {
		t.Errorf("steps %v, want %v", f.st.steps, want)
	}
	// One admission for the batch: /next from each page (the frontier's unique index counts
	// the second as a duplicate), the other host refused as out of scope, nofollow left out.
	if len(f.admitted) != 2 || f.admitted[0].URL != "http://a.test/next" || f.admitted[1].URL != "http://a.test/next" || f.rejected["out of scope"] != 2 {
		t.Errorf("admitted %+v, rejected %v", f.admitted, f.rejected)
	}
	if f.st.links != 6 || len(f.st.finished) != 2 || f.st.docs[0].Title != "one" || f.st.docs[0].TextKey == "" {
		t.Errorf("links %d, finished %d, first doc %+v", f.st.links, len(f.st.finished), f.st.docs[0])
	}
}

// A body processing does not read is set aside (done, with the reason) without holding up the
// rest of the batch; a noindex page keeps no text.
func TestUnreadableAndNoindexPages(t *testing.T) {
	f := newFixture(t)
	pages := []crawl.PageRef{
		f.page("1", "http://a.test/bin", "application/octet-stream", "\x00\x01\x02binary"),
		f.page("2", "http://a.test/quiet", "text/html", strings.Replace(htmlOf("quiet"), "<head>", `<head><meta name="robots" content="noindex">`, 1)),
	}
	res, err := f.stage.Pages(context.Background(), "a.test", pages, new(atomic.Int64))
	if err != nil || res.Failed != 1 || res.Documents != 1 {
		t.Fatalf("result %+v %v", res, err)
	}
	if reason := f.st.done["1"]; !strings.Contains(reason, "not read") {
		t.Errorf("the binary page is done with %q", reason)
	}
	if len(f.texts) != 0 || !f.st.docs[0].NoIndex || f.st.docs[0].TextKey != "" {
		t.Errorf("noindex page: texts %q, document %+v", f.texts, f.st.docs[0])
	}
}

// When Postgres refuses what one page holds, the batch is saved page by page and that page
// alone is set aside; the others' links are admitted.
func TestAnUnstorableDocumentCostsOnlyItsPage(t *testing.T) {
	f := newFixture(t)
	f.st.batchErr = &pgconn.PgError{Code: "22021"}
	f.st.badDoc = func(d store.Document) bool { return string(d.Hash) == "2" }
	var counted []string
	f.stage.Hooks.Count = func(name string, n int64, _ ...string) { counted = append(counted, name) }
	pages := []crawl.PageRef{f.page("1", "http://a.test/", "text/html", htmlOf("one")), f.page("2", "http://a.test/two", "text/html", htmlOf("two"))}
	res, err := f.stage.Pages(context.Background(), "a.test", pages, new(atomic.Int64))
	if err != nil || res.Documents != 1 || res.Failed != 1 || !strings.HasPrefix(f.st.done["2"], "unstorable document") {
		t.Fatalf("result %+v, done %v, err %v", res, f.st.done, err)
	}
	if len(f.st.finished) != 1 || string(f.st.finished[0].Hash) != "1" || !slices.Contains(counted, "trawler_unstorable") {
		t.Errorf("finished %d (%v), metrics %v", len(f.st.finished), f.st.finished, counted)
	}
}

// A crawl's processing claims and processes pages until the crawl is over and nothing is
// left; told the worker is stopping while it waits for more, it hands itself on.
func TestCrawlProcessingEndsWithTheCrawlOrHandsItselfOn(t *testing.T) {
	f := newFixture(t)
	f.bodies["body/1"] = htmlOf("one")
	f.st.claims = [][]store.FetchedPage{{{CrawlID: "c", Hash: []byte("1"), URL: "http://a.test/", BodyKey: "body/1", ContentType: "text/html"}}}
	f.st.state = crawl.CrawlDone
	var done atomic.Int64
	res, err := f.stage.Crawl(context.Background(), crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, &done)
	if err != nil || res.Documents != 1 || done.Load() != 1 {
		t.Fatalf("a finished crawl's last page: %+v, done %d, %v", res, done.Load(), err)
	}
	f.st.state = crawl.CrawlRunning
	stopping := make(chan struct{})
	close(stopping)
	f.stage.Stopping = stopping
	if _, err := f.stage.Crawl(context.Background(), crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, &done); err != ErrStopping {
		t.Errorf("a stopping worker's processing returned %v, want ErrStopping", err)
	}
}

// A run Temporal no longer knows (timed out while it ran) finishes the batch in hand and ends,
// claiming no more: its retry takes over.
func TestAnOrphanedCrawlProcessingFinishesWhatItHoldsAndEnds(t *testing.T) {
	f := newFixture(t)
	f.bodies["body/1"], f.bodies["body/2"] = htmlOf("one"), htmlOf("two")
	f.st.claims = [][]store.FetchedPage{
		{{CrawlID: "c", Hash: []byte("1"), URL: "http://a.test/1", BodyKey: "body/1", ContentType: "text/html"}},
		{{CrawlID: "c", Hash: []byte("2"), URL: "http://a.test/2", BodyKey: "body/2", ContentType: "text/html"}},
	}
	f.st.state = crawl.CrawlRunning
	orphaned := make(chan struct{})
	f.stage.Orphaned = orphaned
	admitAll := f.stage.Admit
	f.stage.Admit = func(ctx context.Context, c *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error) {
		close(orphaned) // told while the first batch is in hand
		return admitAll(ctx, c, d)
	}
	var done atomic.Int64
	began := time.Now()
	res, err := f.stage.Crawl(context.Background(), crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, &done)
	if err != nil || res.Documents != 1 || len(f.st.finished) != 1 || string(f.st.finished[0].Hash) != "1" {
		t.Fatalf("orphaned run: %+v, finished %v, %v; want the batch in hand done", res, f.st.finished, err)
	}
	if len(f.st.claims) != 1 || time.Since(began) > 10*time.Second {
		t.Errorf("orphaned run claimed %d more batches and took %v; want it to end without claiming", 1-len(f.st.claims), time.Since(began))
	}
}

// Links a browser follows beyond anchors (an iframe, a meta refresh, rel=next, an hreflang
// alternate) are admitted through the one path and recorded with their kind, as is the
// canonical link.
func TestEveryLinkKindIsAdmittedAndRecorded(t *testing.T) {
	f := newFixture(t)
	body := `<html><head><title>kinds</title><meta http-equiv="refresh" content="0; url=/moved">
<link rel="next" href="/p2"><link rel="alternate" hreflang="fr" href="/fr/"><link rel="canonical" href="/canon">
</head><body><p>Enough words about link kinds to make a page of its own here.</p>
<iframe src="/frame"></iframe><a href="/anchor">a</a></body></html>`
	var done atomic.Int64
	if _, err := f.stage.Pages(context.Background(), "a.test", []crawl.PageRef{f.page("k", "http://a.test/", "text/html", body)}, &done); err != nil {
		t.Fatal(err)
	}
	var admitted []string
	for _, c := range f.admitted {
		admitted = append(admitted, c.URL)
	}
	slices.Sort(admitted)
	want := []string{"http://a.test/anchor", "http://a.test/canon", "http://a.test/fr/", "http://a.test/frame", "http://a.test/moved", "http://a.test/p2"}
	if !slices.Equal(admitted, want) {
		t.Errorf("admitted %v; want %v", admitted, want)
	}
	for _, kind := range []string{"a", "iframe", "refresh", "next", "hreflang", "canonical"} {
		if f.st.kinds[kind] != 1 {
			t.Errorf("links saved by kind %v: want one %q", f.st.kinds, kind)
		}
	}
}

// Each page holds its parse cost in the process's parse budget from before its body is read
// until it is parsed, and gives it back: a batch ends with the budget empty.
func TestAPageHoldsItsParseCostWhileParsed(t *testing.T) {
	f := newFixture(t)
	budget := membudget.New("test-parse", 1<<30)
	f.stage.Parse = budget
	var heldAtRead []int64
	read := f.stage.Body
	f.stage.Body = func(ctx context.Context, ref string, limit int64) ([]byte, error) {
		heldAtRead = append(heldAtRead, budget.Held())
		return read(ctx, ref, limit)
	}
	pages := []crawl.PageRef{f.page("1", "http://a.test/", "text/html", htmlOf("one")), f.page("2", "http://a.test/two", "text/html", htmlOf("two!"))}
	var done atomic.Int64
	if _, err := f.stage.Pages(context.Background(), "a.test", pages, &done); err != nil {
		t.Fatal(err)
	}
	want := []int64{ParseCost(pages[0].Size, 10<<20), ParseCost(pages[1].Size, 10<<20)}
	if !slices.Equal(heldAtRead, want) || budget.Held() != 0 {
		t.Fatalf("held %v as the bodies were read (want %v), %d after", heldAtRead, want, budget.Held())
	}
}
