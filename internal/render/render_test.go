package render_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/render"
)

func browser(t *testing.T, opts render.Options) *render.Browser {
	t.Helper()
	if _, err := render.Find(opts.ExecPath); err != nil {
		t.Fatalf("the render role needs Chromium (make up installs it with scripts/tools.sh): %v", err)
	}
	b, err := render.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// A page's script runs and adds links; every request goes to the policy, which serves the
// document and its own script and blocks the rest (a third-party script, an image); nothing
// else leaves the browser.
func TestRenderRunsScriptsThroughThePolicy(t *testing.T) {
	b := browser(t, render.Options{Concurrency: 2, PageTimeout: 15 * time.Second, Settle: 300 * time.Millisecond, MaxBytes: 1 << 20})
	var mu sync.Mutex
	seen := map[string]int{}
	policy := func(_ context.Context, r render.Request) render.Answer {
		mu.Lock()
		seen[r.URL]++
		mu.Unlock()
		switch r.URL {
		case "http://app.test/":
			return render.Answer{ContentType: "text/html", Body: []byte(`<html><head><script src="/app.js"></script>
				<script src="http://tracker.test/t.js"></script></head><body><p>static</p><img src="/logo.png"></body></html>`)}
		case "http://app.test/app.js":
			return render.Answer{ContentType: "application/javascript", Body: []byte(`document.addEventListener("DOMContentLoaded", () => {
				for (const p of ["/js/1", "/js/2"]) { const a = document.createElement("a"); a.href = p; a.textContent = p; document.body.appendChild(a) }
				setTimeout(() => { const a = document.createElement("a"); a.href = "/js/late"; document.body.appendChild(a) }, 50)
				fetch("http://tracker.test/beacon").catch(() => {})
			})`)}
		}
		return render.Answer{Block: "not ours"}
	}
	res, err := b.Render(context.Background(), "http://app.test/", policy)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="/js/1"`, `href="/js/2"`, `href="/js/late"`, "static"} {
		if !strings.Contains(res.DOM, want) {
			t.Errorf("DOM lacks %s: %s", want, res.DOM)
		}
	}
	if res.Answered != 2 || res.Blocked["not ours"] < 2 {
		t.Errorf("answered %d, blocked %v (requests %d, errors %v)", res.Answered, res.Blocked, res.Requests, res.Errors)
	}
	if seen["http://app.test/"] != 1 || seen["http://app.test/app.js"] != 1 {
		t.Errorf("requests seen by the policy: %v", seen)
	}
}

// A page that never stops (an endless script) is cut at its time limit, and its DOM so far
// is still read; a page over its byte budget gets no more.
func TestRenderBudgets(t *testing.T) {
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 3 * time.Second, MaxBytes: 1000})
	start := time.Now()
	res, err := b.Render(context.Background(), "http://loop.test/", func(_ context.Context, r render.Request) render.Answer {
		switch r.URL {
		case "http://loop.test/":
			return render.Answer{ContentType: "text/html", Body: []byte(`<html><body><p>before</p><script src="/big.js"></script>
				<script>setInterval(() => { const p = document.createElement("p"); p.textContent = "tick"; document.body.appendChild(p) }, 10)</script></body></html>`)}
		case "http://loop.test/big.js":
			return render.Answer{ContentType: "application/javascript", Body: []byte(strings.Repeat("//", 1000))}
		}
		return render.Answer{Block: "no"}
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s with a 3 s page limit", took)
	}
	if !strings.Contains(res.DOM, "before") || res.Blocked["byte budget"] < 1 {
		t.Errorf("DOM %q, blocked %v, errors %v", res.DOM, res.Blocked, res.Errors)
	}
	// A script that never yields: the page is given up at its limits, and the browser
	// renders the next page.
	start = time.Now()
	_, err = b.Render(context.Background(), "http://spin.test/", func(_ context.Context, r render.Request) render.Answer {
		if r.URL == "http://spin.test/" {
			return render.Answer{ContentType: "text/html", Body: []byte(`<html><body><p>spin</p><script>while (true) {}</script></body></html>`)}
		}
		return render.Answer{Block: "no"}
	})
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("a spinning page took %s", took)
	}
	t.Logf("spinning page: %v", err)
	res, err = b.Render(context.Background(), "http://after.test/", func(_ context.Context, r render.Request) render.Answer {
		return render.Answer{ContentType: "text/html", Body: []byte(`<html><body><p>after</p></body></html>`)}
	})
	if err != nil || !strings.Contains(res.DOM, "after") {
		t.Errorf("the next page: %v %+v", err, res)
	}
}
