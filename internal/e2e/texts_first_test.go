package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// A document row names its text's segment only once that segment is stored: a processing
// worker killed right after it saved documents leaves no row naming text that was never
// written. (Its texts wait 8 s for their segment here, so a row saved before them would name
// a segment the kill lost.)
func TestDocumentsNameOnlyStoredTexts(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 6, false
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	cfg := *s.cfg
	cfg.Roles = []string{config.RoleWorkflow, config.RoleFetch}
	s.startWorkers(&cfg)
	s.workerEnvExtra = []string{"TRAWLER_SEGMENT_MAX_AGE=8s"}
	proc := superviseWorker(t, s, buildBinary(t, "trawler-worker", "./workers"), config.RoleProcess)
	run := s.start(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)})
	if !proc.killAt(failpoint.DocumentSaved+"#1", 90*time.Second, nil) {
		t.Fatal("the process worker never saved a document")
	}
	ctx := context.Background()
	rows, err := s.store.Pool().Query(ctx, `SELECT DISTINCT text_key FROM documents WHERE text_key IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for rows.Next() {
		var ref string
		if err := rows.Scan(&ref); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	rows.Close()
	if len(refs) == 0 {
		t.Fatal("no document names a text")
	}
	for _, ref := range refs {
		key, _, _, ok := segment.ParseRef(ref)
		if !ok {
			t.Errorf("text key %q is not a segment reference", ref)
			continue
		}
		if found, err := s.blob.Exists(ctx, key); err != nil || !found {
			t.Errorf("a document names text in %s, which was never stored (%v)", key, err)
		}
	}
	if p := s.wait(run, 4*time.Minute); p.State != "done" || p.Pending != 0 {
		t.Errorf("the crawl ended %s with %d pending", p.State, p.Pending)
	}
}
