package retention

import (
	"context"
	"errors"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// WorkflowOpen is Deleter.Open over Temporal: whether the crawl's workflow still runs.
func WorkflowOpen(tc client.Client, idPrefix string) func(ctx context.Context, crawlID string) (bool, error) {
	return func(ctx context.Context, crawlID string) (bool, error) {
		resp, err := tc.DescribeWorkflowExecution(ctx, crawl.CrawlWorkflowID(idPrefix, crawlID), "")
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return false, nil // closed and gone with the namespace's retention, or never started here
		}
		if err != nil {
			return false, err
		}
		return resp.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
	}
}
