package fetch

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/membudget"
	"github.com/trawlerdev/trawler/internal/netguard"
)

// budgetServer serves /plain/N (N bytes, its length announced), /chunked/N (N bytes, no
// length: the body's size is learnt as it is read) and /br/N (N bytes, brotli).
func budgetServer(t *testing.T, budget *membudget.Budget) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var kind string
		var n int
		for i := 1; i < len(r.URL.Path); i++ {
			if r.URL.Path[i] == '/' {
				kind, n = r.URL.Path[1:i], atoi(r.URL.Path[i+1:])
				break
			}
		}
		body := bytes.Repeat([]byte("<p>budget</p>"), n/13+1)[:n]
		switch kind {
		case "plain":
			w.Header().Set("Content-Length", strconv.Itoa(n))
			_, _ = w.Write(body)
		case "chunked":
			for len(body) > 0 { // flushed in pieces: no Content-Length
				k := min(len(body), 32<<10)
				_, _ = w.Write(body[:k])
				w.(http.Flusher).Flush()
				body = body[k:]
			}
		case "br":
			w.Header().Set("Content-Encoding", "br")
			bw := brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: 1, LGWin: 20})
			_, _ = bw.Write(body)
			_ = bw.Close()
		}
	}))
	t.Cleanup(srv.Close)
	rules, err := config.ParseConnectTo("budget.test=" + srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Dialer: netguard.New(netguard.Options{ConnectTo: rules}), Budget: budget})
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// Many large bodies at once through a small budget: every request gets its whole body (none
// fails for want of room), the bytes held never pass the budget plus one request's most (a
// body's cap, a brotli window and tables: the one hold that may overdraw), and
// every byte comes back once the responses are released.
func TestBodiesInFlightStayWithinTheBudget(t *testing.T) {
	const limit, maxBody = 2 << 20, 1 << 20
	budget := membudget.New("test-body", limit)
	c := budgetServer(t, budget)
	var wg sync.WaitGroup
	paths := []string{"plain/700000", "chunked/900000", "br/800000", "chunked/5000", "plain/3000"}
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := paths[i%len(paths)]
			r, err := c.Get(context.Background(), Request{URL: "http://budget.test/" + path, UserAgent: "TrawlerBot/test",
				MaxBytes: maxBody, Timeout: 20 * time.Second})
			defer r.Release()
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			if want := atoi(path[bytes.IndexByte([]byte(path), '/')+1:]); len(r.Body) != want || r.Truncated {
				t.Errorf("%s: %d bytes (truncated %v), want %d", path, len(r.Body), r.Truncated, want)
			}
			time.Sleep(20 * time.Millisecond) // the body is recorded meanwhile: still held
		}()
	}
	wg.Wait()
	if budget.Held() != 0 {
		t.Fatalf("%d bytes still held once every response was released", budget.Held())
	}
	// One request's most: its body's buffer, and a brotli stream's window (1 MiB here) and
	// tables, and its heads.
	if most := int64(maxBody+1+1<<20) + brotliTables + 16<<10; budget.Peak() > limit+most {
		t.Fatalf("peak %d bytes held, past the budget %d plus one request's most %d", budget.Peak(), limit, most)
	}
	if budget.Waits() == 0 {
		t.Fatal("40 bodies of up to 900 kB never waited for a 2 MiB budget: it did not bind")
	}
	t.Logf("peak %d of %d bytes, %d waits", budget.Peak(), limit, budget.Waits())
}

// A request that waits for room waits before its time limit starts: a full budget slows it,
// it does not time it out.
func TestARequestWaitingForRoomIsNotTimedOut(t *testing.T) {
	budget := membudget.New("test-body", 1<<20)
	c := budgetServer(t, budget)
	full, err := budget.Take(context.Background(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(700*time.Millisecond, full.Release)
	start := time.Now()
	r, err := c.Get(context.Background(), Request{URL: "http://budget.test/plain/1000", UserAgent: "TrawlerBot/test", Timeout: 300 * time.Millisecond})
	defer r.Release()
	if err != nil || len(r.Body) != 1000 {
		t.Fatalf("after waiting for room: %v", err)
	}
	if waited := time.Since(start); waited < 600*time.Millisecond {
		t.Fatalf("answered after %v: it did not wait for the full budget", waited)
	}
	if held := budget.Held(); held < 1000 {
		t.Fatalf("the response holds %d bytes of the budget, less than its body", held)
	}
	r.Release()
	if budget.Held() != 0 {
		t.Fatalf("%d bytes held after release", budget.Held())
	}
}

func TestBrotliWindowIsReadFromTheStreamHeader(t *testing.T) {
	for lgwin := 10; lgwin <= 24; lgwin++ {
		var buf bytes.Buffer
		w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 5, LGWin: lgwin})
		_, _ = w.Write(bytes.Repeat([]byte("window "), 1000))
		_ = w.Close()
		if got := brotliWindow(buf.Bytes()[:1]); got != 1<<lgwin {
			t.Errorf("lgwin %d: window %d, want %d", lgwin, got, 1<<lgwin)
		}
	}
	if brotliWindow(nil) != 1<<24 {
		t.Error("a stream without a header is held at the most")
	}
}

// A request that waits for room while its body is read (another hold overdraws the budget)
// is not timed out for it: its clock stops while it waits for the worker.
func TestAWaitForRoomMidBodyDoesNotTimeTheRequestOut(t *testing.T) {
	budget := membudget.New("test-body", 1<<20)
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-gate // the budget fills meanwhile
		_, _ = w.Write(bytes.Repeat([]byte("x"), 300000))
	}))
	t.Cleanup(srv.Close)
	rules, _ := config.ParseConnectTo("gate.test=" + srv.Listener.Addr().String())
	c := New(Options{Dialer: netguard.New(netguard.Options{ConnectTo: rules}), Budget: budget})
	go func() {
		for budget.Held() == 0 { // the request has taken its start
			time.Sleep(time.Millisecond)
		}
		full, _ := budget.Take(context.Background(), 1<<20-budget.Held())
		if err := full.Grow(context.Background(), 1); err != nil { // the overdraft
			t.Error(err)
		}
		close(gate)
		time.Sleep(800 * time.Millisecond)
		full.Release()
	}()
	start := time.Now()
	r, err := c.Get(context.Background(), Request{URL: "http://gate.test/", UserAgent: "TrawlerBot/test", Timeout: 400 * time.Millisecond})
	defer r.Release()
	if err != nil || len(r.Body) != 300000 {
		t.Fatalf("after waiting for room mid-body: %v (%d bytes)", err, len(r.Body))
	}
	if waited := time.Since(start); waited < 700*time.Millisecond {
		t.Fatalf("answered after %v: it never waited for room", waited)
	}
}
