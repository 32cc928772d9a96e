package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// benchRules extract from every page of the Python manual: its heading, its section headings
// and internal links (all), a section ID by XPath, and its meta, OpenGraph and JSON-LD data.
var benchRules = []crawl.ExtractRule{{Name: "doc", Fields: []crawl.ExtractField{
	{Name: "title", CSS: "h1"},
	{Name: "sections", CSS: "h2", All: true},
	{Name: "links", CSS: "a.reference.internal", Attr: "href", All: true, MaxBytes: 200},
	{Name: "section", XPath: "//div[@class='section' or @class='body']/@id"},
}, JSONLD: true, OpenGraph: true, Meta: true}}

// BenchmarkDeliveries states what extraction rules and deliveries cost a page (issue 50): the
// same crawl of the Python manual on loopback (as BenchmarkRequisites, requisites off) with
// no rules, with extraction rules, then with the rules and two outputs — a signed webhook to a
// receiver in this process and a Parquet dataset in the bucket — each by fresh worker
// processes. Per page: the CPU of the workers and of the services (Temporal, Postgres, MinIO),
// measured once the deliveries have ended.
func BenchmarkDeliveries(b *testing.B) {
	docs := filepath.Join(repoRoot(b), pydocDir)
	if _, err := os.Stat(filepath.Join(docs, "index.html")); err != nil {
		b.Fatalf("the Python manual is not unpacked: run scripts/tools.sh (make up does): %v", err)
	}
	pages := envInt("BENCH_DELIVER_PAGES", 1000)
	key := testenv.Unique("bench-key")
	var lines []string
	for range b.N {
		for _, mode := range []string{"none", "extract", "extract+deliver"} {
			wc := testweb.DefaultConfig()
			wc.Hosts, wc.Pages, wc.Specials, wc.DocsDir = 1, 2, false, docs
			wc.DefaultDelay = 5 * time.Millisecond
			spec := crawl.Spec{Name: testenv.Unique("dlv"), Seeds: []string{"http://" + testweb.DocsHost + "/"}, Scope: crawl.ScopeHost,
				Delay: crawl.Duration(wc.DefaultDelay), MaxPages: pages, ProgressInterval: crawl.Duration(2 * time.Second),
				Requisites: &crawl.Requisites{Off: true}}
			hook := newReceiver(key)
			srv := httptest.NewServer(hook)
			var after func(*stack)
			if mode != "none" {
				spec.Extract = benchRules
			}
			if mode == "extract+deliver" {
				spec.Outputs = []crawl.Output{
					{Name: "hook", Webhook: &crawl.Webhook{URL: srv.URL, Secret: "secret:env:BENCH_HOOK_KEY"}},
					{Name: "lake", Dataset: &crawl.Dataset{}},
				}
				after = func(s *stack) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					defer cancel()
					for _, o := range spec.Outputs {
						if err := s.tc.GetWorkflow(ctx, crawl.DeliverID(crawl.CrawlWorkflowID(s.cfg.IDPrefix, spec.Name), o.Name), "").Get(ctx, nil); err != nil {
							b.Fatalf("delivery %s: %v", o.Name, err)
						}
					}
				}
			}
			m := measureCrawl(b, wc, spec, []string{"BENCH_HOOK_KEY=" + key, "TRAWLER_DELIVERY_ALLOW_NETWORKS=127.0.0.1/32"}, after)
			srv.Close()
			var html int
			var extracted int
			if err := m.s.store.Pool().QueryRow(context.Background(), `SELECT count(*), count(extract) FROM documents WHERE crawl_id = $1`,
				spec.Name).Scan(&html, &extracted); err != nil {
				b.Fatal(err)
			}
			parts, _ := m.s.blob.List(context.Background(), crawl.DefaultDatasetPrefix+"/crawl="+spec.Name+"/")
			delivered := len(hook.keys())
			if mode == "extract+deliver" && (delivered != html || hook.badSig > 0) {
				b.Errorf("the receiver has %d of %d documents (%d bad signatures)", delivered, html, hook.badSig)
			}
			per := float64(max(html, 1))
			lines = append(lines, fmt.Sprintf("| %s | %d | %d | %d (%d POSTs) | %d | %.2f | %.2f | %s |", mode, html, extracted, delivered,
				hook.accepted, len(parts), m.workerCPU/per*1000, m.serviceCPU/per*1000, m.wall.Round(time.Second)))
			b.Log(lines[len(lines)-1])
		}
	}
	host, _ := os.Hostname()
	report(b, fmt.Sprintf("### What extraction rules and deliveries cost — %s\n\n`make bench-deliveries` on %s: Python's HTML manual "+
		"(python3.11-doc) on loopback, %d pages, 5 ms delay, requisites off, fresh worker processes (one workflow+process, one "+
		"fetch) per run. Rules: a heading and a section ID (CSS, XPath), every section heading and internal link (all), meta, "+
		"OpenGraph and JSON-LD. Outputs: a signed webhook (a receiver in the bench process, 100 records a POST) and a Parquet "+
		"dataset in the bucket. CPU is measured after the deliveries ended.\n\n"+
		"| run | pages | with extracted values | webhook records | dataset parts | workers CPU ms/page | services CPU ms/page | wall |\n"+
		"|---|---|---|---|---|---|---|---|\n%s\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, pages, strings.Join(lines, "\n")))
}
