package testweb

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Web is the synthetic web: an http.Handler over all virtual hosts plus its audit.
type Web struct {
	cfg   Config
	sites map[string]site
	names []string
	audit *Audit
	epoch time.Time
}

// New builds the web described by cfg.
func New(cfg Config) (*Web, error) {
	if cfg.Hosts < 1 || (cfg.Pages < 2 && !cfg.LongTail) {
		return nil, errors.New("testweb: want at least 1 host and 2 pages per host")
	}
	if cfg.ProductToken == "" {
		cfg.ProductToken = "trawlerbot"
	}
	cfg.ProductToken = strings.ToLower(cfg.ProductToken)
	if cfg.MaxInFlight < 1 {
		cfg.MaxInFlight = 1
	}
	w := &Web{cfg: cfg, sites: map[string]site{}, epoch: time.Now()}
	for i := 0; i < cfg.Hosts; i++ {
		g := &generic{w: w, idx: i, name: w.HostName(i)}
		g.spec = g.buildRobots()
		w.sites[g.name] = g
	}
	if cfg.Specials {
		for _, s := range newSpecials(w) {
			w.sites[s.host()] = s
		}
	}
	if cfg.Bytes {
		for _, s := range []special{&bytesSite{w: w}, &movedSite{w: w}} {
			w.sites[s.host()] = s
		}
	}
	if cfg.Signals {
		s := &signalsSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.Formats {
		s := &formatsSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.GreedyDelay {
		w.sites["slowpoke.test"] = &slowpokeSite{w: w}
		w.sites["patient.test"] = &patientSite{w: w}
	}
	if cfg.Sluggish {
		s := &sluggishSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.Cookies {
		s := &cookieSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.Shop {
		s := &shopSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.DocsDir != "" {
		s := &docsSite{w: w, files: http.FileServer(http.Dir(cfg.DocsDir))}
		w.sites[s.host()] = s
	}
	if cfg.Requisites {
		for _, s := range []special{&styleSite{w: w}, &cdnSite{w: w}} {
			w.sites[s.host()] = s
		}
	}
	if cfg.Scripts {
		for _, s := range []special{&scriptsSite{w: w}, &trackerSite{w: w}, &hostileRenderSite{w: w}} {
			w.sites[s.host()] = s
		}
	}
	for n := range w.sites {
		w.names = append(w.names, n)
	}
	sort.Strings(w.names)
	w.audit = newAudit(w)
	return w, nil
}

// Config returns the web's configuration.
func (w *Web) Config() Config { return w.cfg }

// HostName names generic host i.
func (w *Web) HostName(i int) string {
	width := len(fmt.Sprint(w.cfg.Hosts - 1))
	if width < 4 {
		width = 4
	}
	return fmt.Sprintf("h%0*d.test", width, i)
}

// Hosts lists every virtual host, sorted.
func (w *Web) Hosts() []string { return append([]string(nil), w.names...) }

// Seeds is the default seed list: the first generic host's front page (everything is
// reachable from it).
func (w *Web) Seeds() []string {
	if w.cfg.SeedEvery <= 0 {
		return []string{"http://" + w.HostName(0) + "/"}
	}
	var out []string
	for h := 0; h < w.cfg.Hosts; h += w.cfg.SeedEvery {
		out = append(out, "http://"+w.HostName(h)+"/")
	}
	return out
}

// pagesOf is how many pages generic host h has.
func (w *Web) pagesOf(h int) int {
	if !w.cfg.LongTail {
		return w.cfg.Pages
	}
	r := rng(w.cfg.Seed, uint64(h), 1<<40)
	switch p := r.IntN(100); {
	case p < 70:
		return 1 + r.IntN(5)
	case p < 95:
		return 6 + r.IntN(195)
	default:
		return 1000 + r.IntN(1001)
	}
}

// Audit returns the request audit.
func (w *Web) Audit() *Audit { return w.audit }

// RequiredDelay is the minimum gap between request starts a polite crawler keeps on host.
func (w *Web) RequiredDelay(host string) time.Duration {
	if s := w.sites[host]; s != nil {
		if d := s.robots().rules.crawlDelay; d > 0 {
			return d
		}
	}
	return w.cfg.DefaultDelay
}
