package crawl

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Output delivers a crawl's documents while it runs (spec.outputs): each stored document, as
// the record `trawler export` writes for it, at least once, with a key a consumer dedupes on
// (the document's ID and digest). An output is a webhook or a Parquet dataset in the bucket.
//
//	"outputs": [
//	  {"name": "hook", "webhook": {"url": "https://example.net/in", "secret": "secret:env:HOOK_KEY"}},
//	  {"name": "lake", "dataset": {}}
//	]
type Output struct {
	Name    string   `json:"name"`
	Webhook *Webhook `json:"webhook,omitempty"`
	Dataset *Dataset `json:"dataset,omitempty"`
	// Text adds each page's main text to its record (up to 1 MiB a page; off: the record has
	// every other field).
	Text bool `json:"text,omitempty"`
	// BatchSize is how many records one POST or one Parquet part holds at most (default
	// DefaultBatchSize).
	BatchSize int `json:"batchSize,omitempty"`
	// Every is how long a caught-up output waits before it looks for new documents again
	// (default DefaultDeliverEvery).
	Every Duration `json:"every,omitempty"`
	// MaxAttempts is how many times a batch is tried (with exponential backoff, 2 s doubling
	// to a minute between tries: 12 tries span about 7 minutes) before it is dead-lettered;
	// `trawler deliver --replay` sends dead-lettered batches again.
	MaxAttempts int `json:"maxAttempts,omitempty"`
}

// Webhook POSTs batches of records as JSON ({"crawl", "output", "batch", "records": […]}),
// signed: X-Trawler-Signature is "sha256=" and the hex HMAC-SHA256 of the body under Secret.
type Webhook struct {
	// URL is where batches go: in clear, or named as a secret (secret:env:NAME) when it holds
	// a token; never with credentials in clear.
	URL string `json:"url"`
	// Secret names the signing key (secret:env:NAME or secret:file:/path), resolved by the
	// worker that sends: the key itself is never in the spec.
	Secret string `json:"secret"`
}

// Dataset writes Parquet parts under the crawl's bucket, in hive-style partitions a reader
// queries without Trawler: PREFIX/crawl=NAME/hour=YYYY-MM-DDTHH/part-….parquet (the hour the
// page was fetched, UTC). Each part is one PUT: whole or absent.
type Dataset struct {
	Prefix string `json:"prefix,omitempty"` // default "datasets"
}

// Output bounds and defaults.
const (
	DefaultBatchSize      = 100
	MaxBatchSize          = 1000
	DefaultDeliverEvery   = 5 * time.Second
	DefaultOutputAttempts = 12
	MaxOutputAttempts     = 100
	MaxOutputs            = 10
	DefaultDatasetPrefix  = "datasets"
)

var (
	outputName    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	datasetPrefix = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)
)

// Batch is the output's batch size with its default.
func (o Output) Batch() int {
	if o.BatchSize <= 0 {
		return DefaultBatchSize
	}
	return o.BatchSize
}

// Attempts is the output's attempts with their default.
func (o Output) Attempts() int {
	if o.MaxAttempts <= 0 {
		return DefaultOutputAttempts
	}
	return o.MaxAttempts
}

// PrefixOrDefault is the dataset's key prefix with its default.
func (d Dataset) PrefixOrDefault() string {
	if d.Prefix == "" {
		return DefaultDatasetPrefix
	}
	return strings.Trim(d.Prefix, "/")
}

// OutputNamed is the spec's output called name.
func (s Spec) OutputNamed(name string) (Output, bool) {
	for _, o := range s.Outputs {
		if o.Name == name {
			return o, true
		}
	}
	return Output{}, false
}

// validateOutputs checks the outputs' shape, naming each error's output.
func validateOutputs(outs []Output) []error {
	var errs []error
	if len(outs) > MaxOutputs {
		errs = append(errs, fmt.Errorf("outputs: %d; at most %d", len(outs), MaxOutputs))
	}
	names, prefixes := map[string]bool{}, map[string]string{}
	for i, o := range outs {
		at := fmt.Sprintf("outputs[%d] (%s)", i, Clip(o.Name, 64))
		switch {
		case !outputName.MatchString(o.Name):
			errs = append(errs, fmt.Errorf("%s: name: want 1 to 40 of a-z, 0-9, _ and -, starting with a letter or digit", at))
		case names[o.Name]:
			errs = append(errs, fmt.Errorf("%s: name: another output has it", at))
		}
		names[o.Name] = true
		switch {
		case (o.Webhook == nil) == (o.Dataset == nil):
			errs = append(errs, fmt.Errorf("%s: give one of webhook and dataset", at))
		case o.Webhook != nil:
			errs = append(errs, o.Webhook.validate(at)...)
		case o.Dataset != nil:
			p := o.Dataset.PrefixOrDefault()
			if other, ok := prefixes[p]; ok {
				errs = append(errs, fmt.Errorf("%s: dataset.prefix %q: output %s writes there too (their parts would mix)", at, p, other))
			}
			prefixes[p] = o.Name
			if len(p) > 200 || !datasetPrefix.MatchString(p) || strings.Contains("/"+p+"/", "/../") || strings.Contains("/"+p+"/", "/./") {
				errs = append(errs, fmt.Errorf("%s: dataset.prefix %q: want up to 200 of A-Z a-z 0-9 . _ - in /-separated parts", at, Clip(o.Dataset.Prefix, 64)))
			}
		}
		if o.BatchSize < 0 || o.BatchSize > MaxBatchSize {
			errs = append(errs, fmt.Errorf("%s: batchSize: %d is outside 0…%d", at, o.BatchSize, MaxBatchSize))
		}
		if o.MaxAttempts < 0 || o.MaxAttempts > MaxOutputAttempts {
			errs = append(errs, fmt.Errorf("%s: maxAttempts: %d is outside 0…%d", at, o.MaxAttempts, MaxOutputAttempts))
		}
		if o.Every != 0 && (o.Every.D() < time.Second || o.Every.D() > time.Hour) {
			errs = append(errs, fmt.Errorf("%s: every: %s is outside 1s…1h", at, o.Every.D()))
		}
	}
	return errs
}

// CheckWebhookURL says why v is no webhook URL. One the spec holds in clear may carry no
// credentials (they would sit in the stored spec): a URL that holds a token is named as a
// secret instead (secret:env:NAME), and then, resolved by the worker, it may (secret true).
func CheckWebhookURL(v string, secret bool) error {
	u, err := url.Parse(v)
	switch {
	case len(v) > 2048:
		return errors.New("longer than 2048 bytes")
	case err != nil:
		return errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return errors.New("not an http(s) URL")
	case u.User != nil && !secret:
		return errors.New("carries credentials; the secret signs each request (or name the URL as a secret)")
	}
	return nil
}

func (w Webhook) validate(at string) []error {
	var errs []error
	if IsSecretRef(w.URL) {
		if err := CheckSecretRef(w.URL); err != nil {
			errs = append(errs, fmt.Errorf("%s: webhook.url: %w", at, err))
		}
	} else if err := CheckWebhookURL(w.URL, false); err != nil {
		errs = append(errs, fmt.Errorf("%s: webhook.url %q: %w", at, Clip(w.URL, 200), err))
	}
	switch {
	case w.Secret == "":
		errs = append(errs, fmt.Errorf("%s: webhook.secret: name the signing key (secret:env:NAME or secret:file:/path)", at))
	case !IsSecretRef(w.Secret):
		errs = append(errs, errors.New(at+": webhook.secret: name the key (secret:env:NAME or secret:file:/path), never the key itself: the spec is stored and shown"))
	default:
		if err := CheckSecretRef(w.Secret); err != nil {
			errs = append(errs, fmt.Errorf("%s: webhook.secret: %w", at, err))
		}
	}
	return errs
}
