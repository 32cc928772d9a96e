package processing

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// backlogStore hands out a crawl's fetched pages to concurrent claims — first those an
// earlier attempt held that the claim takes back, then the rest, of those that began to wait
// at the claim's from or later — and records who claimed, what each claim took back and
// read from, how many documents were saved at once, and which pages were finished.
type backlogStore struct {
	mu           sync.Mutex
	pending      []store.FetchedPage
	waiting      map[string]time.Time // when each pending page began to wait (by hash; none: zero)
	froms        []time.Time
	held         []heldPage     // pages an earlier attempt's lanes held when it died
	owners       map[string]int // claims by owner
	backs        []store.TakeBack
	finished     map[string]int // finishes by page hash
	inSave, most int
	state        crawl.CrawlState // the crawl's state each claim reads ("": done)
}

type heldPage struct {
	page  store.FetchedPage
	owner string
	at    time.Time
}

func (s *backlogStore) ClaimFetched(_ context.Context, _, owner string, limit int, _ time.Duration, back store.TakeBack, from time.Time) (store.ProcessingClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owners[owner]++
	s.backs = append(s.backs, back)
	s.froms = append(s.froms, from)
	c := store.ProcessingClaim{CrawlState: crawl.CrawlDone}
	if s.state != "" {
		c.CrawlState = s.state
	}
	kept := s.held[:0]
	for _, h := range s.held {
		if len(c.Pages) < limit && slices.Contains(back.Owners, h.owner) && time.Since(h.at) > back.Ago {
			c.Pages = append(c.Pages, h.page)
		} else {
			kept = append(kept, h)
		}
	}
	s.held = kept
	slices.SortStableFunc(s.pending, func(a, b store.FetchedPage) int { // oldest first, as the store hands them out
		return s.waiting[string(a.Hash)].Compare(s.waiting[string(b.Hash)])
	})
	left := s.pending[:0]
	for _, p := range s.pending {
		at := s.waiting[string(p.Hash)]
		if len(c.Pages) < limit && !at.Before(from) {
			c.Pages = append(c.Pages, p)
			if at.After(c.Newest) {
				c.Newest = at
			}
		} else {
			left = append(left, p)
		}
	}
	s.pending = left
	return c, nil
}

func (s *backlogStore) SaveDocuments(_ context.Context, saves []store.DocumentSave) ([]*store.Dup, error) {
	s.mu.Lock()
	s.inSave++
	s.most = max(s.most, s.inSave)
	s.mu.Unlock()
	time.Sleep(30 * time.Millisecond) // a transaction's round trips: the other lanes go on meanwhile
	s.mu.Lock()
	s.inSave--
	s.mu.Unlock()
	return make([]*store.Dup, len(saves)), nil
}

func (s *backlogStore) SaveDocument(context.Context, store.Document, []store.Link, *store.NearDup) (*store.Dup, error) {
	return nil, nil
}

func (s *backlogStore) MarkDone(context.Context, string, []byte, string, string) error { return nil }

func (s *backlogStore) QueueRenders(context.Context, string, [][]byte) error { return nil }

func (s *backlogStore) FinishProcessed(_ context.Context, docs []store.Document) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range docs {
		s.finished[string(d.Hash)]++
	}
	return nil
}

// backlog is a stage over st for crawl "c", its pages all HTML.
func backlog(st *backlogStore) *Stage {
	crawls := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: "TrawlerBot/1.0"}
	crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost}.WithDefaults())
	return &Stage{Store: st, Renders: st, Crawls: crawls, Gate: make(chan struct{}, 8),
		Admit: func(_ context.Context, _ *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error) {
			return admit.AdmitStats{New: len(d.Cands)}, nil
		},
		Body: func(context.Context, string, int64) ([]byte, error) { return []byte(htmlOf("page")), nil },
		StoreText: func(context.Context, string, []byte) (string, func(context.Context) error, error) {
			return "text", nil, nil
		}}
}

func fetchedPages(from, n int) []store.FetchedPage {
	var pages []store.FetchedPage
	for i := from; i < from+n; i++ {
		h := fmt.Sprintf("%04d", i)
		pages = append(pages, store.FetchedPage{CrawlID: "c", Hash: []byte(h), URL: "http://a.test/" + h, BodyKey: "body", ContentType: "text/html"})
	}
	return pages
}

// A crawl being deleted is over: its processing run ends at its first empty claim, not when
// its time is up (its rows are on their way out).
func TestAProcessingRunEndsWithADeletedCrawl(t *testing.T) {
	st := &backlogStore{owners: map[string]int{}, finished: map[string]int{}, state: crawl.CrawlDeleting}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	var done atomic.Int64
	if _, err := backlog(st).Crawl(ctx, crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, &done); err != nil {
		t.Fatalf("a run over a crawl being deleted: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a run over a crawl being deleted took %v: want it to end at its first empty claim", took)
	}
}

// A backlog is processed in several lanes at once, each claiming under its own name, and
// every page once; the run ends with the crawl.
func TestABacklogIsProcessedInLanes(t *testing.T) {
	const pages = 3*crawlProcessBatch + 50
	st := &backlogStore{pending: fetchedPages(0, pages), owners: map[string]int{}, finished: map[string]int{}}
	var done atomic.Int64
	res, err := backlog(st).Crawl(context.Background(), crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, &done)
	if err != nil || res.Documents != pages || done.Load() != pages {
		t.Fatalf("result %+v, done %d, err %v; want %d documents", res, done.Load(), err, pages)
	}
	if len(st.finished) != pages {
		t.Errorf("%d pages finished, want %d", len(st.finished), pages)
	}
	for h, n := range st.finished {
		if n != 1 {
			t.Errorf("page %s finished %d times", h, n)
		}
	}
	if st.most < 2 || st.owners["o/1"] == 0 {
		t.Errorf("saves at once %d, claims by owner %v: want a backlog processed in lanes", st.most, st.owners)
	}
	// Every claim takes back what any lane of an earlier attempt held before this run began,
	// and so never what one of its own lanes holds now.
	for _, b := range st.backs {
		if !slices.Equal(b.Owners, []string{"o", "o/1", "o/2", "o/3"}) || b.Ago < time.Second {
			t.Fatalf("a claim took back %+v: want every lane's owner, held from before the run began", b)
		}
	}
}

// waitingPages are fetched pages from n on, the i-th of them waiting since at plus i ms.
func (s *backlogStore) waitingPages(from, n int, at time.Time) {
	for i, p := range fetchedPages(from, n) {
		s.pending = append(s.pending, p)
		s.waiting[string(p.Hash)] = at.Add(time.Duration(i) * time.Millisecond)
	}
}

// claims makes n claims of r in a row, and returns how many pages each took.
func claims(t *testing.T, r *crawlRun, n int) []int {
	t.Helper()
	var got []int
	for range n {
		c, err := r.claim(context.Background(), "o")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, len(c.Pages))
	}
	return got
}

// While a backlog lasts a run's claims read from after the newest page it claimed, not again
// past what its other lanes hold; a page recorded late, its wait begun before that newest
// one, is still claimed: a claim from there that comes back short is topped up from the start.
func TestClaimsReadFromTheNewestPageClaimedAndStillFindALatePage(t *testing.T) {
	st := &backlogStore{waiting: map[string]time.Time{}, owners: map[string]int{}, finished: map[string]int{}}
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	st.waitingPages(0, 2*crawlProcessBatch, t0)
	r := &crawlRun{p: backlog(st), cp: crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, began: time.Now()}
	got := claims(t, r, 2)
	st.waitingPages(1000, 1, t0.Add(-time.Hour)) // recorded late
	got = append(got, claims(t, r, 1)...)
	if !slices.Equal(got, []int{crawlProcessBatch, crawlProcessBatch, 1}) {
		t.Errorf("claims took %v pages; want the backlog in two, then the late page", got)
	}
	want := []time.Time{{}, t0.Add((crawlProcessBatch - 1) * time.Millisecond), t0.Add((2*crawlProcessBatch - 1) * time.Millisecond), {}}
	if !slices.EqualFunc(st.froms, want, time.Time.Equal) {
		t.Errorf("claims read from %v; want %v", st.froms, want)
	}
}

// A claim from the start (every crawlRescan) that finds a full batch left behind, all older
// than where claims read from, is followed by another, until one reaches past it.
func TestARescanThatFindsPagesLeftBehindGoesOn(t *testing.T) {
	st := &backlogStore{waiting: map[string]time.Time{}, owners: map[string]int{}, finished: map[string]int{}}
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	st.waitingPages(0, crawlProcessBatch, t0)
	r := &crawlRun{p: backlog(st), cp: crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, began: time.Now()}
	got := claims(t, r, 1)
	st.waitingPages(1000, 2*crawlProcessBatch+50, t0.Add(-time.Hour)) // a dead holder's, say
	st.waitingPages(2000, crawlProcessBatch, t0.Add(time.Second))
	r.rescanAt = time.Time{} // the rescan is due
	got = append(got, claims(t, r, 4)...)
	if !slices.Equal(got, []int{crawlProcessBatch, crawlProcessBatch, crawlProcessBatch, crawlProcessBatch, 50}) {
		t.Errorf("claims took %v pages; want every page", got)
	}
	newest := t0.Add(time.Second + (crawlProcessBatch-50-1)*time.Millisecond)
	want := []time.Time{{}, {}, {}, {}, newest, {}}
	if !slices.EqualFunc(st.froms, want, time.Time.Equal) {
		t.Errorf("claims read from %v; want %v: from the start until a claim reaches past the newest page claimed", st.froms, want)
	}
}

// A retried run takes back at once what its dead predecessor's lanes held, even a lane it
// does not start (its backlog is short): no page waits out its hold.
func TestARetryTakesBackEveryLanesPages(t *testing.T) {
	st := &backlogStore{pending: fetchedPages(0, 20), owners: map[string]int{}, finished: map[string]int{}}
	for i, p := range fetchedPages(100, 30) {
		st.held = append(st.held, heldPage{page: p, owner: []string{"o", "o/2"}[i%2], at: time.Now().Add(-time.Minute)})
	}
	var done atomic.Int64
	res, err := backlog(st).Crawl(context.Background(), crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, &done)
	if err != nil || res.Documents != 50 || len(st.held) != 0 || len(st.finished) != 50 {
		t.Fatalf("result %+v, %v: %d pages still held, %d finished; want all 50 processed", res, err, len(st.held), len(st.finished))
	}
	if st.owners["o/2"] != 0 {
		t.Errorf("claims by owner %v: lane 2 was not needed", st.owners)
	}
}
