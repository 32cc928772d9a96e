package deliver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/store"
)

// fakeStore holds one crawl's documents in save order, and its outputs' cursors.
type fakeStore struct {
	spec  crawl.Spec
	state crawl.CrawlState
	docs  []store.DeliveredPage
	pos   map[string]int // output → documents delivered (the cursor, as an index)
	tries map[string]int
	dead  []store.DeadBatch
	err   string
}

func newFakeStore(n int, outs ...crawl.Output) *fakeStore {
	f := &fakeStore{spec: crawl.Spec{Name: "c", Outputs: outs}, state: crawl.CrawlRunning, pos: map[string]int{}, tries: map[string]int{}}
	for i := range n {
		h := []byte{byte(i), 1}
		f.docs = append(f.docs, store.DeliveredPage{At: store.Cursor{Tx: fmt.Sprint(100 + i), Hash: h}, StoredPage: store.StoredPage{
			Hash: h, URL: fmt.Sprintf("http://a.test/%d", i), Status: 200, FetchedAt: time.Date(2026, 11, 27, 10+i%2, 0, 0, 0, time.UTC),
			ContentHash: []byte{byte(i), 2}, Title: fmt.Sprintf("page %d", i)}})
	}
	return f
}

func (f *fakeStore) index(c store.Cursor) int {
	for i, d := range f.docs {
		if d.At.Same(c) {
			return i + 1
		}
	}
	return 0
}

func (f *fakeStore) CrawlSpec(_ context.Context, _ string, dst any) error {
	b, _ := json.Marshal(f.spec)
	return json.Unmarshal(b, dst)
}
func (f *fakeStore) Ended(_ context.Context, _ string, at store.Cursor, _ time.Duration) (bool, error) {
	return f.state == crawl.CrawlDone && f.index(at) == len(f.docs), nil
}
func (f *fakeStore) Position(_ context.Context, _, out string) (store.Cursor, int, error) {
	if i := f.pos[out]; i > 0 {
		return f.docs[i-1].At, f.tries[out], nil
	}
	return store.Cursor{}, f.tries[out], nil
}
func (f *fakeStore) Pages(_ context.Context, _ string, after store.Cursor, upTo *store.Cursor, limit int) ([]store.DeliveredPage, error) {
	from, to := f.index(after), len(f.docs)
	if upTo != nil {
		to = f.index(*upTo)
	}
	return f.docs[from:min(to, from+limit)], nil
}
func (f *fakeStore) Advance(_ context.Context, _, out string, from, to store.Cursor, _ int) (bool, error) {
	if f.index(from) != f.pos[out] {
		return false, nil
	}
	f.pos[out], f.tries[out] = f.index(to), 0
	return true, nil
}
func (f *fakeStore) Counted(context.Context, string, string, int) error { return nil }
func (f *fakeStore) Failed(_ context.Context, _, out string, _ store.Cursor, why string) (int, error) {
	f.err = why
	f.tries[out]++
	return f.tries[out], nil
}
func (f *fakeStore) ReplayFailed(context.Context, string, string, int64, string) error { return nil }
func (f *fakeStore) DeadLetter(_ context.Context, _, out string, b store.DeadBatch) error {
	f.dead = append(f.dead, b)
	f.pos[out], f.tries[out] = f.index(b.To), 0
	return nil
}
func (f *fakeStore) DeadBatches(context.Context, string, string, int) ([]store.DeadBatch, error) {
	return f.dead, nil
}
func (f *fakeStore) Replayed(context.Context, string, string, int64) error { f.dead = nil; return nil }

// hookServer records each accepted batch's records and answers with status.
type hookServer struct {
	mu      sync.Mutex
	status  int
	bodies  [][]byte
	headers []http.Header
}

func (h *hookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bodies, h.headers = append(h.bodies, body), append(h.headers, r.Header.Clone())
	w.WriteHeader(h.status)
	fmt.Fprint(w, strings.Repeat("x", 5000)) // a receiver's long answer
}

// attempts are the X-Trawler-Attempt headers received, in order.
func (h *hookServer) attempts() string {
	var out []string
	for _, hd := range h.headers {
		out = append(out, hd.Get(HeaderAttempt))
	}
	return strings.Join(out, ",")
}

func setup(t *testing.T, status int, allow bool, docs int) (*Deliverer, *fakeStore, *hookServer) {
	t.Helper()
	t.Setenv("TEST_HOOK_KEY", "s3cret")
	h := &hookServer{status: status}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var nets []netip.Prefix
	if allow {
		nets = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}
	f := newFakeStore(docs, crawl.Output{Name: "hook", BatchSize: 5, MaxAttempts: 3, Webhook: &crawl.Webhook{URL: srv.URL, Secret: "secret:env:TEST_HOOK_KEY"}})
	d := &Deliverer{Store: f, Records: &export.Source{}, Webhook: NewWebhook(netguard.New(netguard.Options{Allow: nets}), nil, 5*time.Second, "test")}
	return d, f, h
}

// Batches of at most batchSize records are POSTed, each signed over its body with the key the
// worker resolves, with a batch ID that is also the idempotency key's tail; each record has
// its key. The run catches up, and says the output ended once the crawl has.
func TestWebhookBatchesAreSignedAndKeyed(t *testing.T) {
	d, f, h := setup(t, http.StatusOK, true, 12)
	in := Input{CrawlID: "c", Output: "hook"}
	res, err := d.Run(context.Background(), in, nil)
	if err != nil || res.Records != 12 || res.Batches != 3 || !res.CaughtUp || res.Ended {
		t.Fatalf("run: %+v %v", res, err)
	}
	keys := map[string]bool{}
	for i, body := range h.bodies {
		if !Verify([]byte("s3cret"), body, h.headers[i].Get(HeaderSignature)) || Verify([]byte("other"), body, h.headers[i].Get(HeaderSignature)) {
			t.Errorf("batch %d: signature %q does not verify under the key alone", i, h.headers[i].Get(HeaderSignature))
		}
		var b struct {
			Crawl, Output, Batch string
			Records              []map[string]any
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("batch %d is not JSON: %v\n%s", i, err, body)
		}
		if b.Crawl != "c" || b.Output != "hook" || h.headers[i].Get(HeaderIdem) != "c/hook/"+b.Batch || len(b.Records) > 5 {
			t.Errorf("batch %d: %s/%s/%s, %d records, key %q", i, b.Crawl, b.Output, b.Batch, len(b.Records), h.headers[i].Get(HeaderIdem))
		}
		for _, r := range b.Records {
			keys[r["key"].(string)] = true
			if _, ok := r["text"]; ok {
				t.Error("a record without output.text carries the text")
			}
		}
	}
	if len(keys) != 12 || !keys[export.Key("c", []byte{0, 1}, []byte{0, 2})] {
		t.Errorf("%d keys: %v", len(keys), keys)
	}
	f.state = crawl.CrawlDone
	if res, err := d.Run(context.Background(), in, nil); err != nil || !res.Ended || res.Records != 0 {
		t.Errorf("after the crawl ended: %+v %v", res, err)
	}
}

// A batch the receiver fails (500) fails the run, the cursor standing, until the last try,
// which dead-letters it and goes on; the receiver's answer is clipped where it is recorded.
func TestAFailingBatchIsRetriedThenDeadLettered(t *testing.T) {
	d, f, h := setup(t, http.StatusInternalServerError, true, 7)
	in := Input{CrawlID: "c", Output: "hook"}
	if _, err := d.Run(context.Background(), in, nil); err == nil || f.pos["hook"] != 0 || len(f.dead) != 0 {
		t.Fatalf("a failed try: err %v, cursor %d, dead %d", err, f.pos["hook"], len(f.dead))
	}
	if len(f.err) > crawl.MaxErrorBytes+10 || !strings.Contains(f.err, "500") {
		t.Errorf("recorded error (%d bytes): %.100s", len(f.err), f.err)
	}
	if _, err := d.Run(context.Background(), in, nil); err == nil || f.pos["hook"] != 0 || h.attempts() != "1,2" {
		t.Fatalf("the second try: err %v, cursor %d, attempts sent %s", err, f.pos["hook"], h.attempts())
	}
	// The third try dead-letters the first batch; the next batch's tries count from one.
	res, err := d.Run(context.Background(), in, nil)
	if err == nil || res.Dead != 5 || len(f.dead) != 1 || f.pos["hook"] != 5 || f.dead[0].Records != 5 || f.dead[0].Attempts != 3 {
		t.Fatalf("the last try: %+v %v; dead %+v", res, err, f.dead)
	}
	for range 2 {
		res, err = d.Run(context.Background(), in, nil)
	}
	if err != nil || res.Dead != 2 || len(f.dead) != 2 || f.pos["hook"] != 7 || !strings.HasSuffix(h.attempts(), "3,1,2,3") {
		t.Fatalf("the second batch: %+v %v; attempts sent %s", res, err, h.attempts())
	}
	// Replayed once the receiver accepts: every record of the dead batches again.
	h.status = http.StatusOK
	h.bodies = nil
	res, err = d.Run(context.Background(), Input{CrawlID: "c", Output: "hook", Replay: true}, nil)
	if err != nil || res.Replayed != 2 || res.Records != 7 || len(h.bodies) != 2 {
		t.Errorf("replay: %+v %v, %d posts", res, err, len(h.bodies))
	}
}

// A receiver that refuses a batch (4xx) has it dead-lettered at once: trying again cannot help.
func TestARefusedBatchIsDeadLetteredAtOnce(t *testing.T) {
	d, f, _ := setup(t, http.StatusBadRequest, true, 3)
	res, err := d.Run(context.Background(), Input{CrawlID: "c", Output: "hook"}, nil)
	if err != nil || res.Dead != 3 || len(f.dead) != 1 {
		t.Fatalf("%+v %v %+v", res, err, f.dead)
	}
}

// The address guard refuses a webhook on loopback unless the worker's settings allow it: the
// batch is dead-lettered naming the setting, nothing is sent.
func TestTheGuardKeepsWebhooksOffLoopback(t *testing.T) {
	d, f, h := setup(t, http.StatusOK, false, 2)
	res, err := d.Run(context.Background(), Input{CrawlID: "c", Output: "hook"}, nil)
	if err != nil || res.Dead != 2 || len(h.bodies) != 0 || !strings.Contains(f.dead[0].Error, "TRAWLER_DELIVERY_ALLOW_NETWORKS") {
		t.Fatalf("%+v %v; %d posts; %+v", res, err, len(h.bodies), f.dead)
	}
}

// A worker without the key fails the try (another worker may have it), never sends unsigned.
func TestAMissingKeyIsNeverSentUnsigned(t *testing.T) {
	d, f, h := setup(t, http.StatusOK, true, 2)
	t.Setenv("TEST_HOOK_KEY", "")
	_, err := d.Run(context.Background(), Input{CrawlID: "c", Output: "hook"}, nil)
	if err == nil || len(h.bodies) != 0 || f.pos["hook"] != 0 || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err %v, %d posts, cursor %d", err, len(h.bodies), f.pos["hook"])
	}
}

// A webhook URL named as a secret is resolved by the worker at each send, and never named in
// what is recorded of a failure.
func TestASecretURLIsResolvedAndNeverRecorded(t *testing.T) {
	d, f, h := setup(t, http.StatusServiceUnavailable, true, 2)
	t.Setenv("TEST_HOOK_URL", f.spec.Outputs[0].Webhook.URL+"/in?token=t0ken")
	f.spec.Outputs[0].Webhook.URL = "secret:env:TEST_HOOK_URL"
	_, err := d.Run(context.Background(), Input{CrawlID: "c", Output: "hook"}, nil)
	if err == nil || len(h.bodies) != 1 || strings.Contains(err.Error(), "t0ken") || strings.Contains(f.err, "t0ken") || strings.Contains(f.err, "127.0.0.1") {
		t.Fatalf("err %v; %d posts; recorded %.200q", err, len(h.bodies), f.err)
	}
}
