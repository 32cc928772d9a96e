package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A long run (`make bench-hour`) asks whether a crawl keeps its pace as its database grows and
// as Temporal starts deleting the runs that outlived their retention: its rate and cost are
// read window by window (BENCH_WINDOW_S, 10 minutes) from the run's samples.

// windowTable is the run's pages/s, CPU a page and growth in each window, and each window's
// rate against the first's; "" for a run shorter than two windows.
func windowTable(label string, base memorySample, samples []memorySample, window time.Duration) string {
	if window <= 0 || len(samples) == 0 || samples[len(samples)-1].at < 2*window {
		return ""
	}
	// at returns the sample nearest to t.
	at := func(t time.Duration) memorySample {
		best := base
		for _, m := range samples {
			if (m.at - t).Abs() < (best.at - t).Abs() {
				best = m
			}
		}
		return best
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Rate and cost window by window (%s): %s\n\n%s", label, windowColumns, windowHeader)
	last := samples[len(samples)-1].at
	var rows windowRows
	from := base
	for k := 1; time.Duration(k)*window <= last+window/2; k++ {
		to := at(time.Duration(k) * window)
		if to.at <= from.at {
			continue
		}
		sb.WriteString(rows.row(from, to))
		from = to
	}
	end := samples[len(samples)-1]
	if end.at-from.at >= window/4 { // the run's tail, a shorter row (retention's deletes start an hour in)
		sb.WriteString(rows.row(from, end))
	}
	if rows.first > 0 && end.at > 0 {
		whole := float64(end.fetched) / end.at.Seconds()
		fmt.Fprintf(&sb, "\nThe whole run: %.1f pages/s, %.0f%% of its first window's; %.0f runs deleted by retention.\n", whole, 100*whole/rows.first, end.deletes-base.deletes)
	}
	return sb.String() + "\n"
}

const (
	windowColumns = "pages fetched a second, CPU ms a page, the WAL Postgres wrote a page (every database on it), the Postgres database's size at the window's end, the closed workflow runs Temporal deleted in the window (retention), the activity attempts that failed a page (each retried after a backoff), and the share of the machine's CPU its hypervisor took (steal):"
	windowHeader  = "| minutes | pages/s | against the first window | CPU ms a page: workers · temporal · postgres · minio (all) | WAL KB a page | Postgres GB | runs deleted | failed attempts a page | steal |\n|---|---|---|---|---|---|---|---|---|\n"
)

// windowRows renders a window's row of the table, its rate against the first window's.
type windowRows struct{ first float64 }

func (w *windowRows) row(from, to memorySample) string {
	secs, pages := (to.at - from.at).Seconds(), float64(to.fetched-from.fetched)
	rate := pages / secs
	if w.first == 0 {
		w.first = max(rate, 1e-9) // (a first window without pages: later ones read as huge, not NaN)
	}
	ms := func(name string) float64 {
		if pages == 0 {
			return 0
		}
		return (to.cpu[name] - from.cpu[name]) / pages * 1000
	}
	all := ms("workers") + ms("temporal") + ms("postgres") + ms("minio")
	wal, failed := 0.0, 0.0
	if pages > 0 {
		wal, failed = (to.walBytes-from.walBytes)/pages/1024, (to.failures-from.failures)/pages
	}
	return fmt.Sprintf("| %.0f–%.0f | %.1f | %.0f%% | %.2f · %.2f · %.2f · %.2f (%.2f) | %.1f | %.2f | %.0f | %.4f | %.1f%% |\n",
		from.at.Minutes(), to.at.Minutes(), rate, 100*rate/w.first, ms("workers"), ms("temporal"), ms("postgres"), ms("minio"), all,
		wal, float64(to.dbBytes)/(1<<30), to.deletes-from.deletes, failed, 100*(to.steal-from.steal)/(secs*float64(runtime.NumCPU())))
}

// walPosition is the WAL Postgres has written (its position in bytes), 0 if unreadable.
func (s *stack) walPosition(ctx context.Context) float64 {
	var wal float64
	if err := s.store.Pool().QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0')::float8`).Scan(&wal); err != nil {
		return 0
	}
	return wal
}

// windowLog writes each window's row as the window closes, from the first sample at or past
// its end, to stdout (a benchmark's own log shows only when it ends) and to a file: a run that
// fails at its end, or is cut off, keeps the windows it had. The table at the end, from the
// samples nearest each window's end, is the one reported.
type windowLog struct {
	path   string
	window time.Duration
	from   memorySample
	rows   windowRows
}

func newWindowLog(path, label string, base memorySample, window time.Duration) *windowLog {
	l := &windowLog{path: path, window: window, from: base}
	l.write(fmt.Sprintf("Rate and cost as each window closed (%s, %s): %s\n\n%s", label, time.Now().UTC().Format("2006-01-02 15:04 MST"), windowColumns, windowHeader))
	return l
}

// observe takes a sample; one at or past the current window's end closes that window (a gap in
// the samples makes one longer row, its minutes saying so).
func (l *windowLog) observe(m memorySample) {
	if l == nil || m.at < (l.from.at/l.window+1)*l.window {
		return
	}
	l.write(l.rows.row(l.from, m))
	l.from = m
}

func (l *windowLog) write(text string) {
	fmt.Print(text)
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Printf("window log %s: %v\n", l.path, err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		fmt.Printf("window log %s: %v\n", l.path, err)
	}
}

// setRetention sets the namespace's retention of closed runs to d (a long run outlives it, so
// its deletes are counted) and returns a function that puts back what it was.
func (s *stack) setRetention(ctx context.Context, namespace string, d time.Duration) (restore func(), err error) {
	desc, err := s.tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("describe namespace %s: %w", namespace, err)
	}
	was := desc.GetConfig().GetWorkflowExecutionRetentionTtl()
	set := func(ctx context.Context, ttl *durationpb.Duration) error {
		_, err := s.tc.WorkflowService().UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{Namespace: namespace,
			Config: &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: ttl}})
		return err
	}
	if err := set(ctx, durationpb.New(d)); err != nil {
		return nil, fmt.Errorf("set namespace %s's retention to %v: %w", namespace, d, err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := set(ctx, was); err != nil {
			s.t.Logf("put back namespace %s's retention: %v", namespace, err)
		}
	}, nil
}

// The window table reads each window's rate and cost from the samples nearest its ends.
func TestWindowTableTellsEachWindowsRateAndCost(t *testing.T) {
	base := memorySample{cpu: map[string]float64{"temporal": 100}, deletes: 5}
	var samples []memorySample
	for m := 1; m <= 33; m++ { // 10 pages/s for 10 minutes, then 5, then 8; 1 ms of Temporal and 2 KB of WAL a page
		fetched := int64(min(m, 10)*600 + max(0, min(m, 20)-10)*300 + max(0, m-20)*480)
		samples = append(samples, memorySample{at: time.Duration(m) * time.Minute, fetched: fetched,
			cpu: map[string]float64{"temporal": 100 + float64(fetched)/1000}, deletes: 5 + float64(max(0, m-20)), dbBytes: int64(m) << 30,
			walBytes: float64(fetched) * 2048, failures: float64(fetched) / 100})
	}
	got := windowTable("test", base, samples, 10*time.Minute)
	for _, want := range []string{"| 0–10 | 10.0 | 100% | 0.00 · 1.00 · 0.00 · 0.00 (1.00) | 2.0 | 10.00 | 0 |",
		"| 10–20 | 5.0 | 50% |", "| 20–30 | 8.0 | 80% | 0.00 · 1.00 · 0.00 · 0.00 (1.00) | 2.0 | 30.00 | 10 | 0.0100 |", "| 30–33 | 8.0 | 80% |",
		"The whole run: 7.7 pages/s, 77% of its first window's; 13 runs deleted"} {
		if !strings.Contains(got, want) {
			t.Errorf("window table lacks %q:\n%s", want, got)
		}
	}
	if short := windowTable("test", base, samples[:15], 10*time.Minute); short != "" {
		t.Errorf("a run shorter than two windows got a table:\n%s", short)
	}
}

// The window log writes a window's row once a sample reaches its end, and the same arithmetic
// as the table.
func TestWindowLogWritesEachWindowAsItCloses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "windows.md")
	base := memorySample{cpu: map[string]float64{"temporal": 100}}
	l := newWindowLog(path, "test", base, 10*time.Minute)
	rows := func() int {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(data), "–") // (a row's minutes, "0–10")
	}
	for m := 1; m <= 25; m++ { // 10 pages/s, then 5 from minute 10
		fetched := int64(min(m, 10)*600 + max(0, m-10)*300)
		l.observe(memorySample{at: time.Duration(m) * time.Minute, fetched: fetched, cpu: map[string]float64{"temporal": 100 + float64(fetched)/1000}})
		if want := m / 10; rows() != want {
			t.Fatalf("after minute %d the log has %d rows, want %d", m, rows(), want)
		}
	}
	data, _ := os.ReadFile(path)
	for _, want := range []string{"| 0–10 | 10.0 | 100% | 0.00 · 1.00 · 0.00 · 0.00 (1.00) |", "| 10–20 | 5.0 | 50% |"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("window log lacks %q:\n%s", want, data)
		}
	}
}
