package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/deliver"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/workflows"
)

// receiver is a webhook receiver on loopback: it checks each request's signature, answers 500
// while told to fail and 400 while told to refuse, and keeps every record it accepted by key.
type receiver struct {
	key []byte
	mu  sync.Mutex
	// failUntil: answer 500 until then; refuse: answer 400.
	failUntil          time.Time
	refuse             bool
	accepted, badSig   int
	failed, refused    int
	retries            int // requests whose X-Trawler-Attempt is past 1
	firstOK            chan struct{}
	once               sync.Once
	records            map[string][]string // key → each copy of its record, as received
	batchKeys, batches map[string]bool
}

func newReceiver(key string) *receiver {
	return &receiver{key: []byte(key), firstOK: make(chan struct{}), records: map[string][]string{}, batches: map[string]bool{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !deliver.Verify(rc.key, body, r.Header.Get(deliver.HeaderSignature)) {
		rc.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if a, _ := strconv.Atoi(r.Header.Get(deliver.HeaderAttempt)); a > 1 {
		rc.retries++
	}
	switch {
	case rc.refuse:
		rc.refused++
		http.Error(w, "not now", http.StatusBadRequest)
		return
	case time.Now().Before(rc.failUntil):
		rc.failed++
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
		return
	}
	var b struct {
		Crawl, Output, Batch string
		Records              []json.RawMessage
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Batch == "" || r.Header.Get(deliver.HeaderIdem) != b.Crawl+"/"+b.Output+"/"+b.Batch {
		http.Error(w, "bad batch", http.StatusUnprocessableEntity)
		return
	}
	for _, raw := range b.Records {
		var rec struct {
			Key string `json:"key"`
		}
		_ = json.Unmarshal(raw, &rec)
		rc.records[rec.Key] = append(rc.records[rec.Key], string(raw))
	}
	rc.accepted++
	rc.batches[b.Batch] = true
	rc.once.Do(func() { close(rc.firstOK) })
}

// keys is the set of keys received.
func (rc *receiver) keys() map[string]bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]bool{}
	for k := range rc.records {
		out[k] = true
	}
	return out
}

// A crawl with two outputs — a signed webhook on loopback and a Parquet dataset in the bucket —
// delivers every stored document while it runs, at least once: through a minute of the
// receiver answering 500 and a SIGKILL of the process worker (which runs the deliveries) in
// the middle of the crawl. Every request carries a valid signature; copies of a record share
// its key; DuckDB reads the dataset's hive partitions and counts one row per document. A third
// output whose receiver refuses (400) dead-letters its batches, and trawler deliver --replay
// sends them all once it accepts.
func TestDeliveriesReachEveryStoredDocument(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Shop = 3, 25, false, true
	s := newStackWithoutWorkers(t, wc)
	workerBin := buildBinary(t, "trawler-worker", "./workers")
	r := &resultsStack{stack: s, bin: buildBinary(t, "trawler", "./starter"), dir: t.TempDir()}

	key, strictKey := testenv.Unique("hook-key"), testenv.Unique("strict-key")
	hook, strict := newReceiver(key), newReceiver(strictKey)
	strict.refuse = true
	hookSrv, strictSrv := httptest.NewServer(hook), httptest.NewServer(strict)
	t.Cleanup(hookSrv.Close)
	t.Cleanup(strictSrv.Close)
	s.workerEnvExtra = []string{"HOOK_KEY=" + key, "STRICT_KEY=" + strictKey, "TRAWLER_DELIVERY_ALLOW_NETWORKS=127.0.0.1/32"}
	s.startWorkerProcess(t, workerBin, "workflow,fetch")
	proc := s.startWorkerProcess(t, workerBin, "process")

	seeds := []string{"http://shop.test/"}
	for _, h := range s.web.Hosts()[:3] {
		seeds = append(seeds, "http://"+h+"/")
	}
	var rules []crawl.ExtractRule
	if err := json.Unmarshal([]byte(shopRules), &rules); err != nil {
		t.Fatal(err)
	}
	name := testenv.Unique("deliver")
	spec := crawl.Spec{Name: name, Seeds: seeds, Scope: crawl.ScopeHost, Delay: crawl.Duration(400 * time.Millisecond),
		Extract: rules,
		Outputs: []crawl.Output{
			{Name: "hook", Webhook: &crawl.Webhook{URL: hookSrv.URL + "/in", Secret: "secret:env:HOOK_KEY"}, BatchSize: 5, Every: crawl.Duration(time.Second)},
			{Name: "lake", Dataset: &crawl.Dataset{}, BatchSize: 7, Every: crawl.Duration(time.Second)},
			{Name: "strict", Webhook: &crawl.Webhook{URL: strictSrv.URL, Secret: "secret:env:STRICT_KEY"}, BatchSize: 50},
		}}
	run := s.start(spec)

	// The first batch lands; then the receiver fails for a minute, and meanwhile the process
	// worker is killed mid-crawl and another takes its place.
	select {
	case <-hook.firstOK:
	case <-time.After(90 * time.Second):
		t.Fatal("no webhook batch within 90s of the crawl's start")
	}
	hook.mu.Lock()
	hook.failUntil = time.Now().Add(time.Minute)
	hook.mu.Unlock()
	time.Sleep(5 * time.Second)
	var p crawl.CrawlProgress
	if v, err := s.tc.QueryWorkflow(context.Background(), run.GetID(), "", crawl.QueryProgress); err != nil || v.Get(&p) != nil || p.State != crawl.CrawlRunning {
		t.Fatalf("the crawl is not running at the kill: %q (%v)", p.State, err)
	}
	_ = proc.cmd.Process.Signal(syscall.SIGKILL)
	_ = proc.cmd.Wait()
	time.Sleep(2 * time.Second)
	s.startWorkerProcess(t, workerBin, "process")

	progress := s.wait(run, 5*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	for _, out := range spec.Outputs {
		var totals workflows.DeliverTotals
		if err := s.tc.GetWorkflow(ctx, crawl.DeliverID(run.GetID(), out.Name), "").Get(ctx, &totals); err != nil {
			t.Fatalf("delivery %s: %v", out.Name, err)
		}
		t.Logf("output %s: %+v", out.Name, totals)
	}

	// Every stored document, by key.
	rows, err := s.store.Pool().Query(ctx, `SELECT url_hash, content_hash FROM documents WHERE crawl_id = $1`, name)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for rows.Next() {
		var h, ch []byte
		if err := rows.Scan(&h, &ch); err != nil {
			t.Fatal(err)
		}
		want[export.Key(name, h, ch)] = true
	}
	if rows.Err() != nil || len(want) < 60 {
		t.Fatalf("%d documents stored (%v): the crawl is too small to test deliveries", len(want), rows.Err())
	}

	got := hook.keys()
	missing(t, "webhook", want, got)
	hook.mu.Lock()
	dups := 0
	for k, copies := range hook.records {
		for _, c := range copies[1:] {
			dups++
			if c != copies[0] {
				t.Errorf("two copies of %s differ:\n%s\n%s", k, copies[0], c)
			}
		}
	}
	if hook.badSig > 0 || hook.failed == 0 || hook.retries == 0 {
		t.Errorf("webhook: %d requests with a bad signature, %d answered 500, %d retries: want none, some, some", hook.badSig, hook.failed, hook.retries)
	}
	t.Logf("webhook: %d documents, %d batches accepted, %d answered 500, %d retried requests, %d duplicate records; crawl %+v",
		len(want), hook.accepted, hook.failed, hook.retries, dups, progress.Pages)
	hook.mu.Unlock()

	// The dataset, read by DuckDB from the bucket's partitions as downloaded.
	dir := t.TempDir()
	prefix := crawl.DefaultDatasetPrefix + "/crawl=" + name + "/"
	objs, err := s.blob.List(ctx, prefix)
	if err != nil || len(objs) == 0 {
		t.Fatalf("dataset parts under %s: %v (%v)", prefix, objs, err)
	}
	for _, k := range objs {
		data, err := s.blob.Get(ctx, k, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(k, "/hour=") || !strings.HasSuffix(k, ".parquet") {
			t.Errorf("part %s is not in an hour partition", k)
		}
		_ = os.MkdirAll(filepath.Join(dir, filepath.Dir(k)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, k), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ds := duckdbRead(t, dir)
	if ds.Rows != len(want) || ds.Keys != len(want) {
		t.Errorf("DuckDB counts %d rows, %d keys in the dataset's %d parts; %d documents stored", ds.Rows, ds.Keys, len(objs), len(want))
	}
	lake := map[string]bool{}
	for _, k := range ds.KeyList {
		lake[k] = true
	}
	missing(t, "dataset", want, lake)
	for _, p := range ds.Parts {
		if p.Crawl != name {
			t.Errorf("a partition's crawl reads %q", p.Crawl)
		}
	}
	t.Logf("dataset: %d parts, %d rows in %d hour partitions", len(objs), ds.Rows, len(ds.Parts))

	// The refused output dead-lettered its batches; replayed once the receiver accepts.
	status := func() map[string]map[string]any {
		var st []map[string]any
		if err := json.Unmarshal(r.trawler(t, "deliver", "--crawl", name), &st); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, o := range st {
			out[o["output"].(string)] = o
		}
		return out
	}
	st := status()
	if st["strict"]["dead"].(float64) != float64(len(want)) || st["hook"]["dead"].(float64) != 0 || st["lake"]["dead"].(float64) != 0 ||
		!strings.Contains(st["strict"]["lastError"].(string), "400") {
		t.Errorf("status before replay: %v", st)
	}
	if strict.refused == 0 || len(strict.keys()) != 0 {
		t.Errorf("strict: %d refused, %d records kept", strict.refused, len(strict.keys()))
	}
	strict.mu.Lock()
	strict.refuse = false
	strict.mu.Unlock()
	cmd := exec.Command(r.bin, "deliver", "--crawl", name, "--output", "strict", "--replay", "--wait")
	cmd.Env = append(r.env(), "DATABASE_URL="+r.cfg.DatabaseURL, "TRAWLER_S3_BUCKET="+r.cfg.S3Bucket, "TRAWLER_PROCESS_TASK_QUEUE="+r.cfg.ProcessTaskQueue)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trawler deliver --replay: %v\n%s", err, out)
	}
	missing(t, "replayed webhook", want, strict.keys())
	if st := status(); st["strict"]["dead"].(float64) != 0 || st["strict"]["deadBatches"].(float64) != 0 {
		t.Errorf("status after replay: %v", st["strict"])
	}
	// The report says where each output stands.
	r.trawler(t, "report", "--crawl", name, "--out", r.dir)
	var rep struct {
		Deliveries []struct {
			Output  string `json:"output"`
			Records int    `json:"records"`
			Dead    int    `json:"dead"`
		} `json:"deliveries"`
	}
	if data, err := os.ReadFile(filepath.Join(r.dir, name+".json")); err != nil || json.Unmarshal(data, &rep) != nil || len(rep.Deliveries) != 3 {
		t.Errorf("the report's deliveries: %+v (%v)", rep.Deliveries, err)
	}
	for _, d := range rep.Deliveries {
		if d.Records < len(want) || d.Dead != 0 {
			t.Errorf("the report's output %s: %+v", d.Output, d)
		}
	}
}

// missing fails t for each wanted key not got, and each key got that no document has.
func missing(t *testing.T, what string, want, got map[string]bool) {
	t.Helper()
	var lost, extra []string
	for k := range want {
		if !got[k] {
			lost = append(lost, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(lost)
	if len(lost) > 0 || len(extra) > 0 {
		t.Errorf("%s: %d of %d documents never delivered (first %v); %d keys no document has (%v)", what, len(lost), len(want),
			lost[:min(3, len(lost))], len(extra), extra[:min(3, len(extra))])
	}
}

// datasetRead is what DuckDB read of a dataset (scripts/parquet_check.mjs).
type datasetRead struct {
	Rows    int      `json:"rows"`
	Keys    int      `json:"keys"`
	KeyList []string `json:"keyList"`
	Parts   []struct {
		Crawl string `json:"crawl"`
		Hour  string `json:"hour"`
		Rows  int    `json:"rows"`
	} `json:"parts"`
}

// duckdbRead reads every Parquet part under dir with DuckDB, hive partitions as columns.
func duckdbRead(t *testing.T, dir string) datasetRead {
	t.Helper()
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".tools", "duckdb", "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		t.Fatal("DuckDB is not installed: run scripts/tools.sh")
	}
	cmd := exec.Command("node", filepath.Join(root, "scripts", "parquet_check.mjs"), dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB could not read the dataset: %v\n%s", err, stderr.String())
	}
	var read datasetRead
	if err := json.Unmarshal(out, &read); err != nil {
		t.Fatalf("parquet_check: %v\n%s", err, out)
	}
	return read
}
