package fetching

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// A lease's result tells, per URL, what became of it (status, size, time, verdict), newest
// last and at most MaxOutcomes; its last URL and next slot are there for the heartbeat.
func TestALeaseResultTellsEachURLsOutcome(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/p2" {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		page(w, r)
	}, pages(3)...)
	res := f.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)
	if len(res.Outcomes) != 3 {
		t.Fatalf("outcomes %+v; want one per URL", res.Outcomes)
	}
	byURL := map[string]URLOutcome{}
	for _, o := range res.Outcomes {
		byURL[o.URL] = o
	}
	if o := byURL["http://site.test/p0"]; o.Status != 200 || o.Bytes == 0 || o.Verdict != "fetched: to processing" {
		t.Errorf("p0: %+v", o)
	}
	if o := byURL["http://site.test/p2"]; o.Status != 503 || !strings.HasPrefix(o.Verdict, "retry: HTTP 503") {
		t.Errorf("p2: %+v", o)
	}
	if res.LastURL != res.Outcomes[2].URL || res.NextSlot == nil {
		t.Errorf("last URL %q, next slot %v", res.LastURL, res.NextSlot)
	}

	// A long lease keeps the newest MaxOutcomes.
	b := &leaseRun{}
	for i := range MaxOutcomes + 5 {
		b.note(store.FetchOutcome{URL: "http://site.test/x", State: crawl.URLDone, Duration: time.Duration(i) * time.Millisecond})
	}
	if len(b.res.Outcomes) != MaxOutcomes || b.res.OutcomesDropped != 5 || b.res.Outcomes[MaxOutcomes-1].MS != int64(MaxOutcomes+4) {
		t.Errorf("%d outcomes kept, %d dropped", len(b.res.Outcomes), b.res.OutcomesDropped)
	}
}
