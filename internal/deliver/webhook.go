package deliver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/netguard"
)

// Webhook POSTs batches. Its client dials through the address guard: a receiver on loopback or
// a private network only where the worker's settings allow it (TRAWLER_DELIVERY_ALLOW_NETWORKS).
type Webhook struct {
	Client    *http.Client
	UserAgent string
}

// NewWebhook is a Webhook whose requests go through dialer, time out after timeout, and never
// follow a redirect (a receiver that moved says so with a 3xx, which is dead-lettered).
func NewWebhook(dialer *netguard.Dialer, tr *http.Transport, timeout time.Duration, userAgent string) *Webhook {
	if tr == nil {
		tr = &http.Transport{}
	}
	tr = tr.Clone()
	tr.DialContext = dialer.DialContext
	tr.Proxy = nil // a webhook goes where its URL says, not through the crawl's proxy
	tr.MaxIdleConnsPerHost = 4
	return &Webhook{UserAgent: userAgent, Client: &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Headers of a webhook request.
const (
	HeaderSignature = "X-Trawler-Signature" // "sha256=" + hex HMAC-SHA256 of the body
	HeaderCrawl     = "X-Trawler-Crawl"
	HeaderOutput    = "X-Trawler-Output"
	HeaderBatch     = "X-Trawler-Batch"   // the same on every try of a batch
	HeaderAttempt   = "X-Trawler-Attempt" // which try this is
	HeaderIdem      = "Idempotency-Key"   // crawl/output/batch
)

// Sign is the signature header's value for body under key: what a receiver recomputes.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify says whether sig is body's signature under key (constant time).
func Verify(key, body []byte, sig string) bool {
	return hmac.Equal([]byte(sig), []byte(Sign(key, body)))
}

// maxReceiverSays bounds what a failed request's response body adds to its error: the
// receiver's words are recorded, so they are clipped.
const maxReceiverSays = 200

type webhookSink struct {
	w    *Webhook
	d    *Deliverer
	spec crawl.Spec
	out  crawl.Output
}

// send POSTs {"crawl", "output", "batch", "records": [...]}, signed with the output's key as
// this worker resolves it.
func (s *webhookSink) send(ctx context.Context, b *batch) error {
	key, err := crawl.ResolveSecret(s.out.Webhook.Secret)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", s.out.Name, err) // another worker may hold it: retried
	}
	target, err := crawl.ResolveSecret(s.out.Webhook.URL)
	if err != nil {
		return fmt.Errorf("webhook %s: url: %w", s.out.Name, err)
	}
	if err := crawl.CheckWebhookURL(target, true); err != nil {
		return &Permanent{Err: fmt.Errorf("webhook %s: the secret url names %w", s.out.Name, err)}
	}
	var lines bytes.Buffer
	if err := encode(ctx, s.d.Records, &lines, "jsonl", s.spec, s.out, b); err != nil {
		return err
	}
	body := make([]byte, 0, lines.Len()+256)
	body = append(body, `{"crawl":`...)
	body = strconv.AppendQuote(body, b.crawlID)
	body = append(body, `,"output":`...)
	body = strconv.AppendQuote(body, b.output)
	body = append(body, `,"batch":`...)
	body = strconv.AppendQuote(body, b.id)
	body = append(body, `,"records":[`...)
	// One JSON object a line, and JSON never holds a raw newline: the lines, comma-separated,
	// are the array's elements.
	body = append(body, bytes.ReplaceAll(bytes.TrimRight(lines.Bytes(), "\n"), []byte("\n"), []byte(","))...)
	body = append(body, "]}"...)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return &Permanent{Err: fmt.Errorf("webhook %s: %w", s.out.Name, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.w.UserAgent)
	req.Header.Set(HeaderSignature, Sign([]byte(key), body))
	req.Header.Set(HeaderCrawl, b.crawlID)
	req.Header.Set(HeaderOutput, b.output)
	req.Header.Set(HeaderBatch, b.id)
	req.Header.Set(HeaderAttempt, strconv.Itoa(b.attempt))
	req.Header.Set(HeaderIdem, b.crawlID+"/"+b.output+"/"+b.id)
	resp, err := s.w.Client.Do(req)
	if err != nil {
		// The transport's error may quote what the receiver sent (a status line, a header, a
		// certificate's names), and it never names the URL (a secret one stays secret).
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		why := crawl.ClipError(err.Error())
		if errors.Is(err, netguard.ErrBlocked) {
			return &Permanent{Err: fmt.Errorf("webhook %s: %s (allow it with TRAWLER_DELIVERY_ALLOW_NETWORKS)", s.out.Name, why)}
		}
		return fmt.Errorf("webhook %s: %s", s.out.Name, why)
	}
	defer resp.Body.Close()
	says, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // drained, so the connection is kept
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("webhook %s: the receiver answered %d: %s", s.out.Name, resp.StatusCode,
		crawl.Clip(string(bytes.ToValidUTF8(says, []byte("?"))), maxReceiverSays))
	switch {
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooEarly,
		resp.StatusCode == http.StatusTooManyRequests:
		return err // the receiver's trouble: tried again after a backoff
	}
	return &Permanent{Err: err} // it refuses the batch (4xx), or moved (3xx): trying again cannot help
}

// recordOptions are an output's records in format: every field, the main text only when the
// output asks for it.
func recordOptions(crawlID, format string, out crawl.Output) export.Options {
	o := export.Options{Crawl: crawlID, Format: format}
	if !out.Text {
		o.Omit = []string{"text"}
	}
	return o
}

// encode writes the batch's records in format, as many as fit maxBatchBytes (at least one),
// and sets b.to to the last one written.
func encode(ctx context.Context, src *export.Source, w io.Writer, format string, spec crawl.Spec, out crawl.Output, b *batch) error {
	rw, err := src.NewRecordWriter(w, recordOptions(b.crawlID, format, out), spec.Extract)
	if err != nil {
		return err
	}
	for i, p := range b.pages {
		if i > 0 && rw.Size() >= maxBatchBytes {
			break
		}
		if err := rw.Write(ctx, p.StoredPage); err != nil {
			return err
		}
		b.to = p.At
	}
	return rw.Close()
}
