package render_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/render"
)

// page serves one document at its URL and blocks everything else, counting what it saw.
func servePage(url, html string, seen *atomic.Int64) render.Policy {
	return func(_ context.Context, r render.Request) render.Answer {
		if seen != nil {
			seen.Add(1)
		}
		if r.URL == url {
			return render.Answer{ContentType: "text/html", Body: []byte(html)}
		}
		return render.Answer{Block: "not ours"}
	}
}

// browserProcs lists the pids of this test process's browsers: its descendants whose command
// line is a render browser's (another package's tests may run browsers at the same time).
func browserProcs(t *testing.T) []int {
	t.Helper()
	parent := map[int]int{}
	var candidates []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 {
			if f := bytes.Fields(stat[i+1:]); len(f) > 1 {
				parent[pid], _ = strconv.Atoi(string(f[1]))
			}
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte("trawler-render-")) {
			candidates = append(candidates, pid)
		}
	}
	var pids []int
	for _, pid := range candidates {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == os.Getpid() {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// The browser runs sandboxed, as an unprivileged user when the worker is root, with none of
// the worker's environment, in a network namespace of its own: a renderer exploit finds no
// credentials, no root and no network.
func TestBrowserIsSandboxedWithoutTheWorkersEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://trawler:secret@db/trawler")
	t.Setenv("TRAWLER_S3_SECRET_KEY", "s3-secret")
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 10 * time.Second})
	if _, err := b.Render(context.Background(), "http://sandbox.test/", servePage("http://sandbox.test/", "<p>x</p>", nil)); err != nil {
		t.Fatal(err)
	}
	pids := browserProcs(t)
	if len(pids) < 2 {
		t.Fatalf("browser processes: %v", pids)
	}
	selfNS, _ := os.Readlink("/proc/self/ns/user")
	selfNet, _ := os.Readlink("/proc/self/ns/net")
	sandboxed := 0
	for _, pid := range pids {
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		if bytes.Contains(cmd, []byte("--no-sandbox")) {
			t.Errorf("process %d runs with --no-sandbox", pid)
		}
		if bytes.Contains(env, []byte("secret")) || bytes.Contains(env, []byte("DATABASE_URL")) {
			t.Errorf("process %d has the worker's environment: %q", pid, env)
		}
		if os.Geteuid() == 0 {
			var st syscall.Stat_t
			if err := syscall.Stat(dir, &st); err == nil && st.Uid == 0 {
				t.Errorf("process %d runs as root", pid)
			}
		}
		if ns, err := os.Readlink(filepath.Join(dir, "ns/net")); err != nil || ns == selfNet {
			t.Errorf("process %d shares the worker's network (%s, %v)", pid, ns, err)
		}
		if ns, err := os.Readlink(filepath.Join(dir, "ns/user")); err == nil && ns != selfNS {
			sandboxed++ // a renderer in the namespace sandbox
		}
	}
	if sandboxed == 0 {
		t.Errorf("no browser process in a sandbox namespace among %v", pids)
	}
}

// WebRTC cannot send a packet: a page that asks a STUN server on loopback for its address
// sends nothing there (before, with the proxy and resolver backstops alone, it did).
func TestWebRTCSendsNoUDP(t *testing.T) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var got atomic.Int64
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := conn.ReadFrom(buf); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	port := conn.LocalAddr().(*net.UDPAddr).Port
	html := fmt.Sprintf(`<html><body><p id="s">start</p><script>
		const pc = new RTCPeerConnection({iceServers: [{urls: "stun:127.0.0.1:%[1]d"}, {urls: "turn:127.0.0.1:%[1]d?transport=udp", username: "u", credential: "p"}]});
		pc.createDataChannel("x");
		pc.onicecandidate = e => { if (e.candidate) document.getElementById("s").textContent += " " + e.candidate.type };
		pc.createOffer().then(o => pc.setLocalDescription(o));
	</script></body></html>`, port)
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 10 * time.Second, Settle: 3 * time.Second})
	res, err := b.Render(context.Background(), "http://rtc.test/", servePage("http://rtc.test/", html, nil))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := got.Load(); n != 0 {
		t.Errorf("%d UDP packets reached the loopback STUN/TURN port", n)
	}
	t.Logf("candidates: %s", res.DOM[strings.Index(res.DOM, "start"):min(len(res.DOM), strings.Index(res.DOM, "start")+80)])
}

// A page that redefines outerHTML to return hundreds of MB gets its real DOM read, cut inside
// the page: the fake never crosses the pipe.
func TestOuterHTMLBombIsNotRead(t *testing.T) {
	html := `<html><body><p>the real page</p><a href="/real">real</a><script>
		const huge = () => "x".repeat(200 * 1024 * 1024);
		Object.defineProperty(Element.prototype, "outerHTML", {get: huge});
		Object.defineProperty(HTMLHtmlElement.prototype, "outerHTML", {get: huge});
		String.prototype.slice = function () { return huge() };
	</script></body></html>`
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 15 * time.Second, MaxDOMBytes: 64 << 10})
	res, err := b.Render(context.Background(), "http://bomb.test/", servePage("http://bomb.test/", html, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, "the real page") || !strings.Contains(res.DOM, `href="/real"`) || strings.Contains(res.DOM, "xxxxxxxx") {
		t.Errorf("DOM (%d bytes) is not the page's: %.200q", len(res.DOM), res.DOM)
	}
	// A DOM really larger than the cap is cut in the page, to the cap.
	big := `<html><body><script>document.body.setAttribute("data-y", "y".repeat(8 * 1024 * 1024))</script></body></html>`
	res, err = b.Render(context.Background(), "http://big.test/", servePage("http://big.test/", big, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.DOM) > 64<<10 || len(res.DOM) < 60<<10 {
		t.Errorf("an 8 MB DOM: truncated %v, %d bytes kept", res.Truncated, len(res.DOM))
	}
}

// A page that floods requests reaches the policy at most MaxRequests times (plus its own
// document); the rest are blocked without a decision, and past ten times the cap the page
// ends.
func TestRequestFloodIsCapped(t *testing.T) {
	html := `<html><body><script>for (let i = 0; i < 3000; i++) fetch("/x?" + i).catch(() => {})</script></body></html>`
	var seen atomic.Int64
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 15 * time.Second, Settle: time.Second, MaxRequests: 25})
	res, err := b.Render(context.Background(), "http://flood.test/", servePage("http://flood.test/", html, &seen))
	if err != nil {
		t.Fatal(err)
	}
	if n := seen.Load(); n > 26 {
		t.Errorf("the policy decided %d requests, cap 25 + the document", n)
	}
	if res.Blocked["request cap"] < 100 || res.Blocked["request flood: page ended"] != 1 {
		t.Errorf("blocked %v of %d requests", res.Blocked, res.Requests)
	}
	// Other methods are one reason, whatever the page names them: the counts stay small.
	html = `<html><body><script>for (let i = 0; i < 50; i++) fetch("/m", {method: "M" + i}).catch(() => {})</script></body></html>`
	res, err = b.Render(context.Background(), "http://methods.test/", servePage("http://methods.test/", html, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Blocked) > 2 || res.Blocked["method"] < 40 { // "method", and maybe the cap
		t.Errorf("blocked %v", res.Blocked)
	}
}

// alert() and confirm() are dismissed: the page goes on, its later links are read, and the
// render does not wait out its time limit.
func TestDialogsAreDismissed(t *testing.T) {
	html := `<html><body><p>before</p><script>
		alert("hello"); confirm("sure?"); prompt("name?");
		const a = document.createElement("a"); a.href = "/after-dialogs"; document.body.appendChild(a);
	</script></body></html>`
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 15 * time.Second})
	start := time.Now()
	res, err := b.Render(context.Background(), "http://alert.test/", servePage("http://alert.test/", html, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, "/after-dialogs") || res.Dialogs != 3 {
		t.Errorf("dialogs %d, DOM %.300q", res.Dialogs, res.DOM)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("took %s", took)
	}
}

// A page that exhausts its renderer's memory (outside the JS heap, where the V8 flag does not
// reach) is killed and fails alone; the browser renders the next page.
func TestPageThatExhaustsItsRendererFailsAlone(t *testing.T) {
	html := `<html><body><script>
		const keep = [];
		setInterval(() => { for (let i = 0; i < 32; i++) keep.push(new Uint8Array(1 << 20).fill(7)) }, 5);
	</script></body></html>`
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 20 * time.Second, Settle: 5 * time.Second, MemoryMB: 300})
	start := time.Now()
	_, err := b.Render(context.Background(), "http://hog.test/", servePage("http://hog.test/", html, nil))
	if !errors.Is(err, render.ErrPageCrashed) {
		t.Fatalf("a page over its memory: %v, want ErrPageCrashed", err)
	}
	t.Logf("after %s: %v", time.Since(start), err)
	res, err := b.Render(context.Background(), "http://after.test/", servePage("http://after.test/", "<p>after</p>", nil))
	if err != nil || !strings.Contains(res.DOM, "after") {
		t.Errorf("the next page: %v", err)
	}
}

// A browser that dies mid-page is the worker's failure (ErrBrowserGone), not the page's; the
// next page starts a new browser, and the health probe answers.
func TestDeadBrowserIsRestarted(t *testing.T) {
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 15 * time.Second, Settle: 10 * time.Second})
	go func() {
		time.Sleep(2 * time.Second)
		for _, pid := range browserProcs(t) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	_, err := b.Render(context.Background(), "http://slow.test/", servePage("http://slow.test/", "<p>slow</p>", nil))
	if !errors.Is(err, render.ErrBrowserGone) {
		t.Fatalf("the browser killed mid-page: %v, want ErrBrowserGone", err)
	}
	if err := b.Check(context.Background()); err != nil {
		t.Fatalf("health probe after a restart: %v", err)
	}
	res, err := b.Render(context.Background(), "http://after.test/", servePage("http://after.test/", "<p>after</p>", nil))
	if err != nil || !strings.Contains(res.DOM, "after") {
		t.Errorf("the next page: %v", err)
	}
}

// window.location to another page of the host does not replace the DOM read: it is the named
// page's, and where it wanted to go is reported.
func TestNavigationAwayKeepsThePagesDOM(t *testing.T) {
	html := `<html><body><p>the named page</p><script>setTimeout(() => { window.location = "/elsewhere" }, 10)</script></body></html>`
	policy := func(_ context.Context, r render.Request) render.Answer {
		switch r.URL {
		case "http://nav.test/":
			return render.Answer{ContentType: "text/html", Body: []byte(html)}
		case "http://nav.test/elsewhere":
			return render.Answer{ContentType: "text/html", Body: []byte("<p>another page</p>")}
		}
		return render.Answer{Block: "not ours"}
	}
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 10 * time.Second, Settle: time.Second})
	res, err := b.Render(context.Background(), "http://nav.test/", policy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, "the named page") || strings.Contains(res.DOM, "another page") {
		t.Errorf("DOM %.200q", res.DOM)
	}
	if len(res.Navigations) != 1 || res.Navigations[0] != "http://nav.test/elsewhere" {
		t.Errorf("navigations %v", res.Navigations)
	}
}

// Each page has a fresh browser context: what one page stores (cookies, localStorage) another
// page of the same site does not see.
func TestPagesShareNoState(t *testing.T) {
	b := browser(t, render.Options{Concurrency: 1, PageTimeout: 10 * time.Second})
	write := `<html><body><script>document.cookie = "id=tracked; max-age=3600"; localStorage.setItem("id", "tracked")</script></body></html>`
	read := `<html><body><p id="r"></p><script>document.getElementById("r").textContent = "cookie=" + document.cookie + " storage=" + localStorage.getItem("id")</script></body></html>`
	if _, err := b.Render(context.Background(), "http://state.test/a", servePage("http://state.test/a", write, nil)); err != nil {
		t.Fatal(err)
	}
	res, err := b.Render(context.Background(), "http://state.test/b", servePage("http://state.test/b", read, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, "cookie= storage=null") {
		t.Errorf("the second page saw the first's state: %.300q", res.DOM)
	}
}
