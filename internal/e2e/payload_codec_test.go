package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/codec"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// With TRAWLER_PAYLOAD_KEY, a crawl runs as before, and what Temporal stores — the crawl's
// spec with its secret header, lease results, queries, the host workflows' inputs — is sealed:
// a client without the key reads no secret, and no plain JSON, in any event of the crawl's
// or a host's history.
func TestTemporalHoldsNoSecretInClear(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 3, false
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	s.cfg.PayloadKey = "test payload key of the e2e suite"
	ctx := context.Background()
	sealed, err := app.DialTemporal(ctx, s.cfg, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sealed.Close)
	raw := s.tc
	s.tc = sealed
	s.startWorkers(s.cfg)

	const secret = "s3cret-e2e-header-value"
	run := s.start(crawl.Spec{Name: testenv.Unique("sealed"), Seeds: s.web.Seeds(), Scope: crawl.ScopeAny,
		Headers: map[string]string{testweb.SecretHeader: secret}, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)})
	p := s.wait(run, 2*time.Minute)
	checkNothingLost(t, s, p, 0, 0)
	for _, r := range s.web.Audit().Requests("") {
		if !r.Secret {
			t.Errorf("%s%s went without the crawl's header", r.Host, r.Path)
		}
	}

	histories := map[string]string{run.GetID(): run.GetRunID(), crawl.HostWorkflowID(s.cfg.IDPrefix, s.web.HostName(0)): ""}
	sealedPayloads := 0
	for id, runID := range histories {
		it := raw.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events := 0
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			events++
			b, err := ev.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(testweb.SecretHeader)) {
				t.Errorf("%s's event %d (%s) holds the secret in clear", id, ev.EventId, ev.EventType)
			}
			// Inputs and results are sealed (search attributes are not: the server indexes them).
			var payloads []*commonpb.Payload
			payloads = append(payloads, ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()...)
			for _, m := range ev.GetWorkflowExecutionStartedEventAttributes().GetMemo().GetFields() {
				payloads = append(payloads, m)
			}
			payloads = append(payloads, ev.GetActivityTaskScheduledEventAttributes().GetInput().GetPayloads()...)
			payloads = append(payloads, ev.GetActivityTaskCompletedEventAttributes().GetResult().GetPayloads()...)
			payloads = append(payloads, ev.GetMarkerRecordedEventAttributes().GetDetails()["data"].GetPayloads()...)
			payloads = append(payloads, ev.GetWorkflowExecutionSignaledEventAttributes().GetInput().GetPayloads()...)
			for _, pl := range payloads {
				if string(pl.GetMetadata()["encoding"]) != codec.Encoding {
					t.Errorf("%s's event %d (%s) holds a %s payload", id, ev.EventId, ev.EventType, pl.GetMetadata()["encoding"])
				} else {
					sealedPayloads++
				}
			}
		}
		if events == 0 {
			t.Errorf("no history for %s", id)
		}
	}
	if sealedPayloads == 0 {
		t.Error("no sealed payload in the histories")
	}
	// Those with the key read the crawl as ever: its progress query, decoded.
	resp, err := sealed.QueryWorkflow(ctx, run.GetID(), "", crawl.QueryProgress)
	var q crawl.CrawlProgress
	if err != nil || resp.Get(&q) != nil || q.CrawlID != p.CrawlID {
		t.Errorf("progress query with the key: %+v, %v", q, err)
	}
}
