package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/api"
	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// dial loads the config from args (with extra flags registered by setup) and connects.
func dial(ctx context.Context, name string, args []string, setup func(*flag.FlagSet)) (*config.Config, client.Client, []string, error) {
	fs := flag.NewFlagSet("trawler "+name, flag.ContinueOnError)
	if setup != nil {
		setup(fs)
	}
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	tc, err := app.DialTemporal(ctx, cfg, app.NewLogger(cfg))
	if err != nil {
		return nil, nil, nil, err
	}
	return cfg, tc, fs.Args(), nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// hostKey turns "Example.com", "example.com:8080" or a URL into the authority host workflows
// are named by.
func runStatus(ctx context.Context, args []string, stdout io.Writer) error {
	var watch bool
	var every time.Duration
	cfg, tc, rest, err := dial(ctx, "status", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&watch, "watch", false, "redraw a live view of the named crawl until it ends (Ctrl-C to leave)")
		fs.DurationVar(&every, "every", 2*time.Second, "with --watch: how often to redraw")
		fs.Bool("json", true, "print JSON (the default without --watch)")
	})
	if err != nil {
		return err
	}
	defer tc.Close()
	if watch {
		if len(rest) != 1 {
			return fmt.Errorf("usage: trawler status --watch NAME")
		}
		return watchCrawl(ctx, tc, cfg, rest[0], every, stdout)
	}
	var ids []string
	if len(rest) > 0 {
		for _, name := range rest {
			ids = append(ids, crawl.CrawlWorkflowID(cfg.IDPrefix, name))
		}
	} else {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: crawl.RunningCrawlsQuery(cfg.TaskQueue)})
		if err != nil {
			return fmt.Errorf("list crawls: %w", err)
		}
		for _, e := range resp.Executions {
			ids = append(ids, e.Execution.WorkflowId)
		}
		if len(ids) == 0 {
			fmt.Fprintln(os.Stderr, "trawler: no running crawls")
			return printJSON(stdout, []crawl.CrawlProgress{})
		}
	}
	var out []crawl.CrawlProgress
	for _, id := range ids {
		p, err := queryProgress(ctx, tc, id)
		if err != nil {
			// A finished crawl answers with its result instead.
			desc, derr := tc.DescribeWorkflowExecution(ctx, id, "")
			if derr != nil {
				return fmt.Errorf("crawl %s: %w", id, err)
			}
			if desc.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				if gerr := tc.GetWorkflow(ctx, id, "").Get(ctx, &p); gerr != nil {
					return fmt.Errorf("crawl %s ended: %w", id, gerr)
				}
			} else {
				return fmt.Errorf("crawl %s: %w", id, err)
			}
		}
		out = append(out, p)
	}
	return printJSON(stdout, out)
}

func runHost(ctx context.Context, args []string, stdout io.Writer) error {
	var record bool
	cfg, tc, rest, err := dial(ctx, "host", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&record, "record", false, "print what Postgres knows of the host too: robots.txt per scheme, URLs by crawl "+
			"and state, and the URLs each robots signal kept out (as GET /api/v1/host does)")
	})
	if err != nil {
		return err
	}
	defer tc.Close()
	if len(rest) != 1 {
		return fmt.Errorf("usage: trawler host [--record] HOST")
	}
	host, err := api.HostKey(cfg.Normalizer(), rest[0])
	if err != nil {
		return err
	}
	if !record {
		st := api.QueryHost(ctx, tc, cfg.IDPrefix, host)
		if st == nil {
			return fmt.Errorf("host %s: no host workflow answers for it (--record shows what Postgres knows)", host)
		}
		return printJSON(stdout, st)
	}
	op, err := open(ctx, "host", cfg, "", 0)
	if err != nil {
		return err
	}
	defer op.Close()
	out, err := api.InspectHost(ctx, tc, op.st, cfg.IDPrefix, host)
	if err != nil {
		return fmt.Errorf("host %s: %w", host, err)
	}
	return printJSON(stdout, out)
}

// hostSignal sends pause, resume or throttle to hosts, or pause/resume/stop to a crawl.
func hostSignal(signal string) func(context.Context, []string, io.Writer) error {
	return func(ctx context.Context, args []string, stdout io.Writer) error {
		var crawlName string
		var th crawl.Throttle
		var delay string
		cfg, tc, rest, err := dial(ctx, signal, args, func(fs *flag.FlagSet) {
			fs.StringVar(&crawlName, "crawl", "", "act on every host of this crawl instead of on HOSTs")
			if signal == crawl.SignalThrottle {
				fs.StringVar(&delay, "delay", "", "the host's new minimum gap between requests, e.g. 5s")
				fs.IntVar(&th.Concurrency, "concurrency", 0, "requests in flight at most")
				fs.BoolVar(&th.Reset, "reset", false, "go back to the crawl's pacing")
			}
		})
		if err != nil {
			return err
		}
		defer tc.Close()
		var payload any
		if signal == crawl.SignalThrottle {
			if delay != "" {
				if err := th.Delay.UnmarshalJSON([]byte(`"` + delay + `"`)); err != nil {
					return fmt.Errorf("--delay: %w", err)
				}
			}
			if th.Delay == 0 && th.Concurrency == 0 && !th.Reset {
				return fmt.Errorf("throttle needs --delay, --concurrency or --reset")
			}
			payload = th
		}
		if crawlName != "" {
			id := crawl.CrawlWorkflowID(cfg.IDPrefix, crawlName)
			if err := tc.SignalWorkflow(ctx, id, "", signal, payload); err != nil {
				return fmt.Errorf("%s crawl %s: %w", signal, crawlName, err)
			}
			fmt.Fprintf(stdout, "%s: crawl %s\n", signal, crawlName)
			return nil
		}
		if signal == crawl.SignalStop {
			return fmt.Errorf("usage: trawler stop --crawl NAME")
		}
		if len(rest) == 0 {
			return fmt.Errorf("usage: trawler %s HOST... (or --crawl NAME)", signal)
		}
		for _, arg := range rest {
			host, err := api.HostKey(cfg.Normalizer(), arg)
			if err != nil {
				return err
			}
			opts := crawl.HostStart(cfg.IDPrefix, host, "", cfg.TaskQueue)
			// Signal-With-Start: a paused or throttled host stays so when its next URLs come.
			_, err = tc.SignalWithStartWorkflow(ctx, opts.ID, signal, payload, opts, crawl.HostWorkflowName, crawl.HostInput{Host: host, Config: crawl.HostConfig{FetchQueue: cfg.FetchTaskQueue, ProcessQueue: cfg.ProcessTaskQueue},
				Revision: crawl.WorkflowRevision})
			if err != nil {
				return fmt.Errorf("%s %s: %w", signal, host, err)
			}
			fmt.Fprintf(stdout, "%s: host %s\n", signal, host)
		}
		return nil
	}
}
