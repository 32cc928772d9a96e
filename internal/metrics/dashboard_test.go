package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The Grafana dashboard in deploy/grafana queries only series Trawler declares, and every
// declared series is on it.
func TestDashboardUsesDeclaredSeries(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/trawler.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	name := regexp.MustCompile(`\btrawler_[a-z0-9_]+`)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				n = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")
				if !slices.Contains(Series, n) {
					t.Errorf("panel %q queries %s, which Trawler does not emit", p.Title, n)
				}
				used[n] = true
			}
		}
	}
	for _, s := range Series {
		if !used[s] {
			t.Errorf("series %s is on no panel", s)
		}
	}
}
