package fetching

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The heartbeat, the result and the UI's view are separate types, but their JSON is the one
// flat object recorded histories and running leases' heartbeats hold: a heartbeat written
// before the split resumes its chunk, and a result never carries the chunk.
func TestLeaseBeatAndResultKeepTheirRecordedJSON(t *testing.T) {
	// A heartbeat as a lease wrote it before the types were split.
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
	if len(b.Chunk) != 2 || b.Chunk[1].URL != "http://a.test/2" || len(b.Finished) != 2 || !b.Finished[0] ||
		b.Done != 1 || b.Requests != 2 || b.CrawlDelay != 2*time.Second || len(b.Outcomes) != 1 {
		t.Fatalf("decoded %+v", b)
	}

	// Written again, the keys are the ones it had, in the order an operator reads them: the
	// view first.
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, key := range []string{`"done"`, `"outcomes"`, `"requests"`, `"lastRequestAt"`, `"finished"`, `"topUp"`} {
		if !strings.Contains(s, key) {
			t.Errorf("heartbeat lacks %s: %s", key, s)
		}
	}
	if strings.Index(s, `"outcomes"`) > strings.Index(s, `"requests"`) || strings.Index(s, `"requests"`) > strings.Index(s, `"topUp"`) {
		t.Errorf("heartbeat out of order (view, findings, resume): %s", s)
	}

	// The result is the heartbeat without the chunk.
	res, err := json.Marshal(b.LeaseResult)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res), "topUp") || strings.Contains(string(res), "finished") {
		t.Errorf("result carries the chunk: %s", res)
	}
	var back LeaseResult
	if err := json.Unmarshal([]byte(old), &back); err != nil || back.Done != 1 || back.Requests != 2 {
		t.Errorf("a recorded result decodes as %+v (%v)", back, err)
	}
}
