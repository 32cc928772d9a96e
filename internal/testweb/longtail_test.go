package testweb

import "testing"

// The long-tailed web is shaped like the web: most hosts tiny, a few large ones holding a
// large share of the pages, seeds on every tenth host.
func TestLongTailedWebIsShapedLikeTheWeb(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.LongTail, cfg.SeedEvery, cfg.Specials = 10_000, true, 10, false
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var tiny, large, pages, largePages int
	for h := 0; h < cfg.Hosts; h++ {
		n := w.pagesOf(h)
		pages += n
		switch {
		case n <= 5:
			tiny++
		case n >= 1000:
			large++
			largePages += n
		}
	}
	if share := float64(tiny) / float64(cfg.Hosts); share < 0.65 || share > 0.75 {
		t.Errorf("hosts with 1–5 pages: %.2f, want ~0.70", share)
	}
	if share := float64(large) / float64(cfg.Hosts); share < 0.03 || share > 0.07 {
		t.Errorf("hosts with 1,000+ pages: %.3f, want ~0.05", share)
	}
	if share := float64(largePages) / float64(pages); share < 0.4 {
		t.Errorf("pages on large hosts: %.2f, want at least 0.40", share)
	}
	if n := len(w.Seeds()); n != 1000 {
		t.Errorf("%d seeds, want one every 10 hosts (1000)", n)
	}
	t.Logf("%d pages; %d tiny hosts, %d large ones holding %.0f%%", pages, tiny, large, 100*float64(largePages)/float64(pages))
}
