package admit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// WakeLater returns before the hosts are started (a crawl's start goes on to start its
// processing meanwhile), and then starts every one of them, each once, through a worker in
// this process (the eager start's path).
func TestWakeLaterStartsEveryHostInTheBackground(t *testing.T) {
	c := testenv.Temporal(t)
	queue := testenv.Unique("wake-")
	var mu sync.Mutex
	ran := map[string]int{}
	w := worker.New(c, crawl.HostQueue(queue), worker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, in crawl.HostInput) error {
		if !workflow.IsReplaying(ctx) {
			mu.Lock()
			ran[in.Host]++
			mu.Unlock()
		}
		return nil
	}, workflow.RegisterOptions{Name: crawl.HostWorkflowName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	count := func() (hosts, runs int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range ran {
			runs += n
		}
		return len(ran), runs
	}

	const n = 200
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%03d.wake.test", i)
	}
	waker := &Waker{Client: c, TaskQueue: queue, IDPrefix: queue}
	waker.WakeLater("c1", crawl.HostConfig{}, hosts)
	if got, _ := count(); got == n {
		t.Fatalf("WakeLater returned after all %d hosts ran: it should not wait for them", n)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if got, _ := count(); got == n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got, runs := count(); got != n || runs != n {
		t.Fatalf("%d hosts ran (%d runs), want each of %d once", got, runs, n)
	}
	for _, h := range hosts[:3] {
		desc, err := c.DescribeWorkflowExecution(context.Background(), crawl.HostWorkflowID(queue, h), "")
		if err != nil || desc.GetWorkflowExecutionInfo().GetTaskQueue() != crawl.HostQueue(queue) { // never the crawls' queue
			t.Fatalf("host %s: %v %v", h, desc, err)
		}
	}
}
