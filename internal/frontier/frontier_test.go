package frontier

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// fakeStore keeps the crawls it created (their specs as recorded) and answers the sweep.
type fakeStore struct {
	specs      map[string]crawl.Spec
	progress   crawl.CrawlProgress
	stale      []string
	staleSince time.Time // the cutoff the sweep asked for
	fetched    []store.FetchedPage
	released   []string
}

func (s *fakeStore) CreateCrawl(_ context.Context, id string, spec crawl.Spec) (crawl.Spec, error) {
	if old, ok := s.specs[id]; ok {
		return old, nil // an existing record is kept
	}
	s.specs[id] = spec
	return spec, nil
}

func (s *fakeStore) CrawlLive(_ context.Context, id string) (bool, bool, error) {
	_, ok := s.specs[id]
	return ok, false, nil
}

func (s *fakeStore) CrawlSpec(_ context.Context, id string, dst any) error {
	b, _ := json.Marshal(s.specs[id])
	return json.Unmarshal(b, dst)
}

func (s *fakeStore) CrawlProgress(context.Context, string) (crawl.CrawlProgress, error) {
	return s.progress, nil
}

func (s *fakeStore) SetCrawlState(context.Context, string, crawl.CrawlState) error { return nil }

func (s *fakeStore) StaleHosts(_ context.Context, _ string, before time.Time, limit int) ([]string, error) {
	s.staleSince = before
	return s.stale[:min(limit, len(s.stale))], nil
}

func (s *fakeStore) StaleFetched(_ context.Context, _ string, before time.Time, limit int) ([]store.FetchedPage, error) {
	s.staleSince = before
	return s.fetched[:min(limit, len(s.fetched))], nil
}

func (s *fakeStore) ReleaseOwned(_ context.Context, host string, owners []string) error {
	s.released = append(s.released, host+":"+owners[0])
	return nil
}

type fixture struct {
	st     *fakeStore
	f      *Frontier
	seeds  []string
	woken  map[string][]string
	cfgs   []crawl.HostConfig
	gauges map[string]float64
	behind bool
}

func newFixture() *fixture {
	x := &fixture{st: &fakeStore{specs: map[string]crawl.Spec{}}, woken: map[string][]string{}, gauges: map[string]float64{}}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	x.f = &Frontier{Store: x.st, URLs: x.st, ProcessQueue: "process-q", RenderQueue: "render-q",
		Crawls: &policy.Crawls{Store: x.st, Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: "TrawlerBot/1.0"},
		AdmitSeeds: func(_ context.Context, _ *policy.Crawl, cands []store.Candidate) (admit.AdmitStats, error) {
			hosts := map[string]bool{}
			for _, c := range cands {
				x.seeds = append(x.seeds, c.URL)
				hosts[urlnorm.Authority(c.URL)] = true
			}
			return admit.AdmitStats{New: len(cands), Hosts: len(hosts)}, nil
		},
		Wake: func(_ context.Context, crawlID string, cfg crawl.HostConfig, hosts []string) error {
			x.woken[crawlID] = append(x.woken[crawlID], hosts...)
			x.cfgs = append(x.cfgs, cfg)
			return nil
		},
		Behind: func(context.Context) bool { return x.behind },
		Gauge: func(name string, v float64, tags map[string]string) {
			x.gauges[name+"/"+tags["state"]] = v
		},
		Now: func() time.Time { return now },
	}
	return x
}

// Starting a crawl records it, admits its valid seeds, reports the invalid ones with their
// reasons and tells the workflow where its processing and renders run; a second start of the
// same crawl keeps the first record.
func TestStartCrawlAdmitsValidSeedsAndReportsTheRest(t *testing.T) {
	x := newFixture()
	spec := crawl.Spec{Name: "c", Seeds: []string{"http://a.test/", "http://b.test/x", "ftp://c.test/", "::not a url"},
		Delay: crawl.Duration(2 * time.Second)}.WithDefaults()
	res, err := x.f.StartCrawl(context.Background(), StartCrawlInput{CrawlID: "c", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if res.Admitted != 2 || res.Hosts != 2 || len(res.Invalid) != 2 || res.ProcessQueue != "process-q" || res.RenderQueue != "render-q" {
		t.Fatalf("result %+v; want 2 admitted on 2 hosts, 2 invalid, the queues", res)
	}
	if !slices.Equal(x.seeds, []string{"http://a.test/", "http://b.test/x"}) {
		t.Errorf("admitted %v", x.seeds)
	}
	for _, bad := range res.Invalid {
		if bad.Reason == "" {
			t.Errorf("invalid seed %q without a reason", bad.Seed)
		}
	}
	again := spec
	again.Delay = crawl.Duration(time.Hour)
	if _, err := x.f.StartCrawl(context.Background(), StartCrawlInput{CrawlID: "c", Spec: again}); err != nil {
		t.Fatal(err)
	}
	if ci, _ := x.f.Crawls.Get(context.Background(), "c"); ci.Spec.Delay.D() != 2*time.Second {
		t.Errorf("a second start changed the crawl's delay to %s; the first record stands", ci.Spec.Delay.D())
	}
	// Deduplicating against a crawl that does not exist is refused; against one that does, not.
	typo := crawl.Spec{Name: "d", Seeds: []string{"http://a.test/"}, DedupAgainst: []string{"cc"}}.WithDefaults()
	if _, err := x.f.StartCrawl(context.Background(), StartCrawlInput{CrawlID: "d", Spec: typo}); err == nil || !strings.Contains(err.Error(), `no crawl "cc"`) {
		t.Errorf("dedupAgainst a crawl that does not exist: %v", err)
	}
	typo.DedupAgainst = []string{"c", "*"}
	if _, err := x.f.StartCrawl(context.Background(), StartCrawlInput{CrawlID: "d", Spec: typo}); err != nil {
		t.Errorf("dedupAgainst an existing crawl: %v", err)
	}
	// A crawl ID out of the one character set (a `temporal workflow start --workflow-id
	// crawls/x` without a name) is refused before anything is recorded.
	bad := crawl.Spec{Seeds: []string{"http://a.test/"}}.WithDefaults()
	if _, err := x.f.StartCrawl(context.Background(), StartCrawlInput{CrawlID: "crawls/x", Spec: bad}); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("a crawl ID with a slash: %v", err)
	}
	if exists, _, _ := x.f.Store.CrawlLive(context.Background(), "crawls/x"); exists {
		t.Error("the refused crawl was recorded")
	}
}

// Progress carries the average rate and sets the frontier's gauges.
func TestProgressSetsGaugesAndRate(t *testing.T) {
	x := newFixture()
	first, last := time.Unix(1000, 0), time.Unix(1010, 0)
	x.st.progress = crawl.CrawlProgress{Fetched: 51, FirstFetch: &first, LastFetch: &last,
		ByState: map[crawl.URLState]int{crawl.URLQueued: 7, crawl.URLFetched: 3}, Waiting: &crawl.Waiting{ExpiredClaims: 2}}
	p, err := x.f.Progress(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	if p.PagesPerSec != p.AvgPagesPerSec() || p.PagesPerSec == 0 || p.UpdatedAt.IsZero() {
		t.Errorf("progress rate %v at %s; want the average rate, stamped", p.PagesPerSec, p.UpdatedAt)
	}
	if x.gauges[metrics.FrontierURLs+"/queued"] != 7 || x.gauges[metrics.FrontierURLs+"/fetched"] != 3 {
		t.Errorf("gauges %v; want queued 7, fetched 3", x.gauges)
	}
}

// The sweep wakes hosts stale for longer than asked, with the crawl's host pacing, unless
// Temporal is behind (then it wakes nobody and does not even look); it hands back pages whose
// processing never finished to the process queue; an abandoned lease's claims go back by owner.
func TestTheSweep(t *testing.T) {
	x := newFixture()
	ctx := context.Background()
	spec := crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}, Delay: crawl.Duration(3 * time.Second)}.WithDefaults()
	if _, err := x.f.StartCrawl(ctx, StartCrawlInput{CrawlID: "c", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	x.st.stale = []string{"a.test", "b.test"}

	x.behind = true
	if n, err := x.f.WakeStale(ctx, "c", time.Minute); n != 0 || err != nil || len(x.woken) != 0 || !x.st.staleSince.IsZero() {
		t.Fatalf("behind: woke %d (%v), %v; want none, no look", n, err, x.woken)
	}
	x.behind = false
	n, err := x.f.WakeStale(ctx, "c", time.Minute)
	if err != nil || n != 2 || !slices.Equal(x.woken["c"], []string{"a.test", "b.test"}) {
		t.Fatalf("woke %d %v (%v); want a.test and b.test", n, x.woken, err)
	}
	if want := x.f.Now().Add(-time.Minute); !x.st.staleSince.Equal(want) {
		t.Errorf("stale since %s; want a minute ago (%s)", x.st.staleSince, want)
	}
	if x.cfgs[0].Delay.D() != 3*time.Second {
		t.Errorf("woken with delay %s; want the crawl's 3s", x.cfgs[0].Delay.D())
	}

	x.st.fetched = []store.FetchedPage{{CrawlID: "c", URL: "http://a.test/p", BodyKey: "k", Hash: []byte("h")}}
	in, err := x.f.StaleFetched(ctx, "c", 10*time.Minute)
	if err != nil || in.TaskQueue != "process-q" || len(in.Pages) != 1 || in.Pages[0].URL != "http://a.test/p" {
		t.Errorf("stale fetched %+v (%v); want the page, for the process queue", in, err)
	}

	if err := x.f.Abandon(ctx, AbandonInput{Host: "a.test", Owners: crawl.LeaseOwners("lease-1")}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.st.released, []string{"a.test:lease-1"}) {
		t.Errorf("released %v; want a.test's claims of lease-1", x.st.released)
	}
}
