package retention_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/retention"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// A sweep deletes the crawls that ended before the retention, and only those: a crawl that
// ended recently and a running one keep their rows and objects.
func TestASweepDeletesOnlyCrawlsEndedBeforeTheRetention(t *testing.T) {
	ctx := context.Background()
	pool, _ := testenv.Postgres(t)
	b := testenv.Blob(t)
	st := store.New(pool)
	for _, c := range []struct {
		id, state string
		ended     time.Duration
	}{{"old", "done", 48 * time.Hour}, {"stopped-old", "stopped", 30 * time.Hour}, {"recent", "done", time.Hour}, {"live", "running", 0}} {
		if _, err := st.Crawls().CreateCrawl(ctx, c.id, crawl.Spec{Name: c.id, Seeds: []string{"http://a.test/"}}.WithDefaults()); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `UPDATE crawls SET state = $2, finished_at = CASE WHEN $2 = 'running' THEN NULL ELSE now() - $3::interval END WHERE id = $1`,
			c.id, c.state, c.ended.String()); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"warc/" + c.id + "/a.warc.gz", segment.GroupPrefix("segments/bodies", c.id) + "20261124/w-1.gz"} {
			if err := b.Put(ctx, k, []byte("x"), "application/octet-stream"); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A segment written before segments were per crawl, in a day's folder shared by every
	// crawl: a crawl named like that day must not own it.
	if err := b.Put(ctx, "segments/bodies/20261124/w-0.gz", []byte("x"), "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	d := &retention.Deleter{Store: st, Blob: b}
	dry, err := d.Sweep(ctx, 24*time.Hour, time.Now(), true)
	if err != nil || len(dry) != 2 {
		t.Fatalf("dry sweep: %d plans, %v; want 2", len(dry), err)
	}
	if keys, _ := b.List(ctx, ""); len(keys) != 9 {
		t.Fatalf("a dry sweep left %d of 9 objects", len(keys))
	}
	plans, err := d.Sweep(ctx, 24*time.Hour, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, p := range plans {
		deleted = append(deleted, p.Crawl)
		if len(p.Objects) != 2 || p.Rows["crawls"] != 1 {
			t.Errorf("%s: deleted %v and rows %v; want its 2 objects and its crawl row", p.Crawl, p.Objects, p.Rows)
		}
	}
	if want := []string{"old", "stopped-old"}; !slices.Equal(deleted, want) {
		t.Errorf("swept %v; want %v", deleted, want)
	}
	keys, _ := b.List(ctx, "")
	for _, id := range []string{"recent", "live"} {
		if exists, _, _ := st.Crawls().CrawlLive(ctx, id); !exists {
			t.Errorf("crawl %s was deleted", id)
		}
	}
	if len(keys) != 5 {
		t.Errorf("objects left %v; want the 4 of the crawls kept and the shared one", keys)
	}
	if _, err := st.Crawls().CreateCrawl(ctx, "20261124", crawl.Spec{Name: "20261124", Seeds: []string{"http://a.test/"}}.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE crawls SET state = 'done', finished_at = now() - interval '1 hour' WHERE id = '20261124'`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Delete(ctx, "20261124", false); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Exists(ctx, "segments/bodies/20261124/w-0.gz"); !ok {
		t.Error("deleting crawl 20261124 deleted the shared segment of that day")
	}
	if _, err := d.Sweep(ctx, 0, time.Now(), false); err == nil {
		t.Error("a sweep with no age was taken")
	}
}

// Deleting a crawl named like the start of another's ID (crawls, and crawls/x made by a
// `temporal workflow start` before IDs were checked) leaves the other's objects whole; a name no
// crawl could have is refused, and a new crawl's ID is checked (crawl.CheckID).
func TestADeleteTouchesOnlyItsOwnCrawlsObjects(t *testing.T) {
	ctx := context.Background()
	pool, _ := testenv.Postgres(t)
	b := testenv.Blob(t)
	st := store.New(pool)
	for _, id := range []string{"crawls", "crawls/x"} {
		if _, err := st.Crawls().CreateCrawl(ctx, id, crawl.Spec{Seeds: []string{"http://a.test/"}}.WithDefaults()); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `UPDATE crawls SET state = 'done', finished_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"warc/" + id + "/a.warc.gz", segment.GroupPrefix("segments/text", id) + "20261124/w-1.gz"} {
			if err := b.Put(ctx, k, []byte("x"), "application/octet-stream"); err != nil {
				t.Fatal(err)
			}
		}
	}
	d := &retention.Deleter{Store: st, Blob: b}
	p, err := d.Delete(ctx, "crawls", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"segments/text/crawl=crawls/20261124/w-1.gz", "warc/crawls/a.warc.gz"}; !slices.Equal(sorted(p.Objects), want) {
		t.Errorf("deleted %v; want only %v", p.Objects, want)
	}
	keys, _ := b.List(ctx, "")
	if want := []string{"segments/text/crawl=crawls/x/20261124/w-1.gz", "warc/crawls/x/a.warc.gz"}; !slices.Equal(sorted(keys), want) {
		t.Errorf("left %v; want the other crawl's %v", keys, want)
	}
	if _, err := d.Delete(ctx, "no/such", true); err == nil {
		t.Error("a delete of a name no crawl could have was not refused")
	}
	for _, id := range []string{"news-2026.11_a", "a/b", "..", "", "x y", "ü"} {
		if err := crawl.CheckID(id); (err == nil) != (id == "news-2026.11_a") {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
