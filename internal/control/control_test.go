package control

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// fakeStore records a crawl's spec as controls change it, as Postgres does.
type fakeStore struct {
	spec  crawl.Spec
	dead  map[string]int // host → dead URLs
	calls []string
}

func (s *fakeStore) CrawlSpec(_ context.Context, _ string, dst any) error {
	b, _ := json.Marshal(s.spec)
	return json.Unmarshal(b, dst)
}

func (s *fakeStore) AddSeeds(_ context.Context, _ string, seeds []string) error {
	s.calls = append(s.calls, "add seeds")
	s.spec.Seeds = append(s.spec.Seeds, seeds...)
	return nil
}

func (s *fakeStore) ReplayDeadLetters(_ context.Context, _ string, f store.DeadLetterFilter) (map[string]int, error) {
	s.calls = append(s.calls, "replay "+f.Host)
	out := map[string]int{}
	for h, n := range s.dead {
		if f.Host == "" || f.Host == h {
			out[h] = n
		}
	}
	return out, nil
}

func (s *fakeStore) Block(_ context.Context, _ string, hosts, patterns []string) (int64, error) {
	s.calls = append(s.calls, "block")
	s.spec.DenyHosts = append(s.spec.DenyHosts, hosts...)
	return int64(len(hosts) + len(patterns)), nil
}

func (s *fakeStore) ThrottleCrawl(_ context.Context, _ string, delay time.Duration, concurrency int, reset bool) error {
	s.calls = append(s.calls, "throttle")
	s.spec.Throttle = &crawl.Throttle{Delay: crawl.Duration(delay), Concurrency: concurrency}
	if reset {
		s.spec.Throttle = nil
	}
	return nil
}

type fixture struct {
	st     *fakeStore
	c      *Control
	seeds  []string
	woken  []string
	paused bool
}

func newFixture() *fixture {
	x := &fixture{st: &fakeStore{spec: crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}}.WithDefaults(),
		dead: map[string]int{"a.test": 2, "b.test": 1}}}
	x.c = &Control{Store: x.st, Crawls: &policy.Crawls{Store: x.st, Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: "TrawlerBot/1.0"},
		AdmitSeeds: func(_ context.Context, _ *policy.Crawl, cands []store.Candidate) (admit.AdmitStats, error) {
			for _, c := range cands {
				x.seeds = append(x.seeds, c.URL)
			}
			return admit.AdmitStats{New: len(cands)}, nil
		},
		Wake: func(_ context.Context, _ string, _ crawl.HostConfig, hosts []string) error {
			x.woken = append(x.woken, hosts...)
			return nil
		}}
	return x
}

// Added seeds are recorded first (the crawl's scope takes them in), then admitted under the
// spec as recorded; invalid ones are reported in the result, not a failure.
func TestAddSeeds(t *testing.T) {
	x := newFixture()
	ctx := context.Background()
	x.c.Crawls.Put("c", x.st.spec) // a worker that knew the crawl before the seeds came
	res, err := x.c.AddSeeds(ctx, AddSeedsInput{CrawlID: "c", Seeds: crawl.AddSeeds{Seeds: []string{"http://new.test/", "gopher://x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 1 || !slices.Equal(x.seeds, []string{"http://new.test/"}) || !strings.Contains(res.Error, "gopher://x") {
		t.Errorf("result %+v, admitted %v; want new.test admitted and gopher://x reported", res, x.seeds)
	}
	if ci, _ := x.c.Crawls.Get(ctx, "c"); !slices.Contains(ci.Spec.Seeds, "http://new.test/") {
		t.Errorf("the worker's rules still lack the added seed: %v", ci.Spec.Seeds)
	}
}

// Replaying dead letters wakes exactly the hosts whose URLs went back to the queue, and counts
// them.
func TestReplayWakesTheHostsReplayed(t *testing.T) {
	x := newFixture()
	res, err := x.c.ReplayDeadLetters(context.Background(), ReplayInput{CrawlID: "c", Replay: crawl.Replay{Host: "a.test"}})
	if err != nil || res.Count != 2 || !slices.Equal(x.woken, []string{"a.test"}) {
		t.Errorf("replay %+v (%v), woke %v; want a.test's 2 URLs, a.test woken", res, err, x.woken)
	}
}

// A bad block or throttle request is answered with its error and changes nothing; a good one
// is recorded and every worker's copy of the crawl's rules is dropped.
func TestBadControlsChangeNothing(t *testing.T) {
	x := newFixture()
	ctx := context.Background()
	res, err := x.c.Block(ctx, BlockInput{CrawlID: "c"})
	if err != nil || res.Error == "" {
		t.Errorf("an empty block: %+v (%v); want an error in the result", res, err)
	}
	res, err = x.c.ThrottleCrawl(ctx, ThrottleInput{CrawlID: "c", Throttle: crawl.Throttle{Delay: crawl.Duration(-time.Second)}})
	if err != nil || res.Error == "" {
		t.Errorf("a negative throttle: %+v (%v); want an error in the result", res, err)
	}
	if len(x.st.calls) != 0 {
		t.Fatalf("bad requests reached the store: %v", x.st.calls)
	}

	x.c.Crawls.Put("c", x.st.spec)
	if _, err := x.c.Block(ctx, BlockInput{CrawlID: "c", Block: crawl.Block{Hosts: []string{"Evil.TEST"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.c.ThrottleCrawl(ctx, ThrottleInput{CrawlID: "c", Throttle: crawl.Throttle{Delay: crawl.Duration(5 * time.Second)}}); err != nil {
		t.Fatal(err)
	}
	ci, _ := x.c.Crawls.Get(ctx, "c")
	if !slices.Contains(ci.Spec.DenyHosts, "evil.test") || pacing.OfCrawl(ci.Spec).Delay != 5*time.Second {
		t.Errorf("rules after block and throttle: deny %v, pace %+v; want evil.test denied (lower case), 5s", ci.Spec.DenyHosts, pacing.OfCrawl(ci.Spec))
	}
}
