package e2e

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// A worker started while MinIO is down waits for it and then crawls (make chaos restarts
// workers during a 60 s MinIO outage: those that exited at start left the crawl without its
// workflow and process workers for good). MinIO is "down" here as a port nobody listens on,
// until a forwarder to the stack's MinIO opens on it.
func TestAWorkerStartedDuringAnOutageWaitsForIt(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 3, false
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	bin := buildBinary(t, "trawler-worker", "./workers")
	down := testenv.FreeAddr(t)
	s.workerEnvExtra = append(s.workerEnvExtra, "TRAWLER_S3_ENDPOINT="+down, "TRAWLER_STARTUP_WAIT=2m")
	w := s.startWorkerProcess(t, bin, "workflow,fetch,process")
	time.Sleep(4 * time.Second)
	if w.exited() {
		t.Fatalf("the worker exited while MinIO was down:\n%s", w.out.String())
	}
	if out := w.out.String(); !strings.Contains(out, "waiting for a service") || !strings.Contains(out, "minio") {
		t.Fatalf("the waiting worker did not say what it waits for:\n%s", out)
	}
	forward(t, down, s.cfg.S3Endpoint)
	waitFor(t, time.Minute, func() bool { return strings.Contains(w.out.String(), "worker started") })

	start := time.Now()
	run := s.start(crawl.Spec{Name: testenv.Unique("late"), Seeds: s.web.Seeds(), Scope: crawl.ScopeAny,
		Delay: crawl.Duration(wc.DefaultDelay), ProgressInterval: crawl.Duration(time.Second)})
	p := s.wait(run, 3*time.Minute)
	checkNothingLost(t, s, p, time.Since(start), 0)
}

// forward listens on addr and copies each connection to and from target until the test ends.
func forward(t *testing.T, addr, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c) }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
}
