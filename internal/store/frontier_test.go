package store_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

func cand(url, host string, depth int) store.Candidate {
	h := sha256.Sum256([]byte(url))
	return store.Candidate{URL: url, Hash: h[:16], Host: host, Depth: depth, Source: "link"}
}

func newStoreB(b *testing.B) (*store.Store, context.Context) { return newStore(b, 0, 0) }

func newStore(t testing.TB, maxPages, perHost int) (*store.Store, context.Context) {
	pool, _ := testenv.Postgres(t)
	s := store.New(pool)
	ctx := context.Background()
	if _, err := s.Crawls().CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{"http://a.test/"}, MaxPages: maxPages, MaxPagesPerHost: perHost}); err != nil {
		t.Fatal(err)
	}
	return s, ctx
}

func TestAdmitEnforcesBudgetsAndRecordsTheRest(t *testing.T) {
	s, ctx := newStore(t, 5, 3)
	var batch []store.Candidate
	for i := 0; i < 4; i++ {
		batch = append(batch, cand(fmt.Sprintf("http://a.test/%d", i), "a.test", 1))
	}
	batch = append(batch, cand("http://b.test/0", "b.test", 1), cand("http://b.test/1", "b.test", 1), cand("http://a.test/0", "a.test", 1))
	res, err := s.Frontier().Admit(ctx, "c", batch, admit.Budget(0), -1)
	if err != nil {
		t.Fatal(err)
	}
	// a.test: 3 within its per-host budget, 1 over; b.test: 2 within; the repeat of a.test/0 is a duplicate.
	if res.New["a.test"] != 3 || res.New["b.test"] != 2 || res.OverBudget != 1 || res.Duplicates != 1 {
		t.Fatalf("admit: %+v", res)
	}
	res, _ = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://c.test/", "c.test", 0), cand("http://a.test/0", "a.test", 1)}, admit.Budget(0), -1)
	if len(res.New) != 0 || res.OverBudget != 1 || res.Duplicates != 1 { // the crawl's 5 are used up
		t.Fatalf("admit past the crawl budget: %+v", res)
	}
	p, err := s.Crawls().CrawlProgress(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if p.Admitted != 5 || p.ByState["queued"] != 5 || p.Skipped["budget"] != 2 || p.Pending != 5 {
		t.Fatalf("progress: %+v", p)
	}
}

// A crawl with maxHosts takes URLs of that many hosts and skips the others' as "maxHosts":
// new URLs of a host it has keep coming, across admissions (a site of wildcard subdomains).
func TestAdmitStopsTakingHostsAtMaxHosts(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	s := store.New(pool)
	ctx := context.Background()
	if _, err := s.Crawls().CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{"http://a.test/"}, MaxHosts: 2}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/", "a.test", 0), cand("http://x1.a.test/", "x1.a.test", 1),
		cand("http://x2.a.test/", "x2.a.test", 1), cand("http://a.test/2", "a.test", 1)}, admit.Budget(0), -1)
	if err != nil || res.New["a.test"] != 2 || res.New["x1.a.test"] != 1 || res.OverBudget != 1 {
		t.Fatalf("first admission: %+v, %v", res, err)
	}
	res, err = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://x3.a.test/", "x3.a.test", 1), cand("http://x1.a.test/more", "x1.a.test", 2)}, admit.Budget(0), -1)
	if err != nil || len(res.New) != 1 || res.New["x1.a.test"] != 1 || res.OverBudget != 1 {
		t.Fatalf("second admission: %+v, %v", res, err)
	}
	p, err := s.Crawls().CrawlProgress(ctx, "c")
	if err != nil || p.Skipped[crawl.SkipMaxHosts] != 2 || p.Hosts != 2 {
		t.Fatalf("progress: %+v, %v", p, err)
	}
}

func TestClaimLeasesAndReclaimsExpiredLeases(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var batch []store.Candidate
	for i := 0; i < 5; i++ {
		batch = append(batch, cand(fmt.Sprintf("http://a.test/%d", i), "a.test", i))
	}
	if _, err := s.Frontier().Admit(ctx, "c", batch, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	got, _, err := s.Frontier().Claim(ctx, "a.test", 3, time.Minute, now)
	if err != nil || len(got) != 3 || got[0].URL != "http://a.test/0" {
		t.Fatalf("claim: %v %v", got, err)
	}
	rest, _, _ := s.Frontier().Claim(ctx, "a.test", 10, time.Minute, now)
	if len(rest) != 2 {
		t.Fatalf("second claim got %d; the first 3 are leased", len(rest))
	}
	none, next, _ := s.Frontier().Claim(ctx, "a.test", 10, time.Minute, now)
	if len(none) != 0 || next == nil || next.Sub(now) < 50*time.Second {
		t.Fatalf("nothing due: %v, next %v (the earliest lease end)", none, next)
	}
	// The claimer died: after the lease, the URLs are claimable again.
	again, _, _ := s.Frontier().Claim(ctx, "a.test", 10, time.Minute, now.Add(2*time.Minute))
	if len(again) != 5 {
		t.Fatalf("after the lease: %d reclaimed, want 5", len(again))
	}
	if err := s.Frontier().Release(ctx, again[:2]); err != nil {
		t.Fatal(err)
	}
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlPaused); err != nil {
		t.Fatal(err)
	}
	if paused, _, _ := s.Frontier().Claim(ctx, "a.test", 10, time.Minute, now.Add(3*time.Minute)); len(paused) != 0 {
		t.Fatalf("claimed %d URLs of a paused crawl", len(paused))
	}
}

func TestRecordFetchIsIdempotentAndDeadLetters(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	c := cand("http://a.test/x", "a.test", 0)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for attempt := 1; attempt <= 3; attempt++ {
		o := store.FetchOutcome{CrawlID: "c", Hash: c.Hash, URL: c.URL, FetchKey: fmt.Sprintf("k%d", attempt), FetchedAt: now,
			Status: 500, Err: "HTTP 500", Attempts: attempt, State: crawl.URLQueued, NextFetchAt: now}
		if attempt == 3 {
			o.State = crawl.URLDead
		}
		for run := 0; run < 2; run++ { // the activity ran twice
			recorded, err := s.Fetches().RecordFetch(ctx, "a.test", o)
			if err != nil {
				t.Fatal(err)
			}
			if recorded != (run == 0) {
				t.Fatalf("attempt %d run %d: recorded = %v", attempt, run, recorded)
			}
		}
	}
	var fetches, deadLetters int
	_ = s.Pool().QueryRow(ctx, `SELECT count(*) FROM fetches`).Scan(&fetches)
	_ = s.Pool().QueryRow(ctx, `SELECT count(*) FROM dead_letters`).Scan(&deadLetters)
	rec, err := s.Inspect().HostRecordOf(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if fetches != 3 || rec.Errors != 3 || rec.Fetched != 0 || rec.LastError != "HTTP 500" || deadLetters != 1 {
		t.Fatalf("fetches %d, host errors %d, answered %d, last error %q, dead letters %d; want 3, 3, 0, HTTP 500, 1",
			fetches, rec.Errors, rec.Fetched, rec.LastError, deadLetters)
	}
	dl, err := s.Fetches().DeadLetters(ctx, "c", 10)
	if err != nil || len(dl) != 1 || dl[0].Reason != "HTTP 500" {
		t.Fatalf("dead letters: %+v %v", dl, err)
	}
	if p, _ := s.Crawls().CrawlProgress(ctx, "c"); p.Dead != 1 || p.Pending != 0 || p.Errors != 3 {
		t.Fatalf("progress: %+v", p)
	}
	// An answered request, recorded twice (a retried activity), counts once in the host's
	// record, with its bytes; the latest failure stays the host's last error.
	ok := cand("http://a.test/y", "a.test", 0)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{ok}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if _, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: "c", Hash: ok.Hash, URL: ok.URL, FetchKey: "ok",
			FetchedAt: now.Add(time.Second), Status: 200, Bytes: 1234, Attempts: 1, State: crawl.URLDone, NextFetchAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if rec, err := s.Inspect().HostRecordOf(ctx, "a.test"); err != nil || rec.Fetched != 1 || rec.Errors != 3 || rec.Bytes != 1234 || rec.LastError != "HTTP 500" {
		t.Fatalf("host record after an answer: %+v %v; want 1 answered, 3 failed, 1234 bytes, last error HTTP 500", rec, err)
	}
}

func TestSaveDocumentMarksExactDuplicates(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, b := cand("http://a.test/1", "a.test", 0), cand("http://a.test/2", "a.test", 0)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a, b}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	content := sha256.Sum256([]byte("same body"))
	for i, c := range []store.Candidate{a, b, b} { // b saved twice: no change the second time
		dup, err := s.Documents().SaveDocument(ctx, store.Document{CrawlID: "c", Hash: c.Hash, ContentHash: content[:], BodyKey: "k", Size: 9},
			[]store.Link{{From: c.Hash, To: a.Hash}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (i == 0) != (dup == nil) {
			t.Fatalf("save %d: dup_of %x", i, dup)
		}
	}
	var docs, links int
	_ = s.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE dup_kind = 'exact'), coalesce(sum(cardinality(link_to)), 0) FROM documents`).Scan(&docs, &links)
	if docs != 1 || links != 2 {
		t.Fatalf("exact duplicates %d, links %d; want 1, 2", docs, links)
	}
}

func TestStaleFetchedPagesAreHandedOutOncePerPeriod(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	c := cand("http://a.test/p", "a.test", 2)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-time.Hour)
	if _, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: "c", Hash: c.Hash, URL: c.URL, FetchKey: "k",
		FetchedAt: long, Status: 200, BodyKey: "bodies/x", ContentType: "text/html", Bytes: 10, State: crawl.URLFetched}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE urls SET updated_at = $1`, long); err != nil {
		t.Fatal(err)
	}
	pages, err := s.Frontier().StaleFetched(ctx, "c", time.Now().Add(-30*time.Minute), 10)
	if err != nil || len(pages) != 1 || pages[0].BodyKey != "bodies/x" || pages[0].Depth != 2 {
		t.Fatalf("stale: %+v %v", pages, err)
	}
	if again, _ := s.Frontier().StaleFetched(ctx, "c", time.Now().Add(-30*time.Minute), 10); len(again) != 0 {
		t.Fatalf("handed out twice in one period: %+v", again)
	}
}

func TestSlotsAreSpacedPerHostAndPerIP(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	ip := netip.MustParseAddr("192.0.2.10")
	now := time.Now()
	// Two hosts on one address, host gap 300ms, IP gap 100ms, booked alternately (as two
	// workers would): each host keeps 300ms, the address 100ms.
	starts := map[string][]time.Time{}
	var all []time.Time
	for i := 0; i < 6; i++ {
		h := []string{"a.test", "b.test"}[i%2]
		st, err := bookSlot(s, ctx, h, 300*time.Millisecond, ip, 100*time.Millisecond, now)
		if err != nil {
			t.Fatal(err)
		}
		starts[h] = append(starts[h], st)
		all = append(all, st)
	}
	for h, ss := range starts {
		for i := 1; i < len(ss); i++ {
			if gap := ss[i].Sub(ss[i-1]); gap < 300*time.Millisecond {
				t.Errorf("%s: slots %v apart", h, gap)
			}
		}
	}
	for i := 1; i < len(all); i++ {
		if gap := all[i].Sub(all[i-1]); gap < 100*time.Millisecond {
			t.Errorf("address: slots %v apart", gap)
		}
	}
	// Without an address only the host's schedule counts, and earliest is respected.
	later := time.Now().Add(5 * time.Second)
	if st, _ := bookSlot(s, ctx, "c.test", time.Second, netip.Addr{}, 0, later); st.Before(later.Add(-time.Microsecond)) { // Postgres keeps microseconds
		t.Errorf("booked %v, before earliest %v", st, later)
	}
	// A request that left late pushes both schedules out; an earlier push never pulls them in.
	pushed := time.Now().Add(10 * time.Second)
	if err := s.Schedule().PushSlot(ctx, "a.test", pushed, ip, pushed.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Schedule().PushSlot(ctx, "a.test", now, ip, now); err != nil {
		t.Fatal(err)
	}
	if st, _ := bookSlot(s, ctx, "a.test", time.Second, netip.Addr{}, 0, now); st.Before(pushed.Add(-time.Microsecond)) {
		t.Errorf("host slot %v, before the pushed %v", st, pushed)
	}
	if st, _ := bookSlot(s, ctx, "b.test", time.Second, ip, 0, now); st.Before(pushed.Add(time.Second - time.Microsecond)) {
		t.Errorf("address slot %v, before the pushed %v", st, pushed.Add(time.Second))
	}
}

// Admission signals a host only while its workflow waits: a host whose last claim found work
// claims again after its batch by itself.
func TestAdmitWakesOnlyWaitingHosts(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	res, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://w.test/1", "w.test", 0)}, admit.Budget(0), -1)
	if err != nil || len(res.Wake) != 1 || res.Wake[0] != "w.test" {
		t.Fatalf("a host never claimed is woken: %+v %v", res, err)
	}
	if got, _, err := s.Frontier().Claim(ctx, "w.test", 10, time.Minute, time.Now()); err != nil || len(got) != 1 {
		t.Fatalf("claim: %d %v", len(got), err)
	}
	res, _ = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://w.test/2", "w.test", 1)}, admit.Budget(0), -1)
	if res.New["w.test"] != 1 || len(res.Wake) != 0 {
		t.Fatalf("a busy host is not signalled: %+v", res)
	}
	if got, _, _ := s.Frontier().Claim(ctx, "w.test", 10, time.Minute, time.Now()); len(got) != 1 {
		t.Fatalf("the busy host finds the new URL at its next claim: %d", len(got))
	}
	// A quiet claim (a batch topping itself up, a host awaiting its own processing) that finds
	// nothing leaves the host busy: it claims again by itself.
	if got, _, _ := s.Frontier().ClaimQuietly(ctx, "w.test", "", 10, time.Minute, time.Now()); len(got) != 0 {
		t.Fatalf("nothing left: %d", len(got))
	}
	res, _ = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://w.test/2b", "w.test", 1)}, admit.Budget(0), -1)
	if res.New["w.test"] != 1 || len(res.Wake) != 0 {
		t.Fatalf("a host after an empty quiet claim is not signalled: %+v", res)
	}
	if got, _, _ := s.Frontier().ClaimQuietly(ctx, "w.test", "", 10, time.Minute, time.Now()); len(got) != 1 {
		t.Fatalf("the quiet claim finds the new URL: %d", len(got))
	}
	if got, _, _ := s.Frontier().Claim(ctx, "w.test", 10, time.Minute, time.Now()); len(got) != 0 {
		t.Fatalf("nothing left: %d", len(got))
	}
	res, _ = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://w.test/3", "w.test", 1), cand("http://v.test/", "v.test", 1)}, admit.Budget(0), -1)
	if len(res.Wake) != 2 || res.Wake[0] != "v.test" || res.Wake[1] != "w.test" {
		t.Fatalf("a host whose last claim was empty waits, and is woken: %+v", res)
	}
}

// An admission wakes at most the hosts it is allowed to; the others stay waiting (with their
// URLs queued) for a later admission. A crawl that is not running wakes nobody.
func TestAdmitWakesNoMoreHostsThanAllowed(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var cands []store.Candidate
	for _, h := range []string{"e.test", "d.test", "c.test", "b.test", "a.test"} {
		cands = append(cands, cand("http://"+h+"/", h, 0))
	}
	res, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), 2)
	if err != nil || len(res.Wake) != 2 || res.Wake[0] != "a.test" || res.Wake[1] != "b.test" || len(res.New) != 5 {
		t.Fatalf("5 new hosts, 2 wakes allowed: %+v %v", res, err)
	}
	res, err = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/2", "a.test", 1), cand("http://d.test/2", "d.test", 1)}, admit.Budget(0), 0)
	if err != nil || len(res.Wake) != 0 || len(res.New) != 2 {
		t.Fatalf("no wake allowed: %+v %v", res, err)
	}
	res, err = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://c.test/2", "c.test", 1), cand("http://d.test/3", "d.test", 1),
		cand("http://e.test/2", "e.test", 1), cand("http://a.test/3", "a.test", 1)}, admit.Budget(0), -1)
	if err != nil || !slices.Equal(res.Wake, []string{"c.test", "d.test", "e.test"}) {
		t.Fatalf("the hosts left waiting are woken by the next admission (a.test is busy): %+v %v", res, err)
	}
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlPaused); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Frontier().Claim(ctx, "f.test", 10, time.Minute, time.Now()); err != nil || len(got) != 0 {
		t.Fatalf("claim: %v %v", got, err)
	}
	res, err = s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://f.test/", "f.test", 0)}, admit.Budget(0), -1)
	if err != nil || len(res.Wake) != 0 || res.New["f.test"] != 1 {
		t.Fatalf("a paused crawl's admission wakes nobody: %+v %v", res, err)
	}
}

// A claimer that runs again under the same owner (a replayed local activity, a retried fetch
// lease) takes its live claims back first; a later lease of the host (another owner) takes a
// dead lease's claims at once, however long their TTL (one lease runs per host at a time, so
// they can be no one else's); an anonymous claim waits for the TTL.
func TestClaimAsGivesAnOwnerItsClaimsBack(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://o.test/1", "o.test", 0), cand("http://o.test/2", "o.test", 1),
		cand("http://o.test/3", "o.test", 2)}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	first, _, err := s.Frontier().ClaimAs(ctx, "o.test", "host:r/0", 1, time.Hour, now)
	if err != nil || len(first) != 1 {
		t.Fatalf("claim: %d %v", len(first), err)
	}
	if others, _, _ := s.Frontier().Claim(ctx, "o.test", 10, time.Hour, now); len(others) != 2 {
		t.Fatalf("an anonymous claim gets only the unclaimed URLs: %+v", others)
	}
	again, _, _ := s.Frontier().ClaimAs(ctx, "o.test", "host:r/0", 1, time.Hour, now)
	if len(again) != 1 || string(again[0].Hash) != string(first[0].Hash) {
		t.Fatalf("the owner gets its claim back first: %+v", again)
	}
	// A retry of a lease claims as its owner, and takes back first the chunks its dead
	// predecessor claimed as the chunk owner, ahead of better-ranked URLs.
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://p.test/1", "p.test", 0), cand("http://p.test/2", "p.test", 1),
		cand("http://p.test/3", "p.test", 2)}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	now = time.Now()
	if best, _, _ := s.Frontier().Claim(ctx, "p.test", 1, time.Hour, now); len(best) != 1 || !strings.HasSuffix(best[0].URL, "/1") {
		t.Fatalf("the best-ranked URL: %+v", best)
	}
	chunk, _, _ := s.Frontier().ClaimAs(ctx, "p.test", crawl.ChunkOwner("host:r/1"), 1, time.Hour, now)
	if len(chunk) != 1 || !strings.HasSuffix(chunk[0].URL, "/2") {
		t.Fatalf("the chunk owner's claim: %+v", chunk)
	}
	if retry, _, _ := s.Frontier().ClaimAs(ctx, "p.test", "host:r/1", 1, time.Hour, now); len(retry) != 1 || !strings.HasSuffix(retry[0].URL, "/2") {
		t.Fatalf("the retry takes back its chunk first: %+v", retry)
	}
	// The lease died holding claims an hour ahead; the host's next run claims them now.
	next, _, _ := s.Frontier().ClaimAs(ctx, "o.test", "host:r2/0", 10, time.Hour, now)
	if len(next) != 3 {
		t.Fatalf("the next lease takes the dead lease's claims at once: %d of 3", len(next))
	}
}

// What a crawl waits on shows in its progress: claims past their lease, pages awaiting
// processing and how long the oldest has waited, and owned claims are released by their
// owner.
func TestProgressShowsWhatRecoveryWaitsOn(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, b, c := cand("http://a.test/1", "a.test", 1), cand("http://a.test/2", "a.test", 1), cand("http://a.test/3", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a, b, c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	claimed, _, err := s.Frontier().ClaimAs(ctx, "a.test", "host:r/1", 3, time.Minute, time.Now())
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE urls SET claimed_until = now() - interval '1 second'`); err != nil { // their claimer died
		t.Fatal(err)
	}
	if _, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: "c", Hash: a.Hash, URL: a.URL, FetchKey: "k1",
		FetchedAt: time.Now(), Status: 200, BodyKey: "bodies/a", ContentType: "text/html", Bytes: 5, State: crawl.URLFetched}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE urls SET updated_at = now() - interval '40 seconds' WHERE url_hash = $1`, a.Hash); err != nil {
		t.Fatal(err)
	}
	p, err := s.Crawls().CrawlProgress(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	w := p.Waiting
	if w.ExpiredClaims != 2 || w.Unprocessed != 1 || w.OldestFetchS < 39 || w.OldestFetchS > 60 {
		t.Errorf("waiting = %+v, want 2 expired claims and 1 page unprocessed for ~40 s", w)
	}
	// The held URLs are named, oldest first in each state, with their owner.
	if len(w.Held) != 3 || w.Held[0].State != crawl.URLClaimed || w.Held[0].By != "host:r/1" ||
		w.Held[2].URL != a.URL || w.Held[2].State != crawl.URLFetched || w.Held[2].SinceS < 39 {
		t.Errorf("held = %+v, want the two claims by host:r/1, then %s fetched ~40 s ago", w.Held, a.URL)
	}
	if err := s.Frontier().ReleaseOwned(ctx, "a.test", []string{"host:r/1"}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Crawls().CrawlProgress(ctx, "c"); p.ByState[crawl.URLQueued] != 2 || p.ByState[crawl.URLFetched] != 1 {
		t.Errorf("after releasing the owner's claims: %v, want 2 queued and the fetched page left alone", p.ByState)
	}
	hosts, err := s.Frontier().QueuedHosts(ctx, "c", [][]byte{a.Hash, b.Hash})
	if err != nil || len(hosts) != 1 || hosts[0] != "a.test" {
		t.Errorf("queued hosts: %v %v", hosts, err)
	}
}

func TestAdmitSkipsURLsOfRetiredHosts(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	if err := s.Hosts().HostFailing(ctx, "dead.test", "dns"); err != nil {
		t.Fatal(err)
	}
	if retired, err := s.Hosts().RetireIfDead(ctx, "dead.test", 0); err != nil || !retired {
		t.Fatalf("retire: %v %v", retired, err)
	}
	dead, live := cand("http://dead.test/a", "dead.test", 1), cand("http://live.test/a", "live.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{dead, live}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cand store.Candidate
		want crawl.URLState
	}{{dead, crawl.URLSkipped}, {live, crawl.URLQueued}} {
		state, _, err := s.Frontier().URLState(ctx, "c", c.cand.Hash)
		if err != nil || state != c.want {
			t.Fatalf("%s: state %q (%v), want %q", c.cand.URL, state, err, c.want)
		}
	}
	p, err := s.Crawls().CrawlProgress(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if p.Skipped["host retired: dns"] != 1 {
		t.Fatalf("skip reasons: %+v", p.Skipped)
	}
}

// A sitemap read again with a newer <lastmod> for a page fetched before it brings that page's
// recrawl forward to now, and wakes its waiting host; an older <lastmod> changes nothing.
func TestSitemapLastModBringsARecrawlForward(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	c := cand("http://w.test/page", "w.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Frontier().Claim(ctx, "w.test", 10, time.Minute, time.Now())
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %d %v", len(got), err)
	}
	fetchedAt := time.Now().Add(-2 * time.Hour)
	if _, err := s.Fetches().RecordFetch(ctx, "w.test", store.FetchOutcome{CrawlID: "c", Hash: c.Hash, URL: c.URL, FetchKey: "k1",
		FetchedAt: fetchedAt, Status: 304, State: crawl.URLQueued, NextFetchAt: time.Now().Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Frontier().Claim(ctx, "w.test", 10, time.Minute, time.Now()); len(got) != 0 { // nothing due: the host waits
		t.Fatalf("due before its recrawl: %d", len(got))
	}
	old := c
	old.LastMod = fetchedAt.Add(-time.Hour)
	if res, err := s.Frontier().Admit(ctx, "c", []store.Candidate{old}, admit.Budget(0), -1); err != nil || res.Forward != 0 || len(res.Wake) != 0 {
		t.Fatalf("an older lastmod: %+v %v", res, err)
	}
	newer := c
	newer.LastMod = fetchedAt.Add(time.Hour)
	res, err := s.Frontier().Admit(ctx, "c", []store.Candidate{newer}, admit.Budget(0), -1)
	if err != nil || res.Forward != 1 || len(res.Wake) != 1 || res.Wake[0] != "w.test" || res.Duplicates != 1 {
		t.Fatalf("a newer lastmod: %+v %v", res, err)
	}
	if got, _, _ := s.Frontier().Claim(ctx, "w.test", 10, time.Minute, time.Now()); len(got) != 1 {
		t.Fatalf("the page is due again: %d", len(got))
	}
}

// bookSlot books a slot of no frontier URL, returning its start.
func bookSlot(s *store.Store, ctx context.Context, host string, hostGap time.Duration, ip netip.Addr, ipGap time.Duration, earliest time.Time) (time.Time, error) {
	slot, err := s.Schedule().BookSlot(ctx, host, hostGap, ip, ipGap, earliest, nil)
	return slot.Start, err
}
