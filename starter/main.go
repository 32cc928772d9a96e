// Command trawler is the operator's CLI: it applies migrations, checks the deployment, and
// starts, watches and steers crawls through Temporal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand: it parses its own flags (plus the shared config flags) from args.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

var commands = map[string]command{
	"migrate":      {"apply pending schema migrations to DATABASE_URL", runMigrate},
	"setup":        {"prepare a deployment, idempotently: schema migrations, the S3 bucket, Temporal search attributes", runSetup},
	"check":        {"run a health-check workflow through the workers on every task queue", runCheck},
	"config":       {"print every setting (environment, flag, default) as a Markdown table", runConfig},
	"crawl":        {"start a crawl: trawler crawl --seeds FILE|URL... [--wait]", runCrawl},
	"status":       {"progress of running crawls, or of the named ones", runStatus},
	"host":         {"a host workflow's status: trawler host [--record] HOST (--record adds robots.txt per scheme and what each robots signal kept out)", runHost},
	"pause":        {"pause hosts (trawler pause HOST...) or a crawl (--crawl NAME)", hostSignal("pause")},
	"resume":       {"resume hosts or a crawl (--crawl NAME)", hostSignal("resume")},
	"stop":         {"stop a crawl: trawler stop --crawl NAME", hostSignal("stop")},
	"seed":         {"add seeds to a running crawl: trawler seed --crawl NAME URL|FILE...", runSeed},
	"block":        {"stop crawling hosts or URL patterns in a running crawl: trawler block --crawl NAME --host H --pattern RE", runBlock},
	"dlq":          {"dead letters: trawler dlq list|replay --crawl NAME [--host H] [--reason TEXT]", runDLQ},
	"codec-server": {"decode sealed Temporal payloads (TRAWLER_PAYLOAD_KEY) for the Temporal UI and temporal --codec-endpoint, on TRAWLER_CODEC_ADDR", runCodecServer},
	"serve":        {"serve the HTTP API (/api/v1/stats, /urls, /url, /host, /report) on TRAWLER_API_ADDR", runServe},
	"warc":         {"a crawl's WARC files, a URL's captures, or a WACZ package: trawler warc --crawl NAME [--url URL [--at TIME] [--out FILE] | --wacz OUT.wacz]", runWARC},
	"delete":       {"delete crawls' rows, segments and WARC files: trawler delete --crawl NAME... | --older-than 720h [--dry-run] [--json]", runDelete},
	"export":       {"a crawl's stored pages as records: trawler export --crawl NAME [--format jsonl|csv|parquet] [--fields F,…] [--since T] [--out FILE]", runExport},
	"report":       {"a crawl's report: trawler report --crawl NAME [--out DIR] writes DIR/NAME.html (charts, opens offline) and DIR/NAME.json", runReport},
	"deliver":      {"where a crawl's outputs (spec.outputs) stand; --replay sends their dead-lettered batches again: trawler deliver --crawl NAME [--output O] [--replay [--wait]]", runDeliver},
	"extract":      {"run extraction rules again over a stored crawl, from its stored bodies: trawler extract --crawl NAME --rules rules.json", runExtract},
	"qa":           {"replay fidelity: each sampled page rendered live and replayed from the archive alone, compared: trawler qa --crawl NAME [--sample 10 | --page URL...] [--min 0.95] [--shots DIR]", runQA},
	"throttle":     {"slow hosts or a whole crawl: trawler throttle [--crawl NAME] --delay 5s [--concurrency N] [--reset] [HOST...]", hostSignal("throttle")},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := dispatch(ctx, os.Args[1:], os.Stdout)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "trawler:", err)
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(os.Stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd.run(ctx, args[1:], stdout)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: trawler COMMAND [flags]   (trawler COMMAND -h lists a command's flags)")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
