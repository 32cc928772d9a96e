// Command colly-peer is the benchmark's reference crawler: Colly, configured as politely as
// Trawler is, crawls the same test web through the same connect-to mapping, so `make bench`
// can print Trawler ÷ Colly for pages/s and CPU per page. It lives in its own module so Colly
// is never a dependency of the product.
//
// Politeness, per host: robots.txt first (RFC 9309: 4xx allows all, 5xx or unreachable
// disallows all), its Crawl-delay honoured, one request at a time, at least --delay between
// requests (Colly's LimitRule sleeps the delay after each response, so gaps are delay plus
// latency). It prints one JSON line with its figures.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/temoto/robotstxt"
)

type result struct {
	Pages      int64   `json:"pages"` // 2xx HTML answers
	Requests   int64   `json:"requests"`
	Errors     int64   `json:"errors"`
	Disallowed int64   `json:"disallowed"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	PeakRSSMB  float64 `json:"peakRssMb"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "colly-peer:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("colly-peer", flag.ContinueOnError)
	seeds := fs.String("seeds", "", "comma-separated seed URLs")
	connectTo := fs.String("connect-to", "", "pattern=address: dial every host matching pattern (*.test) at address")
	agent := fs.String("user-agent", "TrawlerBot/1.0", "User-Agent; its first word is the robots.txt product token")
	delay := fs.Duration("delay", time.Second, "least gap between requests to one host (robots.txt Crawl-delay raises it)")
	budget := fs.Duration("budget", 5*time.Minute, "stop after this long (sooner if the crawl ends)")
	maxPages := fs.Int64("max-pages", 0, "stop after this many pages (0: no limit)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *seeds == "" {
		return errors.New("--seeds is required")
	}
	dial, err := dialer(*connectTo)
	if err != nil {
		return err
	}
	tr := &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second}
	// robots.txt redirects are followed (RFC 9309: up to five), each hop a delay after the last.
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if len(via) > 5 {
			return errors.New("more than 5 redirects")
		}
		time.Sleep(*delay)
		return nil
	}}

	c := colly.NewCollector(colly.Async(true), colly.UserAgent(*agent), colly.IgnoreRobotsTxt())
	c.WithTransport(tr)
	c.SetRequestTimeout(30 * time.Second)
	var res result
	var stop atomic.Bool
	p := &politeness{c: c, client: client, agent: *agent, delay: *delay, hosts: map[string]*hostPolicy{}}
	c.OnRequest(func(r *colly.Request) {
		if stop.Load() {
			r.Abort()
			return
		}
		if !p.allowed(r.URL.Host, r.URL.RequestURI()) {
			atomic.AddInt64(&res.Disallowed, 1)
			r.Abort()
			return
		}
		atomic.AddInt64(&res.Requests, 1)
	})
	c.OnError(func(*colly.Response, error) { atomic.AddInt64(&res.Errors, 1) })
	c.OnResponse(func(r *colly.Response) {
		if r.StatusCode/100 == 2 && strings.Contains(r.Headers.Get("Content-Type"), "html") {
			if n := atomic.AddInt64(&res.Pages, 1); *maxPages > 0 && n >= *maxPages {
				stop.Store(true)
			}
		}
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if !stop.Load() {
			_ = e.Request.Visit(e.Attr("href")) // repeats and off-scheme links are Colly's to refuse
		}
	})
	start := time.Now()
	// At the budget the figures are printed and the process ends: requests already waiting
	// for their host's limit rule would otherwise go on after it.
	var once sync.Once
	report := func() {
		once.Do(func() {
			stop.Store(true)
			out := result{Pages: atomic.LoadInt64(&res.Pages), Requests: atomic.LoadInt64(&res.Requests),
				Errors: atomic.LoadInt64(&res.Errors), Disallowed: atomic.LoadInt64(&res.Disallowed), Seconds: time.Since(start).Seconds()}
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
				out.CPUSeconds = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
				out.PeakRSSMB = float64(ru.Maxrss) / 1024
			}
			_ = json.NewEncoder(os.Stdout).Encode(out)
			os.Exit(0)
		})
	}
	time.AfterFunc(*budget, report)
	for _, s := range strings.Split(*seeds, ",") {
		if err := c.Visit(strings.TrimSpace(s)); err != nil {
			return fmt.Errorf("seed %s: %w", s, err)
		}
	}
	c.Wait()
	report()
	return nil
}

// dialer sends hosts matching the connect-to pattern to its address and refuses the rest: the
// benchmark must never leave the loopback test web.
func dialer(spec string) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	pattern, target, ok := strings.Cut(spec, "=")
	if !ok || !strings.HasPrefix(pattern, "*.") {
		return nil, fmt.Errorf("--connect-to %q: want *.suffix=host:port", spec)
	}
	suffix := pattern[1:]
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil || !strings.HasSuffix(host, suffix) {
			return nil, fmt.Errorf("refusing %s: not under %s", addr, pattern)
		}
		return d.DialContext(ctx, network, target)
	}, nil
}

// politeness fetches each host's robots.txt before its first page and gives the host a Colly
// limit rule of its own (a rule's parallelism is shared by every host it matches).
type politeness struct {
	c      *colly.Collector
	client *http.Client
	agent  string
	delay  time.Duration
	mu     sync.Mutex
	hosts  map[string]*hostPolicy
}

type hostPolicy struct {
	once   sync.Once
	robots *robotstxt.RobotsData
}

func (p *politeness) allowed(host, path string) bool {
	p.mu.Lock()
	h := p.hosts[host]
	if h == nil {
		h = &hostPolicy{}
		p.hosts[host] = h
	}
	p.mu.Unlock()
	h.once.Do(func() {
		h.robots = p.robots(host)
		delay := max(p.delay, h.robots.FindGroup(p.token()).CrawlDelay)
		_ = p.c.Limit(&colly.LimitRule{DomainGlob: host, Parallelism: 1, Delay: delay})
		time.Sleep(delay) // the first page waits its delay after robots.txt
	})
	return h.robots.TestAgent(path, p.token())
}

func (p *politeness) token() string { return strings.SplitN(p.agent, "/", 2)[0] }

func (p *politeness) robots(host string) *robotstxt.RobotsData {
	req, err := http.NewRequest(http.MethodGet, "http://"+host+"/robots.txt", nil)
	if err == nil {
		req.Header.Set("User-Agent", p.agent)
		var resp *http.Response
		if resp, err = p.client.Do(req); err == nil {
			defer resp.Body.Close()
			if data, err := robotstxt.FromResponse(resp); err == nil {
				return data
			}
		}
	}
	data, _ := robotstxt.FromStatusAndBytes(http.StatusServiceUnavailable, nil) // unreachable: disallow all
	return data
}
