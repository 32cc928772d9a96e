package api

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Host inspection, one way for GET /api/v1/host and `trawler host`.

// HostAnalysis is GET /api/v1/host, and what `trawler host --record` prints.
type HostAnalysis struct {
	*store.HostRecord
	Workflow *crawl.HostStatus `json:"workflow,omitempty"` // the host workflow's status query (its latest run)
}

// HostKey is the host key (authority) of what an operator names: a host, host:port or a URL.
func HostKey(norm *urlnorm.Normalizer, arg string) (string, error) {
	u := strings.TrimSpace(arg)
	if !strings.Contains(u, "://") {
		u = "http://" + u + "/"
	}
	n, err := norm.Normalize(u)
	if err != nil {
		return "", fmt.Errorf("host %q: %w", arg, err)
	}
	return urlnorm.Authority(n), nil
}

// QueryHost asks host's latest workflow run for its status (a run that ended answers from its
// history); nil when there is none, or no answer within 3 s.
func QueryHost(ctx context.Context, tc client.Client, idPrefix, host string) *crawl.HostStatus {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	v, err := tc.QueryWorkflow(ctx, crawl.HostWorkflowID(idPrefix, host), "", crawl.QueryStatus)
	if err != nil {
		return nil
	}
	var st crawl.HostStatus
	if v.Get(&st) != nil {
		return nil
	}
	return &st
}

// InspectHost is a host's Postgres record and its running workflow's status (store.ErrNoHost:
// no crawl has touched it).
func InspectHost(ctx context.Context, tc client.Client, st *store.Store, idPrefix, host string) (HostAnalysis, error) {
	rec, err := st.Inspect().HostRecordOf(ctx, host)
	if err != nil {
		return HostAnalysis{}, err
	}
	return HostAnalysis{HostRecord: rec, Workflow: QueryHost(ctx, tc, idPrefix, host)}, nil
}
