package testweb

import (
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestAuditFlagsGapsCloserThanTheDelayOnly(t *testing.T) {
	cfg := fastConfig()
	cfg.Specials = false
	srv, c := serve(t, cfg)
	// h0000: polite, 250 ms apart against a required 200 ms.
	for _, p := range []string{"/robots.txt", "/", "/p/1.html"} {
		get(t, c, "http://h0000.test"+p)
		time.Sleep(250 * time.Millisecond)
	}
	// h0010 (profile none, like h0000): impolite, back to back.
	for _, p := range []string{"/robots.txt", "/", "/p/1.html"} {
		get(t, c, "http://h0010.test"+p)
	}
	rep := srv.Web.Audit().Report()
	polite, rude := rep.Host("h0000.test"), rep.Host("h0010.test")
	if polite.GapViolations != 0 || polite.MinGapMs < 240 {
		t.Errorf("polite host flagged: %+v", polite)
	}
	if rude.GapViolations != 2 || rude.MinGapMs > 100 {
		t.Errorf("rude host: %d violations, min gap %.1f ms; want 2 and < 100 ms", rude.GapViolations, rude.MinGapMs)
	}
	if rep.Totals.GapViolations != 2 || rep.Violations() != 2 {
		t.Errorf("totals: %+v", rep.Totals)
	}
}

func TestAuditCrawlDelayFromRobots(t *testing.T) {
	cfg := fastConfig()
	cfg.Specials = false
	srv, c := serve(t, cfg)
	if d := srv.Web.RequiredDelay("h0002.test"); d != 2*time.Second {
		t.Fatalf("h0002 (Crawl-delay: 2) requires %v", d)
	}
	get(t, c, "http://h0002.test/robots.txt")
	time.Sleep(300 * time.Millisecond) // enough for the default, not for Crawl-delay 2
	get(t, c, "http://h0002.test/")
	if v := srv.Web.Audit().Report().Host("h0002.test").GapViolations; v != 1 {
		t.Fatalf("gap violations = %d, want 1", v)
	}
}

func TestAuditConcurrencyRobotsFirstDisallowedRepeats(t *testing.T) {
	cfg := fastConfig()
	srv, c := serve(t, cfg)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ { // two at once on the slow-robots host
		wg.Add(1)
		go func() { defer wg.Done(); get(t, c, "http://h0008.test/robots.txt") }()
	}
	wg.Wait()
	get(t, c, "http://h0003.test/private/3.html")   // before robots.txt, and disallowed
	get(t, c, "http://h0003.test/robots.txt")       // too late
	get(t, c, "http://h0003.test/private/open.txt") // allowed by the longer Allow (404 here)
	get(t, c, "http://h0004.test/robots.txt")
	get(t, c, "http://h0004.test/p/21.html") // our group disallows the /p/2 prefix
	get(t, c, "http://h0004.test/p/1.html")  // allowed for us, though '*' is disallowed
	get(t, c, "http://h0000.test/robots.txt")
	get(t, c, "http://h0000.test/p/1.html")
	get(t, c, "http://h0000.test/p/1.html")
	get(t, c, "http://h0000.test/./p/%31.html") // the same URL, spelled differently
	get(t, c, "http://trap.test/calendar/2026/1")
	get(t, c, "http://nowhere.test/")

	rep := srv.Web.Audit().Report()
	if h := rep.Host("h0008.test"); h.PeakInFlight != 2 || h.ConcurrencyViolations != 1 {
		t.Errorf("h0008: peak %d, violations %d; want 2, 1", h.PeakInFlight, h.ConcurrencyViolations)
	}
	h3 := rep.Host("h0003.test")
	if h3.RobotsFirst || h3.PagesBeforeRobots != 1 || h3.Disallowed != 1 {
		t.Errorf("h0003: %+v", h3)
	}
	if h4 := rep.Host("h0004.test"); h4.Disallowed != 1 || h4.DisallowedPaths[0] != "/p/21.html" {
		t.Errorf("h0004: disallowed %d %v; want just /p/21.html", h4.Disallowed, h4.DisallowedPaths)
	}
	if h0 := rep.Host("h0000.test"); h0.Repeats != 2 || !h0.RobotsFirst {
		t.Errorf("h0000: repeats %d robotsFirst %v; want 2, true", h0.Repeats, h0.RobotsFirst)
	}
	if rep.Totals.TrapRequests != 1 || rep.Totals.UnknownHostRequests != 1 {
		t.Errorf("totals: %+v", rep.Totals)
	}
	if rep.Totals.RobotsNotFirst != 1 { // h0003 only (trap.test too would be, had it been asked first: it was)
		var bad []string
		for _, h := range rep.Hosts {
			if !h.RobotsFirst {
				bad = append(bad, h.Host)
			}
		}
		if len(bad) != 2 || bad[0] != "h0003.test" || bad[1] != "trap.test" {
			t.Errorf("robots not first on %v", bad)
		}
	}
	srv.Web.Audit().Reset()
	if n := srv.Web.Audit().Report().Totals.Requests; n != 0 {
		t.Errorf("after reset: %d requests", n)
	}
}

func TestAuditRetryAfterAndConditional(t *testing.T) {
	cfg := fastConfig()
	srv, c := serve(t, cfg)
	get(t, c, "http://retry.test/robots.txt")
	if r := get(t, c, "http://retry.test/busy/1"); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" {
		t.Fatalf("busy: %d %q", r.status, r.header.Get("Retry-After"))
	}
	get(t, c, "http://retry.test/busy/2") // ignores Retry-After
	time.Sleep(1100 * time.Millisecond)
	if r := get(t, c, "http://retry.test/busy/1"); r.status != http.StatusOK {
		t.Fatalf("busy after waiting: %d", r.status)
	}
	r := get(t, c, "http://etag.test/stable/1")
	etag := r.header.Get("ETag")
	if r2 := get(t, c, "http://etag.test/stable/1", "If-None-Match", etag); r2.status != http.StatusNotModified || len(r2.body) != 0 {
		t.Fatalf("If-None-Match %s: %d", etag, r2.status)
	}
	if r3 := get(t, c, "http://etag.test/stable/1", "If-Modified-Since", r.header.Get("Last-Modified")); r3.status != http.StatusNotModified {
		t.Fatalf("If-Modified-Since: %d", r3.status)
	}
	rep := srv.Web.Audit().Report()
	if h := rep.Host("retry.test"); h.RetryAfterViolations != 1 {
		t.Errorf("retry.test: %d Retry-After violations, want 1 (busy/2)", h.RetryAfterViolations)
	}
	if h := rep.Host("etag.test"); h.NotModified != 2 || h.Conditional != 2 || h.Repeats != 0 {
		t.Errorf("etag.test: %+v", h)
	}
}

// A million requests across 100,000 URLs: the audit's memory stays bounded by the ring and
// the URL set, not by the request count.
func TestAuditMemoryIsBoundedForAMillionRequests(t *testing.T) {
	heap, reqs := auditMillion(t)
	t.Logf("audit heap after %d requests: %.1f MiB", reqs, float64(heap)/(1<<20))
	if heap > 64<<20 {
		t.Fatalf("audit holds %.1f MiB after a million requests; want < 64 MiB", float64(heap)/(1<<20))
	}
}

func BenchmarkAuditRequest(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.Pages, cfg.RingSize = 2000, 50, 100_000
	web, _ := New(cfg)
	a := web.Audit()
	reqs := make([]*http.Request, 1000)
	for i := range reqs {
		reqs[i], _ = http.NewRequest("GET", "http://x/p/"+string(rune('0'+i%10))+".html", nil)
	}
	rec := &recorder{status: 200, wrote: true, bytes: 4000}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tok := a.begin(web.HostName(i%2000), reqs[i%1000])
		a.end(tok, rec)
	}
}

// auditMillion records 1,000,000 requests (2,000 hosts × 50 pages, each fetched 10 times)
// and returns the heap the audit retains.
func auditMillion(t testing.TB) (uint64, int) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.Pages = 2000, 50
	web, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]*http.Request, cfg.Pages)
	g := &generic{w: web}
	for i := range paths {
		paths[i], _ = http.NewRequest("GET", "http://x"+g.path(i), nil)
	}
	hosts := web.Hosts()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := web.Audit()
	rec := &recorder{status: 200, wrote: true, bytes: 4000}
	n := 0
	for round := 0; round < 10; round++ {
		for h := 0; h < cfg.Hosts; h++ {
			for p := 0; p < cfg.Pages; p++ {
				a.end(a.begin(hosts[h], paths[p]), rec)
				n++
			}
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(a)
	if rep := a.Report(); rep.Totals.Requests != n || rep.Totals.Repeats != n-cfg.Hosts*cfg.Pages {
		t.Fatalf("report: %d requests, %d repeats", rep.Totals.Requests, rep.Totals.Repeats)
	}
	return after.HeapInuse - min(before.HeapInuse, after.HeapInuse), n
}
