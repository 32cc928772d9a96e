package fetching

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// The heartbeat, the result and the UI's view are separate types, but their JSON is the one
// flat object recorded histories and running leases' heartbeats hold: a heartbeat written
// before the beat lost its chunk still decodes (a retry of it reclaims from Postgres), and
// neither a beat nor a result carries a chunk.
func TestLeaseBeatAndResultKeepTheirRecordedJSON(t *testing.T) {
	// A heartbeat as a lease wrote it when beats carried the chunk.
	old := `{"done":1,"fetched":1,"errors":0,"skipped":0,"lastURL":"http://a.test/1",
		"outcomes":[{"url":"http://a.test/1","status":200,"ms":3,"verdict":"fetched: to processing"}],
		"notModified":0,"deferred":0,"requests":2,"peakInFlight":1,"lastRequestAt":"2026-11-20T10:00:00Z",
		"crawlDelay":2000000000,"crawlDelayCapped":false,"deferUntil":"0001-01-01T00:00:00Z","consecutiveErrors":0,
		"finished":[true,false],"topUp":[{"crawlId":"c","hash":"AQ==","url":"http://a.test/1","depth":0,"hops":0,"attempts":0,"fetchCount":0},
		{"crawlId":"c","hash":"Ag==","url":"http://a.test/2","depth":1,"hops":0,"attempts":0,"fetchCount":0}]}`
	var b LeaseBeat
	if err := json.Unmarshal([]byte(old), &b); err != nil {
		t.Fatal(err)
	}
	if b.Done != 1 || b.Requests != 2 || b.CrawlDelay != 2*time.Second || b.LastURL != "http://a.test/1" {
		t.Fatalf("decoded %+v", b)
	}

	// Written again as a beat: the keys it had, in the order an operator reads them (the view
	// first), without the outcomes or a chunk.
	out, err := json.Marshal(beatOf(b.LeaseResult))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, key := range []string{`"done"`, `"lastURL"`, `"requests"`, `"lastRequestAt"`} {
		if !strings.Contains(s, key) {
			t.Errorf("heartbeat lacks %s: %s", key, s)
		}
	}
	for _, key := range []string{`"outcomes"`, `"finished"`, `"topUp"`} {
		if strings.Contains(s, key) {
			t.Errorf("heartbeat carries %s: %s", key, s)
		}
	}
	if strings.Index(s, `"done"`) > strings.Index(s, `"requests"`) {
		t.Errorf("heartbeat out of order (view, findings): %s", s)
	}

	// The result keeps the outcomes.
	var back LeaseResult
	if err := json.Unmarshal([]byte(old), &back); err != nil || back.Done != 1 || back.Requests != 2 || len(back.Outcomes) != 1 {
		t.Errorf("a recorded result decodes as %+v (%v)", back, err)
	}
}

// A heartbeat stays under MaxBeatBytes whatever the host serves: the outcomes stay in the
// result, and the strings a server makes (its URLs, its errors, why it looks dead) are clipped.
func TestALeaseBeatWeighsUnderAKilobyte(t *testing.T) {
	long := "http://h.test/?" + strings.Repeat("a=é&", 5000)
	next := time.Now()
	var r LeaseResult
	r.Done, r.Fetched, r.Errors, r.Skipped, r.Requests = 1<<30, 1<<30, 1<<30, 1<<30, 1<<30
	r.LastURL, r.NextSlot, r.OutcomesDropped = long, &next, 1<<30
	r.LastError, r.Gone = crawl.ClipError(strings.Repeat("<\x01", 1<<20)), strings.Repeat("&\xff", 4096) // (each escaped in 6 bytes)
	r.LastRequestAt, r.DeferUntil, r.NextDue = next, next, &next
	r.CrawlDelay, r.AutoDelay, r.CrawlDelayCapped, r.Answered, r.Retired, r.Dry = time.Hour, time.Hour, true, true, true, true
	for range MaxOutcomes {
		r.Outcomes = append(r.Outcomes, URLOutcome{URL: long, Status: 500, Bytes: 1 << 40, MS: 1 << 40, Verdict: strings.Repeat("v", 160)})
	}
	out, err := json.Marshal(beatOf(r))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > MaxBeatBytes {
		t.Errorf("a beat weighs %d bytes, over %d: %s", len(out), MaxBeatBytes, out)
	}
	whole, _ := json.Marshal(r)
	if len(whole) < 100*MaxBeatBytes || len(r.Outcomes) != MaxOutcomes || r.LastURL != long {
		t.Errorf("the result lost what the beat leaves out (%d bytes)", len(whole))
	}
}
