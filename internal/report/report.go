// Package report draws a crawl's report: one self-contained HTML file (its charts drawn by
// Chart.js, vendored into the binary, so the file opens without a network) and the same
// figures as JSON. The figures come from the crawl's own tables (store.CrawlFigures).
//
// Chart.js (MIT, assets/chart-LICENSE.md) is used because it is the most used and best kept
// charting library that needs nothing else: one 210 KB file, canvas drawing, bar, line and
// doughnut charts with legends and tooltips — what a report needs, without hand-drawn SVG.
package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

//go:embed assets/chart-4.6.1.umd.min.js
var chartJS string

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"bytes": humanBytes,
	"pct":   func(v float64) string { return fmt.Sprintf("%.1f%%", v*100) },
	"ms": func(v float64) string {
		return time.Duration(v * float64(time.Millisecond)).Round(time.Millisecond).String()
	},
}).Parse(pageTemplate))

// Report is a crawl's report: its figures and what is derived from them for the reader.
type Report struct {
	*store.CrawlFigures
	Generated   time.Time     `json:"generated"`
	Span        time.Duration `json:"-"`
	SpanText    string        `json:"span"`
	PagesPerSec float64       `json:"pagesPerSecond"`
	Settings    specSummary   `json:"spec"`
	Replay      fidelitySum   `json:"replayFidelity"`
	Extraction  []ruleSum     `json:"extraction,omitempty"`
}

// ruleSum is what one extraction rule found: the pages it matched and, per field, how many
// of them had a value and how many came back empty.
type ruleSum struct {
	Rule   string     `json:"rule"`
	Pages  int64      `json:"pages"`
	Fields []fieldSum `json:"fields"`
}

type fieldSum struct {
	Name  string `json:"name"`
	Found int64  `json:"found"`
	Empty int64  `json:"empty"`
}

// sumExtraction reads the crawl's rules from its spec and what the documents hold of each.
func sumExtraction(raw json.RawMessage, counts []store.Count) []ruleSum {
	var spec struct {
		Extract []crawl.ExtractRule `json:"extract"`
	}
	_ = json.Unmarshal(raw, &spec)
	n := map[string]int64{}
	for _, c := range counts {
		n[c.Key] = c.N
	}
	var out []ruleSum
	for _, r := range spec.Extract {
		rs := ruleSum{Rule: r.Name, Pages: n[r.Name]}
		names := r.Outputs()
		for _, name := range names {
			found := n[r.Name+"."+name]
			rs.Fields = append(rs.Fields, fieldSum{Name: name, Found: found, Empty: rs.Pages - found})
		}
		out = append(out, rs)
	}
	return out
}

// fidelitySum sums up the sampled pages' replay fidelity (trawler qa); Worst lists the worst.
type fidelitySum struct {
	Measured int                  `json:"measured"`
	Failed   int                  `json:"failed"` // pages that could not be looked at
	Mean     float64              `json:"mean"`
	Min      float64              `json:"min"`
	Worst    []store.PageFidelity `json:"-"` // the figures hold every page (fidelity)
}

// fidelityWorst is how many of the worst pages the report lists.
const fidelityWorst = 10

func sumFidelity(pages []store.PageFidelity) fidelitySum {
	var s fidelitySum
	s.Min = 1
	for _, p := range pages {
		if p.Error != "" {
			s.Failed++
			continue
		}
		s.Measured++
		s.Mean += p.Score
		s.Min = min(s.Min, p.Score)
	}
	if s.Measured > 0 {
		s.Mean /= float64(s.Measured)
	} else {
		s.Min = 0
	}
	s.Worst = pages[:min(len(pages), fidelityWorst)]
	return s
}

// specSummary is what the report shows of the crawl's spec: never a header's value or the
// proxy's address (they may carry credentials), only that they are set.
type specSummary struct {
	Seeds          []string `json:"seeds"`
	Scope          string   `json:"scope"`
	Delay          string   `json:"delay"`
	MaxPages       int      `json:"maxPages"`
	RobotsOverride []string `json:"robotsOverride,omitempty"`
	DedupAgainst   []string `json:"dedupAgainst,omitempty"`
	AllowPatterns  []string `json:"allowPatterns,omitempty"`
	Headers        []string `json:"headers,omitempty"` // names only
	Proxied        bool     `json:"proxied,omitempty"`
	Cookies        bool     `json:"cookies,omitempty"`
}

// summarize reads what a report shows from a recorded spec.
func summarize(raw json.RawMessage) specSummary {
	var s struct {
		specSummary
		HeaderValues map[string]string `json:"headers"`
		Proxy        string            `json:"proxy"`
	}
	_ = json.Unmarshal(raw, &s) // a spec the store holds was valid JSON
	out := s.specSummary
	out.Headers = nil
	for name := range s.HeaderValues {
		out.Headers = append(out.Headers, name)
	}
	sort.Strings(out.Headers)
	out.Proxied = s.Proxy != ""
	return out
}

// New derives a report from a crawl's figures.
func New(f *store.CrawlFigures, now time.Time) *Report {
	r := &Report{CrawlFigures: f, Generated: now.UTC()}
	if f.First != nil && f.Last != nil {
		r.Span = f.Last.Sub(*f.First)
	}
	r.SpanText = r.Span.Round(time.Second).String()
	if s := r.Span.Seconds(); s > 0 {
		r.PagesPerSec = float64(f.Pages) / s
	}
	r.Settings = summarize(f.Spec)
	r.Replay = sumFidelity(f.Fidelity)
	r.Extraction = sumExtraction(f.Spec, f.Extracted)
	f.Timeline = fillGaps(f.Timeline, time.Duration(max(f.BucketSeconds, 1))*time.Second)
	return r
}

// fillGaps puts an empty point in each bucket nothing was fetched in, so time runs evenly
// along the chart and a stall shows as one.
func fillGaps(points []store.TimePoint, bucket time.Duration) []store.TimePoint {
	if len(points) < 2 || bucket <= 0 {
		return points
	}
	span := points[len(points)-1].At.Sub(points[0].At)
	if span/bucket > 10_000 { // not buckets of this size: leave as read
		return points
	}
	out := make([]store.TimePoint, 0, int(span/bucket)+1)
	for i, p := range points {
		if i > 0 {
			for at := points[i-1].At.Add(bucket); at.Before(p.At); at = at.Add(bucket) {
				out = append(out, store.TimePoint{At: at})
			}
		}
		out = append(out, p)
	}
	return out
}

// JSON writes the report's figures as indented JSON.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// HTML writes the report as one self-contained HTML page.
func (r *Report) HTML(w io.Writer) error { return r.HTMLWithNonce(w, "") }

// HTMLWithNonce writes the page with its script and style elements carrying nonce, for a
// Content-Security-Policy that lets only those run ("": none).
func (r *Report) HTMLWithNonce(w io.Writer, nonce string) error {
	var data bytes.Buffer
	if err := json.NewEncoder(&data).Encode(r); err != nil {
		return fmt.Errorf("report: encode figures: %w", err)
	}
	return page.Execute(w, struct {
		*Report
		ChartJS template.JS
		Data    template.JS
		Nonce   string
	}{r, template.JS(chartJS), template.JS(jsonForScript(data.Bytes())), nonce})
}

// jsonForScript makes JSON safe inside a <script> element: "<", ">" and "&" as escapes, so
// no string from a crawled page (a host, a URL, a reason) can close the element.
func jsonForScript(b []byte) string {
	var out bytes.Buffer
	json.HTMLEscape(&out, b)
	return out.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
