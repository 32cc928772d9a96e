package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// On a Temporal namespace of the operator's own, without Trawler's search attributes, a
// worker refuses to start and says what to run; `trawler setup` registers them (and again
// adds nothing), and then the worker starts.
func TestSetupPreparesAnOperatorsNamespace(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 1, 2
	s := newStackWithoutWorkers(t, wc)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := testenv.Unique("trawler-ns-")
	if _, err := s.tc.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}); err != nil {
		t.Fatalf("register namespace %s: %v", ns, err)
	}
	// A new namespace reaches the server's cache within seconds.
	waitFor(t, time.Minute, func() bool {
		_, err := s.tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
		return err == nil
	})
	worker := buildBinary(t, "trawler-worker", "./workers")
	cli := buildBinary(t, "trawler", "./starter")
	env := append(s.workerEnv("workflow,fetch,process", "off"), "TEMPORAL_NAMESPACE="+ns)

	run := func(bin string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := run(worker)
	if err == nil || !strings.Contains(out, "trawler setup") || !strings.Contains(out, "HostState") {
		t.Fatalf("a worker on a namespace without search attributes: err %v, output:\n%s", err, out)
	}
	out, err = run(cli, "setup")
	if err != nil || !strings.Contains(out, "registered search attributes CrawlID, Host, HostState on namespace "+ns) {
		t.Fatalf("trawler setup: %v\n%s", err, out)
	}
	out, err = run(cli, "setup")
	if err != nil || !strings.Contains(out, "has every search attribute") {
		t.Fatalf("trawler setup again: %v\n%s", err, out)
	}
	// Now the worker starts, and stays up until told to stop.
	cmd := exec.Command(worker)
	cmd.Env = env
	var wout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &wout, &wout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the worker exited after setup: %v\n%s", err, wout.String())
	case <-time.After(5 * time.Second):
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-done
	if !strings.Contains(wout.String(), "worker started") {
		t.Errorf("the worker did not start:\n%s", wout.String())
	}
}
