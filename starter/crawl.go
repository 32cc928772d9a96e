package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/workflows"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runCrawl(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler crawl", flag.ContinueOnError)
	var seeds, allow, allowPatterns, headers, robotsOverride, dedupAgainst stringList
	fs.Var(&seeds, "seeds", "a seed URL, or a file of seed URLs (one per line, # comments); repeatable; positional arguments are seeds too")
	fs.Var(&allow, "allow-domain", "with --scope list: a domain to crawl (and its subdomains); repeatable")
	fs.Var(&dedupAgainst, "dedup-against", `an earlier crawl whose stored bodies this one reuses (revisit records, no second copy); "*" for every crawl's; repeatable`)
	fs.Var(&allowPatterns, "allow-pattern", "a Go regexp on the normalized URL; when any are given, a discovered link must match one (seeds are always crawled); repeatable")
	fs.Var(&robotsOverride, "robots-override", "a host (and its subdomains) whose robots.txt this crawl does not obey: your own sites only; still paced; repeatable")
	fs.Var(&headers, "header", `a header sent with every request of the crawl, "Name: value" (e.g. "Accept-Language: de"), or @FILE of such lines (a secret stays out of ps); repeatable`)
	name := fs.String("name", "", "crawl name (workflow ID crawl/NAME); default crawl-<time>")
	scope := fs.String("scope", crawl.ScopeDomain, "which links to follow: host, domain, list or any")
	// Deliberately not the spec's default (unlimited): a crawl typed at a shell with one seed
	// stops at a thousand URLs unless told otherwise; a spec file or --max-pages 0 lifts it.
	maxPages := fs.Int("max-pages", 1000, "URLs admitted at most (0: unlimited). The command line's default is 1000, as a safety net; the spec's (JSON, as temporal workflow start takes it) is unlimited, with --spec, the file's maxPages is kept when it sets one and this flag is not given")
	maxDepth := fs.Int("max-depth", 0, "link hops from a seed (default 20)")
	maxHosts := fs.Int("max-hosts", 0, "hosts the crawl takes URLs of at most; further hosts' URLs are skipped as maxHosts (0: no cap)")
	maxDuration := fs.Duration("max-duration", 0, "stop the crawl after this long, e.g. 2h (0: no time budget)")
	maxBytes := fs.Int64("max-bytes", 0, "stop the crawl after fetching this many body bytes (0: no byte budget)")
	perHost := fs.Int("max-pages-per-host", 0, "URLs admitted per host at most (0: unlimited)")
	cookies := fs.Bool("cookies", false, "keep the cookies each host sets and send them back to it (a jar per crawl and host, kept in Postgres)")
	requisites := fs.Bool("requisites", true, "fetch and archive the files a browser needs to show each page (stylesheets, scripts, images, fonts, icons, media), on their own hosts' schedules")
	requisitesPerPage := fs.Int("requisites-per-page", 0, "requisites one page (or stylesheet) admits at most (default 100)")
	crawlProxy := fs.String("crawl-proxy", "", "outbound proxy for this crawl: http://, https:// or socks5://[user:pass@]host:port, or @FILE or env:NAME holding it (a password stays out of ps; default: the worker's TRAWLER_PROXY, or direct)")
	politenessKey := fs.String("politeness-key", "", "what one schedule of request starts paces: host (default) or domain (all subdomains of a registrable domain share one gap)")
	autoThrottle := fs.Float64("auto-throttle", 0, "k: a host's gap grows to k × its recent response time, bounded by --delay and the spec's maxCrawlDelay (0: off)")
	delay := fs.Duration("delay", 0, "gap between requests to one host (default 1s; robots.txt Crawl-delay can raise it)")
	userAgent := fs.String("crawl-user-agent", "", "User-Agent for this crawl (default: TRAWLER_USER_AGENT)")
	reqTimeout := fs.Duration("request-timeout", 0, "total time per request (default 30s)")
	attempts := fs.Int("max-attempts", 0, "tries before a URL is dead-lettered (default 4)")
	retryBase := fs.Duration("retry-base", 0, "first retry delay, doubling each time (default 30s)")
	extractFile := fs.String("extract", "", "a JSON file of extraction rules (spec.extract: a list of {name, match, fields: [{name, css|xpath, attr, all, maxBytes}], jsonld, opengraph, meta})")
	deliverFile := fs.String("deliver", "", "a JSON file of outputs the crawl's documents are delivered to while it runs (spec.outputs: a list of {name, webhook: {url, secret} | dataset: {prefix}, text, batchSize, every, maxAttempts})")
	webhook := fs.String("webhook", "", "deliver each stored document to this URL while the crawl runs (an output named webhook), signed with --webhook-secret")
	webhookSecret := fs.String("webhook-secret", "", "the webhook's signing key as the workers find it: secret:env:NAME or secret:file:/path")
	dataset := fs.Bool("dataset", false, "write each stored document to a Parquet dataset in the bucket while the crawl runs (an output named dataset: datasets/crawl=NAME/hour=…/part-….parquet)")
	specFile := fs.String("spec", "", "a JSON crawl spec file (as `temporal workflow start --input` takes); flags override it")
	wait := fs.Bool("wait", false, "wait for the crawl to finish, showing progress, then print the summary")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	var spec crawl.Spec
	if *specFile != "" {
		raw, err := os.ReadFile(*specFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &spec); err != nil {
			return fmt.Errorf("%s: %w", *specFile, err)
		}
		if err := crawl.CheckFields(spec.UnknownFields()); err != nil {
			return fmt.Errorf("%s: %w", *specFile, err)
		}
	}
	all, err := readSeeds(append(seeds, fs.Args()...))
	if err != nil {
		return err
	}
	spec.Seeds = append(spec.Seeds, all...)
	setIf := func(set bool, f func()) {
		if set {
			f()
		}
	}
	visited := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { visited[f.Name] = true })
	setIf(*name != "", func() { spec.Name = *name })
	setIf(visited["scope"] || spec.Scope == "", func() { spec.Scope = *scope })
	setIf(len(allow) > 0, func() { spec.AllowDomains = allow })
	setIf(len(allowPatterns) > 0, func() { spec.AllowPatterns = allowPatterns })
	setIf(len(dedupAgainst) > 0, func() { spec.DedupAgainst = dedupAgainst })
	setIf(len(robotsOverride) > 0, func() { spec.RobotsOverride = robotsOverride })
	lines, err := headerLines(headers)
	if err != nil {
		return err
	}
	for _, h := range lines {
		hname, hvalue, ok := strings.Cut(h, ":")
		if !ok {
			return errors.New(`--header: a value has no colon (not shown: it may be a secret): give "Name: value"`)
		}
		if spec.Headers == nil {
			spec.Headers = map[string]string{}
		}
		spec.Headers[strings.TrimSpace(hname)] = strings.TrimSpace(hvalue)
	}
	setIf(visited["max-pages"] || spec.MaxPages == 0, func() { spec.MaxPages = *maxPages })
	setIf(*maxDepth > 0, func() { spec.MaxDepth = *maxDepth })
	setIf(*maxHosts > 0, func() { spec.MaxHosts = *maxHosts })
	setIf(visited["max-duration"], func() { spec.MaxDuration = crawl.Duration(*maxDuration) })
	setIf(visited["max-bytes"], func() { spec.MaxBytes = *maxBytes })
	setIf(*perHost > 0, func() { spec.MaxPagesPerHost = *perHost })
	setIf(*delay > 0, func() { spec.Delay = crawl.Duration(*delay) })
	setIf(visited["auto-throttle"], func() { spec.AutoThrottle = *autoThrottle })
	setIf(*politenessKey != "", func() { spec.PolitenessKey = *politenessKey })
	if *crawlProxy != "" {
		if spec.Proxy, err = secretArg("--crawl-proxy", *crawlProxy); err != nil {
			return err
		}
	}
	setIf(visited["cookies"], func() { spec.Cookies = *cookies })
	if visited["requisites"] || *requisitesPerPage > 0 {
		if spec.Requisites == nil {
			spec.Requisites = &crawl.Requisites{}
		}
		setIf(visited["requisites"], func() { spec.Requisites.Off = !*requisites })
		setIf(*requisitesPerPage > 0, func() { spec.Requisites.MaxPerPage = *requisitesPerPage })
	}
	if *extractFile != "" {
		if spec.Extract, err = readRules(*extractFile); err != nil {
			return err
		}
	}
	if *deliverFile != "" {
		if spec.Outputs, err = readOutputs(*deliverFile); err != nil {
			return err
		}
	}
	if *webhook != "" || *webhookSecret != "" {
		spec.Outputs = append(spec.Outputs, crawl.Output{Name: "webhook", Webhook: &crawl.Webhook{URL: *webhook, Secret: *webhookSecret}})
	}
	if *dataset {
		spec.Outputs = append(spec.Outputs, crawl.Output{Name: "dataset", Dataset: &crawl.Dataset{}})
	}
	setIf(*userAgent != "", func() { spec.UserAgent = *userAgent })
	setIf(*reqTimeout > 0, func() { spec.RequestTimeout = crawl.Duration(*reqTimeout) })
	setIf(*attempts > 0, func() { spec.MaxAttempts = *attempts })
	setIf(*retryBase > 0, func() { spec.RetryBase = crawl.Duration(*retryBase) })
	if spec.Name == "" {
		spec.Name = "crawl-" + time.Now().UTC().Format("20060102-150405")
	}

	// The spec first (its scope judges the seeds), then the seeds one by one, by the checks the
	// crawl's start makes: bad ones are reported, the crawl goes on with the good ones.
	prepared := spec.WithDefaults()
	if err := crawl.CheckID(spec.Name); err != nil {
		return fmt.Errorf("invalid crawl: --name: %w", err)
	}
	if len(spec.Seeds) > 0 {
		if err := errors.Join(prepared.Validate(), crawl.CheckExtract(prepared.Extract)); err != nil {
			return fmt.Errorf("invalid crawl: %w", err)
		}
	}
	check := &policy.Crawls{Norm: cfg.Normalizer(), DefaultUserAgent: cfg.UserAgent, Ports: cfg.AllowPorts, DefaultProxy: cfg.Proxy,
		Guard: netguard.New(netguard.Options{ConnectTo: cfg.ConnectTo, Allow: cfg.AllowNetworks})}
	if err := check.CheckProxy(ctx, prepared); err != nil {
		return fmt.Errorf("invalid crawl: %w", err)
	}
	good, invalid := admit.CheckSeeds(check, prepared)
	for _, bad := range invalid {
		fmt.Fprintf(os.Stderr, "trawler: skipping seed %q: %s\n", bad.Seed, bad.Reason)
	}
	if len(good) == 0 {
		return errors.New("no valid seed URL (give URLs or files with --seeds, or as arguments)")
	}
	spec.Seeds = good

	tc, err := app.DialTemporal(ctx, cfg, app.NewLogger(cfg))
	if err != nil {
		return err
	}
	defer tc.Close()
	shown := spec
	shown.Scope = prepared.Scope // the summary names the scope in force
	run, err := tc.ExecuteWorkflow(ctx, crawl.CrawlStart(cfg.IDPrefix, shown, cfg.TaskQueue), workflows.CrawlWorkflow, workflows.CrawlInput{Spec: spec})
	if err != nil {
		return fmt.Errorf("start crawl %s: %w", spec.Name, err)
	}
	fmt.Fprintf(os.Stderr, "trawler: started crawl %s (workflow %s, run %s) with %d seeds\n", spec.Name, run.GetID(), run.GetRunID(), len(good))
	if !*wait {
		fmt.Fprintf(stdout, "%s\n", run.GetID())
		return nil
	}
	if err := waitCrawl(ctx, tc, run, stdout); err != nil {
		return err
	}
	return waitDeliveries(ctx, tc, run.GetID(), spec.Outputs)
}

// waitCrawl shows progress every two seconds until the crawl ends, then prints its summary.
func waitCrawl(ctx context.Context, tc client.Client, run client.WorkflowRun, stdout io.Writer) error {
	done := make(chan error, 1)
	var final crawl.CrawlProgress
	go func() { done <- run.Get(ctx, &final) }()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			fmt.Fprintln(os.Stderr)
			if err != nil {
				return fmt.Errorf("crawl %s: %w", run.GetID(), err)
			}
			return printSummary(stdout, final)
		case <-tick.C:
			p, err := queryProgress(ctx, tc, run.GetID())
			if err != nil {
				continue
			}
			fmt.Fprintf(os.Stderr, "\r%s", progressLine(p))
			if p.State == crawl.CrawlStopped {
				// A stopped crawl's workflow still lets its in-flight requests land and writes
				// its last WARC file, however many hosts close their leases behind it; the
				// operator has the answer now.
				fmt.Fprintf(os.Stderr, "\ntrawler: crawl stopped (%s); its last requests land and its WARC files are written in the background\n", p.StopReason)
				return printSummary(stdout, p)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// printSummary writes a crawl's progress as indented JSON: the summary `--wait` ends with.
func printSummary(stdout io.Writer, p crawl.CrawlProgress) error {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

func queryProgress(ctx context.Context, tc client.Client, id string) (crawl.CrawlProgress, error) {
	var p crawl.CrawlProgress
	v, err := tc.QueryWorkflow(ctx, id, "", crawl.QueryProgress)
	if err != nil {
		return p, err
	}
	return p, v.Get(&p)
}

func progressLine(p crawl.CrawlProgress) string {
	return fmt.Sprintf("%-8s fetched %d  pages %d  pending %d  errors %d  dead %d  hosts %d  %.1f pages/s   ",
		p.State, p.Fetched, p.Pages, p.Pending, p.Errors, p.Dead, p.Hosts, p.PagesPerSec)
}

// readSeeds expands each argument: an existing file is read (one URL per line, # comments),
// anything else is a URL.
func readSeeds(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || st.IsDir() {
			out = append(out, a)
			continue
		}
		f, err := os.Open(a)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read seeds %s: %w", a, err)
		}
	}
	return out, nil
}
