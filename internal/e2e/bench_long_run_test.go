package e2e

import (
	"context"
	"fmt"
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
	fmt.Fprintf(&sb, "Rate and cost window by window (%s): pages fetched a second, CPU ms a page, the Postgres database's size at the window's end, and the closed workflow runs Temporal deleted in the window (retention):\n\n", label)
	sb.WriteString("| minutes | pages/s | against the first window | CPU ms a page: workers · temporal · postgres · minio (all) | Postgres GB | runs deleted |\n|---|---|---|---|---|---|\n")
	last := samples[len(samples)-1].at
	var first float64
	from := base
	for k := 1; time.Duration(k)*window <= last+window/2; k++ {
		to := at(time.Duration(k) * window)
		if to.at <= from.at {
			continue
		}
		secs, pages := (to.at - from.at).Seconds(), float64(to.fetched-from.fetched)
		rate := pages / secs
		if first == 0 {
			first = max(rate, 1e-9) // (a first window without pages: later ones read as huge, not NaN)
		}
		ms := func(name string) float64 {
			if pages == 0 {
				return 0
			}
			return (to.cpu[name] - from.cpu[name]) / pages * 1000
		}
		all := ms("workers") + ms("temporal") + ms("postgres") + ms("minio")
		fmt.Fprintf(&sb, "| %.0f–%.0f | %.1f | %.0f%% | %.2f · %.2f · %.2f · %.2f (%.2f) | %.2f | %.0f |\n",
			from.at.Minutes(), to.at.Minutes(), rate, 100*rate/first, ms("workers"), ms("temporal"), ms("postgres"), ms("minio"), all,
			float64(to.dbBytes)/(1<<30), to.deletes-from.deletes)
		from = to
	}
	end := samples[len(samples)-1]
	if first > 0 && end.at > 0 {
		whole := float64(end.fetched) / end.at.Seconds()
		fmt.Fprintf(&sb, "\nThe whole run: %.1f pages/s, %.0f%% of its first window's; %.0f runs deleted by retention.\n", whole, 100*whole/first, end.deletes-base.deletes)
	}
	return sb.String() + "\n"
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
	for m := 1; m <= 30; m++ { // 10 pages/s for 10 minutes, then 5, then 8; 1 ms of Temporal a page
		fetched := int64(min(m, 10)*600 + max(0, min(m, 20)-10)*300 + max(0, m-20)*480)
		samples = append(samples, memorySample{at: time.Duration(m) * time.Minute, fetched: fetched,
			cpu: map[string]float64{"temporal": 100 + float64(fetched)/1000}, deletes: 5 + float64(max(0, m-20)), dbBytes: int64(m) << 30})
	}
	got := windowTable("test", base, samples, 10*time.Minute)
	for _, want := range []string{"| 0–10 | 10.0 | 100% | 0.00 · 1.00 · 0.00 · 0.00 (1.00) | 10.00 | 0 |",
		"| 10–20 | 5.0 | 50% |", "| 20–30 | 8.0 | 80% | 0.00 · 1.00 · 0.00 · 0.00 (1.00) | 30.00 | 10 |",
		"The whole run: 7.7 pages/s, 77% of its first window's; 10 runs deleted"} {
		if !strings.Contains(got, want) {
			t.Errorf("window table lacks %q:\n%s", want, got)
		}
	}
	if short := windowTable("test", base, samples[:15], 10*time.Minute); short != "" {
		t.Errorf("a run shorter than two windows got a table:\n%s", short)
	}
}
