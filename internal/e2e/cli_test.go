package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// buildBinary builds the command in pkg (relative to the repository) into a temporary
// directory as name.
func buildBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return bin
}

func (s *stack) env() []string {
	return append(os.Environ(), "TEMPORAL_ADDRESS="+s.cfg.TemporalAddress, "TRAWLER_TASK_QUEUE="+s.cfg.TaskQueue,
		"TRAWLER_ID_PREFIX="+s.cfg.IDPrefix, "TRAWLER_LOG_LEVEL=warn")
}

// `trawler crawl --wait` runs a crawl to the end, reporting a bad seed and going on.
func TestTrawlerCrawlCommand(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 3, 5, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	bin := buildBinary(t, "trawler", "./starter")
	cmd := exec.Command(bin, "crawl", "--name", "cli", "--scope", "any", "--delay", "200ms", "--max-pages", "100",
		"--wait", "http://h0000.test/", "mailto:nobody@example.com")
	cmd.Env = s.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("trawler crawl: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), `skipping seed "mailto:nobody@example.com"`) {
		t.Errorf("bad seed not reported: %s", stderr.String())
	}
	var p crawl.CrawlProgress
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, stdout.String())
	}
	truth := s.web.Truth(s.web.Seeds())
	if p.State != "done" || int(p.Pages) != len(truth.Pages) {
		t.Errorf("summary %+v; truth has %d pages", p, len(truth.Pages))
	}
	if v := s.web.Audit().Report().Violations(); v != 0 {
		t.Errorf("%d politeness violations", v)
	}

	// The crawl's WARC files are listed, and a URL's capture comes out as a WARC record that an
	// independent reader reads.
	warcCmd := func(args ...string) string {
		cmd := exec.Command(bin, append([]string{"warc", "--crawl", "cli"}, args...)...)
		cmd.Env = append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL, "TRAWLER_S3_BUCKET="+s.cfg.S3Bucket)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("trawler warc %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := warcCmd(); !strings.Contains(out, "warc/cli/cli-") || !strings.Contains(out, ".cdxj") {
		t.Errorf("trawler warc lists: %s", out)
	}
	one := filepath.Join(t.TempDir(), "front.warc.gz")
	if out := warcCmd("--url", "http://H0000.test:80/", "--out", one); !strings.Contains(out, "wrote the capture") {
		t.Errorf("trawler warc --url: %s", out)
	}
	if recs := testenv.ReadWARC(t, one); len(recs) != 1 || recs[0].Type != "response" || recs[0].URI != "http://h0000.test/" || recs[0].Status != 200 {
		t.Errorf("extracted record: %+v", recs)
	}

	// The live view of a finished crawl draws once and returns.
	watch := exec.Command(bin, "status", "--watch", "cli")
	watch.Env = s.env()
	if out, err := watch.CombinedOutput(); err != nil || !strings.Contains(string(out), "DONE") ||
		!strings.Contains(string(out), "100.0%") || !strings.Contains(string(out), "pages "+strconv.Itoa(int(p.Pages))) {
		t.Errorf("trawler status --watch: %v\n%s", err, out)
	}

	// Status and host queries answer as JSON.
	for _, args := range [][]string{{"status", "cli"}, {"host", "h0000.test"}, {"host", "--record", "h0000.test"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL)
		out, err := cmd.CombinedOutput()
		if err != nil || !json.Valid(bytes.TrimSpace(out)) {
			t.Errorf("trawler %v: %v\n%s", args, err, out)
		}
		if args[1] == "--record" && (!bytes.Contains(out, []byte(`"keptOut"`)) || !bytes.Contains(out, []byte(`"scheme": "http"`))) {
			t.Errorf("trawler host --record: no robots signals or robots.txt per scheme:\n%s", out)
		}
	}
}

var continuation = regexp.MustCompile(`\\\n\s*`)

// readmeTemporalCommands returns the temporal CLI example of the README, one command a line.
func readmeTemporalCommands(t *testing.T) []string {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "<!-- temporal-cli-example")
	if i < 0 {
		t.Fatal("README has no temporal-cli-example block")
	}
	block := s[i:]
	block = block[strings.Index(block, "```sh\n")+6:]
	block = block[:strings.Index(block, "```")]
	var cmds []string
	for _, line := range strings.Split(continuation.ReplaceAllString(block, ""), "\n") {
		if strings.HasPrefix(line, "temporal ") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// shellWords splits a command line with single-quoted arguments (all the README uses).
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	inQuote, has := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			inQuote, has = !inQuote, true
		case r == ' ' && !inQuote:
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

// The README's temporal CLI commands — start with plain JSON, query, signal, stop, result —
// work as written against real workers (only the task queue, ID prefix and address differ).
func TestReadmeTemporalCLICommands(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 3, 8, false
	s := newStack(t, wc)
	temporal := filepath.Join(repoRoot(t), ".tools", "bin", "temporal")
	cmds := readmeTemporalCommands(t)
	if len(cmds) < 6 {
		t.Fatalf("README temporal commands: %v", cmds)
	}
	outputs := map[string]string{}
	for _, line := range cmds {
		args := shellWords(line)[1:]
		for i := range args {
			switch {
			case i > 0 && args[i-1] == "--task-queue":
				args[i] = s.cfg.TaskQueue
			case i > 0 && args[i-1] == "--workflow-id":
				args[i] = s.cfg.IDPrefix + args[i]
			}
		}
		args = append(args, "--address", s.cfg.TemporalAddress)
		if strings.Contains(line, "host/") { // the host workflow starts once its first URLs are admitted
			waitFor(t, 20*time.Second, func() bool {
				return exec.Command(temporal, "workflow", "describe", "--workflow-id", s.cfg.IDPrefix+"host/h0001.test",
					"--address", s.cfg.TemporalAddress).Run() == nil
			})
		}
		if strings.Contains(line, "--name stop") {
			time.Sleep(3 * time.Second) // let the crawl make some progress first
		}
		out, err := exec.Command(temporal, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		outputs[line] = string(out)
	}
	for line, out := range outputs {
		switch {
		case strings.Contains(line, "--name progress") && !strings.Contains(out, `"crawlId":"news"`):
			t.Errorf("progress query answered %s", out)
		case strings.Contains(line, "--name status") && !strings.Contains(out, `"delay":"5s"`):
			t.Errorf("status after throttle answered %s", out)
		case strings.HasPrefix(line, "temporal workflow result") && !strings.Contains(out, `"state":"stopped"`) && !strings.Contains(out, `"state":"done"`):
			t.Errorf("result: %s", out)
		case strings.HasPrefix(line, "temporal workflow result") && (!strings.Contains(out, `"signal":"add-seeds"`) ||
			!strings.Contains(out, `"signal":"replay-dead-letters"`) || !strings.Contains(out, `"signal":"block"`) ||
			!strings.Contains(out, `"signal":"throttle"`)):
			t.Errorf("the crawl controls sent with the temporal CLI are not in the result's controls: %s", out)
		}
	}
	if v := s.web.Audit().Report().Violations(); v != 0 {
		t.Errorf("%d politeness violations", v)
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// `trawler crawl --wait` returns within seconds of a stop, with `stopped` and its reason, however
// many hosts still hold leases behind it: once for the time budget, once for the stop signal.
func TestTrawlerCrawlWaitEndsAtStop(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.SeedEvery = 300, 30, false, 1
	wc.DefaultDelay = 500 * time.Millisecond
	s := newStack(t, wc)
	bin := buildBinary(t, "trawler", "./starter")
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(s.web.Seeds(), "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(name string, extra ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		args := append([]string{"crawl", "--name", name, "--scope", "any", "--delay", "500ms", "--max-pages", "0", "--wait", "--seeds", seeds}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = s.env()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &stdout, &stderr
	}
	// check waits for the command (at most until the stop plus 30 s), then holds it to having
	// returned within 10 s of the stop, which stopped says once it is known.
	check := func(name string, cmd *exec.Cmd, stdout, stderr *bytes.Buffer, roughStop time.Time, stopped func() time.Time, reason string) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: trawler crawl --wait: %v\n%s", name, err, stderr.String())
			}
		case <-time.After(time.Until(roughStop.Add(30 * time.Second))):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s: --wait had not returned 30 s after the stop\n%s", name, stderr.String())
		}
		returned := time.Now()
		var p crawl.CrawlProgress
		if err := json.Unmarshal(stdout.Bytes(), &p); err != nil {
			t.Fatalf("%s: summary is not JSON: %v\n%s", name, err, stdout.String())
		}
		if p.State != crawl.CrawlStopped || p.StopReason != reason || p.Fetched == 0 {
			t.Errorf("%s: summary %s %q after %d fetches; want stopped, %q", name, p.State, p.StopReason, p.Fetched, reason)
		}
		after := returned.Sub(stopped())
		t.Logf("%s: --wait returned %.1f s after the stop, %d fetched", name, after.Seconds(), p.Fetched)
		if after > 10*time.Second {
			t.Errorf("%s: --wait returned %.1f s after the stop; want within 10 s", name, after.Seconds())
		}
	}

	start := time.Now()
	cmd, stdout, stderr := run("wait-budget", "--max-duration", "12s")
	// The budget counts from the crawl workflow's start, which the server knows.
	check("budget", cmd, stdout, stderr, start.Add(12*time.Second), func() time.Time {
		desc, err := s.tc.DescribeWorkflowExecution(context.Background(), crawl.CrawlWorkflowID(s.cfg.IDPrefix, "wait-budget"), "")
		if err != nil {
			t.Fatal(err)
		}
		return desc.WorkflowExecutionInfo.StartTime.AsTime().Add(12 * time.Second)
	}, crawl.StopByDuration)

	cmd, stdout, stderr = run("wait-signal")
	id := crawl.CrawlWorkflowID(s.cfg.IDPrefix, "wait-signal")
	waitFor(t, 60*time.Second, func() bool {
		p, err := s.store.Crawls().CrawlProgress(context.Background(), "wait-signal")
		return err == nil && p.Fetched >= 50
	})
	if err := s.tc.SignalWorkflow(context.Background(), id, "", crawl.SignalStop, nil); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	check("signal", cmd, stdout, stderr, signalled, func() time.Time { return signalled }, crawl.StopBySignal)
}
