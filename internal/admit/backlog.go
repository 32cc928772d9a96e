package admit

import (
	"context"
	"log/slog"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// backlogEvery is how often a Backlog asks Temporal about the queue: one small request a
// second per process, whatever the crawl's size.
const backlogEvery = time.Second

// Backlog watches the workflow task queue host workflows run on (crawl.HostQueue). When its
// tasks wait, Temporal (or the workflow workers) is behind, and starting more hosts only
// deepens the queue: every new host adds a task to it. A bench whose processing got faster
// started 2,000 hosts whose first task never ran (before hosts had their own queue, the
// crawl's stop waited minutes behind them too). Link admissions and the
// crawl's sweep wake no host while the oldest task has waited longer than MaxAge; their hosts
// keep their URLs queued for the next admission or sweep. Seeds and operators' replays still
// wake theirs.
type Backlog struct {
	Client    client.Client
	Namespace string
	TaskQueue string
	MaxAge    time.Duration // 0: never behind

	mu         sync.Mutex
	checked    time.Time
	behind     bool
	refreshing bool // one caller asks Temporal; the others meanwhile take the last answer
	logged     time.Time
}

// Behind says whether the queue's oldest task has waited longer than MaxAge, asking Temporal
// at most once per backlogEvery. When Temporal cannot say, the queue is taken as not behind:
// wake-ups fall back to the wake rate alone rather than stop.
func (b *Backlog) Behind(ctx context.Context) bool {
	if b == nil || b.MaxAge <= 0 {
		return false
	}
	b.mu.Lock()
	if b.refreshing || time.Since(b.checked) < backlogEvery {
		behind := b.behind
		b.mu.Unlock()
		return behind
	}
	b.refreshing = true
	b.mu.Unlock()
	// Not under the lock: a slow Temporal (when this matters most) must not hold up every
	// admission behind one request.
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := b.Client.WorkflowService().DescribeTaskQueue(rctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     b.Namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: b.TaskQueue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW,
		ReportStats:   true,
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refreshing, b.checked = false, time.Now()
	if err != nil {
		if time.Since(b.logged) > time.Minute {
			b.logged = time.Now()
			slog.Warn("reading the workflow task queue's backlog failed; waking hosts by the wake rate alone", "queue", b.TaskQueue, "error", err)
		}
		b.behind = false
		return false
	}
	age := resp.GetStats().GetApproximateBacklogAge().AsDuration()
	was := b.behind
	b.behind = age > b.MaxAge
	if b.behind != was {
		slog.Info("workflow task queue backlog", "queue", b.TaskQueue, "oldestTask", age.Round(time.Millisecond),
			"tasks", resp.GetStats().GetApproximateBacklogCount(), "wakingHosts", !b.behind)
	}
	return b.behind
}
