package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// A render worker killed right after its run claimed pages to render (the render claims of
// the four kinds a dead worker can hold: chunk, top-up and processing are
// TestRecoveryAfterAllRolesDie's) leaves nothing held past the recovery bound: the crawl's next
// render run takes the dead attempt's claims at once, and the crawl ends with every page
// rendered.
func TestRecoveryAfterTheRenderWorkerDies(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Scripts = 1, 3, false, true
	wc.DefaultDelay = 300 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	s.startWorkers(s.cfg) // workflow, fetch and process, in process
	s.workerEnvExtra = append(s.workerEnvExtra, "TRAWLER_RENDER_CONCURRENCY=1", "TRAWLER_RENDER_SETTLE=500ms", "TRAWLER_RENDER_MEMORY_MB=256")
	w := superviseWorker(t, s, buildBinary(t, "trawler-worker", "./workers"), "render")
	name := testenv.Unique("render")
	run := s.start(crawl.Spec{Name: name, Seeds: []string{"http://js.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		Render: &crawl.Render{Hosts: []string{"js.test"}}, ProgressInterval: crawl.Duration(time.Second)})
	if !w.killAt(failpoint.RenderClaimed+"#1", 2*time.Minute, nil) {
		t.Fatal("the render worker never claimed a page")
	}
	died := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// What the dead run held: those renders must be done within the bound.
	var held [][]byte
	rows, err := s.store.Pool().Query(ctx, `SELECT url_hash FROM renders WHERE crawl_id = $1 AND state = 'queued' AND claimed_by IS NOT NULL`, name)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h []byte
		_ = rows.Scan(&h)
		held = append(held, h)
	}
	rows.Close()
	if len(held) == 0 {
		t.Fatal("the dead render run held no claim")
	}
	var p crawl.CrawlProgress
	if err := run.Get(ctx, &p); err != nil {
		s.dumpPending()
		t.Fatalf("crawl did not finish: %v", err)
	}
	var pending, done int
	var longest float64
	if err := s.store.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE state <> 'done'), count(*) FILTER (WHERE state = 'done'),
			coalesce(max(extract(epoch FROM rendered_at - $2::timestamptz)) FILTER (WHERE url_hash = ANY($3)), 0)
		FROM renders WHERE crawl_id = $1`, p.CrawlID, died, held).Scan(&pending, &done, &longest); err != nil {
		t.Fatal(err)
	}
	t.Logf("crawl ended %.0fs after the death; %d renders done; the %d the dead run held done within %.0fs", time.Since(died).Seconds(), done, len(held), longest)
	if p.State != crawl.CrawlDone || pending != 0 || done == 0 {
		t.Fatalf("crawl ended %s, %d renders done, %d not", p.State, done, pending)
	}
	if longest > recoveryBound.Seconds() {
		t.Errorf("a render the dead run held was done %.0fs after the death (bound %v)", longest, recoveryBound)
	}
	checkNoPoliteness(t, s)
}
