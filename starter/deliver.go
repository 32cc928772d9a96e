package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/workflows"
)

// runDeliver shows where a crawl's outputs stand (spec.outputs), and with --replay sends their
// dead-lettered batches again: through the output's delivery workflow, running or started anew.
func runDeliver(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler deliver", flag.ContinueOnError)
	crawlName := fs.String("crawl", "", "the crawl (required)")
	output := fs.String("output", "", "one of its outputs (default: all)")
	replay := fs.Bool("replay", false, "send the outputs' dead-lettered batches again")
	wait := fs.Bool("wait", false, "with --replay: wait until the outputs' deliveries end")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	if *crawlName == "" {
		return errors.New("deliver: --crawl is required")
	}
	n := need(0)
	if *replay {
		n = needTemporal
	}
	op, err := open(ctx, "deliver", cfg, *crawlName, n)
	if err != nil {
		return err
	}
	defer op.Close()
	var spec crawl.Spec
	if err := op.st.Crawls().CrawlSpec(ctx, *crawlName, &spec); err != nil {
		return err
	}
	outs := spec.Outputs
	if *output != "" {
		o, ok := spec.OutputNamed(*output)
		if !ok {
			return fmt.Errorf("deliver: crawl %s has no output %q", *crawlName, *output)
		}
		outs = []crawl.Output{o}
	}
	if len(outs) == 0 {
		return fmt.Errorf("deliver: crawl %s has no outputs (spec.outputs)", *crawlName)
	}
	if *replay {
		crawlWID := crawl.CrawlWorkflowID(cfg.IDPrefix, *crawlName)
		for _, o := range outs {
			in := workflows.DeliverInput{CrawlID: *crawlName, Output: o.Name, Every: o.Every, Queue: cfg.ProcessTaskQueue, Replay: true}
			_, err := op.tc.SignalWithStartWorkflow(ctx, crawl.DeliverID(crawlWID, o.Name), crawl.SignalRedeliver, nil,
				client.StartWorkflowOptions{TaskQueue: cfg.TaskQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE},
				workflows.DeliverWorkflow, in)
			if err != nil {
				return fmt.Errorf("deliver: replay %s: %w", o.Name, err)
			}
			fmt.Fprintf(os.Stderr, "trawler: sending %s's dead-lettered batches of output %s again\n", *crawlName, o.Name)
		}
		if *wait {
			if err := waitDeliveries(ctx, op.tc, crawlWID, outs); err != nil {
				return err
			}
		}
	}
	statuses, err := op.st.Deliveries().Statuses(ctx, *crawlName)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(statuses)
}

// waitDeliveries waits for the delivery workflows of a crawl's outputs to end (they end once
// the crawl has and everything is delivered or dead-lettered).
func waitDeliveries(ctx context.Context, tc client.Client, crawlWorkflowID string, outs []crawl.Output) error {
	for _, o := range outs {
		id := crawl.DeliverID(crawlWorkflowID, o.Name)
		var totals workflows.DeliverTotals
		start := time.Now()
		if err := tc.GetWorkflow(ctx, id, "").Get(ctx, &totals); err != nil {
			return fmt.Errorf("delivery %s: %w", id, err)
		}
		fmt.Fprintf(os.Stderr, "trawler: output %s: %d records delivered in %d batches, %d dead-lettered (waited %s)\n",
			o.Name, totals.Records, totals.Batches, totals.Dead, time.Since(start).Round(time.Second))
	}
	return nil
}
