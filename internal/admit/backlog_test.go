package admit

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/testenv"
)

// A workflow queue whose tasks wait (here: no worker polls it) is behind once its oldest task
// has waited MaxAge, as Temporal reports it; an idle queue is not, and without a bound nothing
// is ever behind.
func TestBacklogSaysWhenTheWorkflowQueueFallsBehind(t *testing.T) {
	c := testenv.Temporal(t)
	ctx := context.Background()
	queue := testenv.Unique("backlog-")
	b := &Backlog{Client: c, Namespace: testenv.Config(t).TemporalNamespace, TaskQueue: queue, MaxAge: time.Second}
	if b.Behind(ctx) {
		t.Fatal("an empty queue is behind")
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, "NobodyRunsThis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), run.GetID(), "", "test done") })
	if (&Backlog{Client: c, TaskQueue: queue}).Behind(ctx) {
		t.Fatal("a Backlog with no MaxAge is behind")
	}
	// Many admissions ask at once: one of them asks Temporal, the others take the last answer.
	var asking sync.WaitGroup
	for range 8 {
		asking.Go(func() { b.Behind(ctx) })
	}
	asking.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for !b.Behind(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("a queue whose task has waited 30 s is not behind")
		}
		time.Sleep(backlogEvery)
	}
}
