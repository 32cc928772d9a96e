package processing

import (
	"context"
	"fmt"
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

// backlogStore hands out a crawl's fetched pages to concurrent claims and records who claimed
// them, how many documents were saved at once, and which pages were finished.
type backlogStore struct {
	mu           sync.Mutex
	pending      []store.FetchedPage
	owners       map[string]int // claims by owner
	reclaims     map[string]int // claims that took back the owner's held pages, by owner
	finished     map[string]int // finishes by page hash
	inSave, most int
}

func (s *backlogStore) ClaimFetched(_ context.Context, _, owner string, limit int, _ time.Duration, reclaim bool) (store.ProcessingClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owners[owner]++
	if reclaim {
		s.reclaims[owner]++
	}
	n := min(limit, len(s.pending))
	c := store.ProcessingClaim{CrawlState: crawl.CrawlDone, Pages: s.pending[:n]}
	s.pending = s.pending[n:]
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

func (s *backlogStore) MarkDone(context.Context, string, []byte, string) error { return nil }

func (s *backlogStore) QueueRenders(context.Context, string, [][]byte) error { return nil }

func (s *backlogStore) FinishProcessed(_ context.Context, docs []store.Document) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range docs {
		s.finished[string(d.Hash)]++
	}
	return nil
}

// A backlog is processed in several lanes at once, each claiming under its own name (its
// first claim taking back what the same lane of a failed attempt held), and every page once;
// the run ends with the crawl.
func TestABacklogIsProcessedInLanes(t *testing.T) {
	const pages = 3*crawlProcessBatch + 50
	st := &backlogStore{owners: map[string]int{}, reclaims: map[string]int{}, finished: map[string]int{}}
	for i := range pages {
		h := fmt.Sprintf("%04d", i)
		st.pending = append(st.pending, store.FetchedPage{CrawlID: "c", Hash: []byte(h), URL: "http://a.test/" + h,
			BodyKey: "body", ContentType: "text/html"})
	}
	crawls := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: "TrawlerBot/1.0"}
	crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost}.WithDefaults())
	var admitted atomic.Int64
	stage := &Stage{Store: st, Renders: st, Crawls: crawls, Gate: make(chan struct{}, 8),
		Admit: func(_ context.Context, _ *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error) {
			admitted.Add(int64(len(d.Cands)))
			return admit.AdmitStats{New: len(d.Cands)}, nil
		},
		Body: func(context.Context, string, int64) ([]byte, error) { return []byte(htmlOf("page")), nil },
		StoreText: func(context.Context, string, []byte) (string, func(context.Context) error, error) {
			return "text", nil, nil
		}}
	var done atomic.Int64
	res, err := stage.Crawl(context.Background(), crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute}, &done)
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
	for owner := range st.owners {
		if st.reclaims[owner] == 0 {
			t.Errorf("lane %s never took back what it held before (reclaims %v)", owner, st.reclaims)
		}
	}
	if st.reclaims["o"] != 1 {
		t.Errorf("lane 0 took back its pages %d times, want once (its first claim)", st.reclaims["o"])
	}
}
