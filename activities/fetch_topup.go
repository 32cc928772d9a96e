package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
)

// TopUpOwner is the claim owner of the URLs a batch claims itself.
func TopUpOwner(batchOwner string) string { return batchOwner + "/top-up" }

// topUp claims more of the host's due URLs while the batch has room and time left in its
// window, so a host whose URLs trickle in (links found a few at a time) still fills its
// batches: a batch costs the host workflow the same history events whatever it carries. Not
// after a Retry-After or errors, and not for concurrent batches (their semaphore is sized).
func (b *batch) topUp(ctx context.Context, concurrency int) (bool, error) {
	b.mu.Lock()
	room := b.in.TopUp - len(b.in.URLs)
	stop := room <= 0 || b.in.ClaimTTL <= 0 || concurrency > 1 || b.f.clock().Since(b.began) >= b.in.Window ||
		!b.res.DeferUntil.IsZero() || b.res.ConsecutiveErrors > 0 || b.res.Gone != ""
	b.mu.Unlock()
	if stop || ctx.Err() != nil {
		return false, nil
	}
	// Owned by this activity across its attempts: a retry takes back what a dead attempt
	// claimed after its last heartbeat, and drops what it already carries.
	owner := b.topUpOwner(ctx)
	// Quietly: the host workflow claims again after this batch, no admission need wake it.
	epoch, _ := b.f.Control.Epoch()
	claimed, _, err := b.f.Store.ClaimQuietly(ctx, b.in.Host, owner, room, b.in.ClaimTTL, b.f.clock().Now())
	if err != nil {
		return false, err
	}
	carried := make(map[string]bool, len(b.in.URLs))
	for _, u := range b.in.URLs {
		carried[u.CrawlID+"\x00"+string(u.Hash)] = true
	}
	var more []crawl.Claimed
	for _, u := range claimed {
		if !carried[u.CrawlID+"\x00"+string(u.Hash)] {
			more = append(more, u)
		}
	}
	if len(more) == 0 {
		return false, nil
	}
	failpoint.Hit(failpoint.TopUpClaimed)
	b.claimedNow(more, epoch)
	if err := b.pace(ctx, more); err != nil {
		return false, err
	}
	b.mu.Lock()
	b.in.URLs = append(b.in.URLs, more...)
	b.res.Finished = append(b.res.Finished, make([]bool, len(more))...)
	b.res.TopUp = append(b.res.TopUp, more...)
	b.mu.Unlock()
	b.heartbeat(ctx)
	return true, nil
}

// topUpOwner is the claim owner of the batch's own top-ups (per activity for batches from
// workflows that pass no owner).
func (b *batch) topUpOwner(ctx context.Context) string {
	if b.in.Owner != "" {
		return TopUpOwner(b.in.Owner)
	}
	info := activity.GetInfo(ctx)
	return "fetch:" + info.WorkflowExecution.RunID + "/" + info.ActivityID
}

// handOnOwned adds to the result the pages fetched under the batch's claims that no attempt
// reported: the host workflow hands them to processing with the rest.
func (b *batch) handOnOwned(ctx context.Context) error {
	owners := []string{b.topUpOwner(ctx)}
	if b.in.Owner != "" {
		owners = append(owners, b.in.Owner)
	}
	pages, err := b.f.Store.FetchedOwned(ctx, b.in.Host, owners)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.res.Pages = appendNewPages(b.res.Pages, pageRefs(pages)...)
	b.mu.Unlock()
	return nil
}
