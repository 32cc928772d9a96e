package admit_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// priorityCrawl is a new crawl "c" of any scope seeded with seed, its store, and the policy
// that makes its candidates.
func priorityCrawl(t *testing.T, seed string) (*pgxpool.Pool, *store.Store, context.Context, *policy.Crawls) {
	t.Helper()
	pool, _ := testenv.Postgres(t)
	st := store.New(pool)
	ctx := context.Background()
	if _, err := st.Crawls().CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{seed}, Scope: crawl.ScopeAny}.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	return pool, st, ctx, &policy.Crawls{Norm: urlnorm.New(urlnorm.Default())}
}

// A claim hands out a host's URLs in the documented priority order (policy's candidate.go priority, the
// README's Priority): depth, seeds and sitemap files, a sitemap's <priority> and <lastmod>,
// feed items by freshness, and in-links, each as the formula weighs it.
func TestClaimFollowsThePriorityOrder(t *testing.T) {
	_, st, ctx, c := priorityCrawl(t, "http://p.test/")
	now := time.Now()
	type entry struct {
		path   string
		depth  int
		source crawl.Source
		adjust func(*store.Candidate)
	}
	sitemap := func(prio float64, lastMod time.Time) func(*store.Candidate) {
		return func(cd *store.Candidate) { policy.SitemapPriority(cd, prio, lastMod, now) }
	}
	feed := func(published time.Time) func(*store.Candidate) {
		return func(cd *store.Candidate) { cd.Priority += policy.Fresh(published, now) }
	}
	// In the order a claim must return them.
	want := []entry{
		{"/", 0, crawl.SourceSeed, nil},                                                  // 1 + 1 = 2
		{"/sitemap/top", 2, crawl.SourceSitemap, sitemap(1, now.Add(-24*time.Hour))},     // 0.33 + 0.75 + 0.25 + 0.25 = 1.58
		{"/sitemap.xml", 1, crawl.SourceSitemapFile, nil},                                // 0.5 + 1 = 1.5
		{"/sitemap/changed", 2, crawl.SourceSitemap, sitemap(-1, now.Add(-time.Hour))},   // 0.33 + 0.75 + 0.25 = 1.33
		{"/sitemap/plain", 2, crawl.SourceSitemap, sitemap(-1, time.Time{})},             // 0.33 + 0.75 = 1.08
		{"/feed/fresh", 2, crawl.SourceFeed, feed(now.Add(-time.Hour))},                  // 0.33 + 0.5 = 0.83
		{"/sitemap/low", 6, crawl.SourceSitemap, sitemap(0, now.Add(-365*24*time.Hour))}, // 0.14 + 0.75 - 0.25 = 0.64
		{"/feed/week", 2, crawl.SourceFeed, feed(now.Add(-7 * 24 * time.Hour))},          // 0.33 + 0.25 = 0.58
		{"/link/shallow", 1, crawl.SourceLink, nil},                                      // 0.5
		{"/link/popular", 3, crawl.SourceLink, nil},                                      // 0.25 + 3 × 0.05 = 0.4
		{"/feed/old", 2, crawl.SourceFeed, feed(now.Add(-400 * 24 * time.Hour))},         // 0.33
		{"/link/deep", 3, crawl.SourceLink, nil},                                         // 0.25
		{"/link/deeper", 5, crawl.SourceLink, nil},                                       // 0.17
	}
	var cands []store.Candidate
	for i := len(want) - 1; i >= 0; i-- { // admitted in reverse, so the order is the claim's doing
		e := want[i]
		cd := c.Candidate("http://p.test"+e.path, e.depth, 0, e.source)
		if e.adjust != nil {
			e.adjust(&cd)
		}
		cands = append(cands, cd)
	}
	if _, err := st.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	popular := c.Candidate("http://p.test/link/popular", 3, 0, crawl.SourceLink)
	for range 3 { // linked again from three more pages
		if _, err := st.Frontier().Admit(ctx, "c", []store.Candidate{popular}, admit.Budget(0), -1); err != nil {
			t.Fatal(err)
		}
	}
	claimed, _, err := st.Frontier().Claim(ctx, "p.test", 100, time.Minute, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != len(want) {
		t.Fatalf("claimed %d URLs, want %d", len(claimed), len(want))
	}
	for i, u := range claimed {
		if u.URL != "http://p.test"+want[i].path {
			var got []string
			for _, u := range claimed {
				got = append(got, u.URL)
			}
			t.Fatalf("claim order %q", got)
		}
	}
}

// Each further link to a queued URL raises its priority by store.InLinkBoost, for at most
// store.MaxInLinkBoosts links; a link past them leaves the URL's row as it was (schema 0041: each
// boost locks the row and writes a new version of it).
func TestInLinksRaiseAQueuedURLUpToTheirCap(t *testing.T) {
	pool, st, ctx, c := priorityCrawl(t, "http://q.test/")
	page := c.Candidate("http://q.test/popular", 3, 0, crawl.SourceLink)
	admitOnce := func() {
		t.Helper()
		if _, err := st.Frontier().Admit(ctx, "c", []store.Candidate{page}, admit.Budget(0), -1); err != nil {
			t.Fatal(err)
		}
	}
	row := func() (prio float32, boosts int, version string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT priority, boosts, xmin::text FROM urls WHERE crawl_id = 'c' AND url_hash = $1`,
			page.Hash).Scan(&prio, &boosts, &version); err != nil {
			t.Fatal(err)
		}
		return prio, boosts, version
	}
	admitOnce() // new: no boost
	base, boosts, _ := row()
	if boosts != 0 || base != page.Priority {
		t.Fatalf("new URL: priority %v, boosts %d; want %v, 0", base, boosts, page.Priority)
	}
	for range store.MaxInLinkBoosts {
		admitOnce()
	}
	prio, boosts, version := row()
	want := base + store.MaxInLinkBoosts*store.InLinkBoost
	if boosts != store.MaxInLinkBoosts || prio < want-1e-4 || prio > want+1e-4 {
		t.Fatalf("after %d further links: priority %v, boosts %d; want %v, %d", store.MaxInLinkBoosts, prio, boosts, want, store.MaxInLinkBoosts)
	}
	for range 3 {
		admitOnce()
	}
	if p, b, v := row(); p != prio || b != boosts || v != version {
		t.Fatalf("links past the cap: priority %v, boosts %d, row version %s; want %v, %d, %s (not rewritten)", p, b, v, prio, boosts, version)
	}
}

// A queued requisite that a page then links becomes a link, with its first boost.
func TestALinkedRequisiteBecomesALink(t *testing.T) {
	pool, st, ctx, c := priorityCrawl(t, "http://q.test/")
	for _, src := range []crawl.Source{crawl.SourceEmbed, crawl.SourceLink} {
		cd := c.Candidate("http://q.test/logo.png", 1, 0, src)
		if _, err := st.Frontier().Admit(ctx, "c", []store.Candidate{cd}, admit.Budget(0), -1); err != nil {
			t.Fatal(err)
		}
	}
	var source string
	var boosts int
	if err := pool.QueryRow(ctx, `SELECT source, boosts FROM urls WHERE crawl_id = 'c' AND url = 'http://q.test/logo.png'`).Scan(&source, &boosts); err != nil {
		t.Fatal(err)
	}
	if source != string(crawl.SourceLink) || boosts != 1 {
		t.Fatalf("a requisite linked once: source %s, boosts %d; want link, 1", source, boosts)
	}
}
