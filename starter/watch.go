package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// watchCrawl redraws a crawl's live view every `every` until the crawl ends.
func watchCrawl(ctx context.Context, tc client.Client, cfg *config.Config, name string, every time.Duration, stdout io.Writer) error {
	id := crawl.CrawlWorkflowID(cfg.IDPrefix, name)
	tty := isTerminal(stdout)
	tick := time.NewTicker(max(every, 200*time.Millisecond))
	defer tick.Stop()
	for {
		desc, err := tc.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return fmt.Errorf("crawl %s: %w", name, err)
		}
		var p crawl.CrawlProgress
		running := desc.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		if running {
			p, err = queryProgress(ctx, tc, id)
		} else { // ended: its result is the last word
			err = tc.GetWorkflow(ctx, id, "").Get(ctx, &p)
		}
		if err != nil {
			return fmt.Errorf("crawl %s: %w", name, err)
		}
		hosts := hostCounts(ctx, tc, cfg)
		view := renderProgress(name, p, hosts, time.Now())
		if tty {
			fmt.Fprint(stdout, "\033[H\033[2J"+view)
		} else {
			fmt.Fprintln(stdout, view)
		}
		if !running {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// hostCounts counts the deployment's running host workflows by state (search attribute).
func hostCounts(ctx context.Context, tc client.Client, cfg *config.Config) map[string]int64 {
	out := map[string]int64{}
	for _, phase := range crawl.HostPhases {
		resp, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: crawl.HostsInPhaseQuery(cfg.TaskQueue, phase)})
		if err == nil {
			out[string(phase)] = resp.Count
		}
	}
	return out
}

// renderProgress draws the live view: a bar of finished ÷ admitted URLs and the figures.
func renderProgress(name string, p crawl.CrawlProgress, hosts map[string]int64, now time.Time) string {
	finished := p.Admitted - p.Pending
	frac := 0.0
	if p.Admitted > 0 {
		frac = float64(finished) / float64(p.Admitted)
	}
	const width = 40
	filled := int(frac * width)
	var b strings.Builder
	fmt.Fprintf(&b, "crawl %s  %s  (%s)\n", name, strings.ToUpper(string(p.State)), now.Format("15:04:05"))
	fmt.Fprintf(&b, "[%s%s] %5.1f%%  %d of %d URLs settled\n", strings.Repeat("#", filled), strings.Repeat(".", width-filled), 100*frac, finished, p.Admitted)
	fmt.Fprintf(&b, "pages %d  fetched %d  %.1f pages/s  %s\n", p.Pages, p.Fetched, p.PagesPerSec, bytesString(p.Bytes))
	fmt.Fprintf(&b, "queue: queued %d  in flight %d  awaiting processing %d\n", p.ByState["queued"], p.ByState["claimed"], p.ByState["fetched"])
	if w := p.Waiting; w != nil && p.Pending > 0 {
		// What recovery after a dead worker waits on: these stay small in a healthy crawl.
		fmt.Fprintf(&b, "waiting: longest due %s  oldest claim %s  oldest unprocessed %s  claims past lease %d\n",
			secs(w.OldestDueS), secs(w.OldestClaimS), secs(w.OldestFetchS), w.ExpiredClaims)
		for _, h := range w.Held {
			fmt.Fprintf(&b, "  held: %s  %s by %s for %s\n", h.URL, h.State, cmp.Or(h.By, "-"), secs(h.SinceS))
		}
	}
	fmt.Fprintf(&b, "errors %d%s  dead %d\n", p.Errors, classes(p.ErrorClass), p.Dead)
	fmt.Fprintf(&b, "skipped%s  rejected links%s\n", classes(p.Skipped), classes(p.Rejected))
	fmt.Fprintf(&b, "hosts %d  workflows: active %d  backed off %d  paused %d  idle %d\n", p.Hosts, hosts[string(crawl.HostActive)], hosts[string(crawl.HostBackoff)], hosts[string(crawl.HostPaused)], hosts[string(crawl.HostIdle)])
	return b.String()
}

// classes renders counts by key, largest first: " (5xx 3, network 1)".
func classes(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j]) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// secs renders a wait in whole seconds ("-" for none).
func secs(s float64) string {
	if s <= 0 {
		return "-"
	}
	return (time.Duration(s) * time.Second).String()
}
