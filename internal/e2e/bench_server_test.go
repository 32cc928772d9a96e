package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// serverCounts is what the Temporal dev server did (its Prometheus endpoint; scripts/stack.sh
// serves it on TRAWLER_TEMPORAL_METRICS_PORT, 7239): the work behind history events.
type serverCounts struct {
	heartbeats     float64 // RecordActivityTaskHeartbeat requests (each a mutable-state write)
	persistence    float64 // persistence requests of every kind
	stateWrites    float64 // mutable-state writes (UpdateWorkflowExecution)
	stateBytes     float64 // bytes of mutable state written
	visibility     float64 // visibility store requests
	workflowStarts float64 // CreateWorkflowExecution
	deletes        float64 // DeleteWorkflowExecution: closed runs deleted at the end of their retention
	// RespondActivityTaskFailed: activity attempts that failed (each retried after a backoff,
	// until the last); a lease that failed for a heartbeat the server was too busy for was one
	failures float64
}

// scrapeServer reads the dev server's counters; ok false when it serves none (a Temporal
// server on PostgreSQL, an older stack).
func scrapeServer() (c serverCounts, ok bool) {
	port := os.Getenv("TRAWLER_TEMPORAL_METRICS_PORT")
	if port == "" {
		port = "7239"
	}
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + port + "/metrics")
	if err != nil {
		return c, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return c, false
	}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels := line, ""
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			name, labels = line[:i], line[i:j+1]
			line = line[:i] + line[j+1:]
		} else if i := strings.IndexByte(line, ' '); i >= 0 {
			name = line[:i]
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			continue
		}
		switch {
		case name == "service_requests" && strings.Contains(labels, `operation="RecordActivityTaskHeartbeat"`) &&
			strings.Contains(labels, `service_name="frontend"`):
			c.heartbeats += v
		case name == "service_requests" && strings.Contains(labels, `operation="RespondActivityTaskFailed"`) &&
			strings.Contains(labels, `service_name="frontend"`):
			c.failures += v
		case name == "persistence_requests":
			c.persistence += v
			switch {
			case strings.Contains(labels, `operation="UpdateWorkflowExecution"`):
				c.stateWrites += v
			case strings.Contains(labels, `operation="CreateWorkflowExecution"`):
				c.workflowStarts += v
			case strings.Contains(labels, `operation="DeleteWorkflowExecution"`):
				c.deletes += v
			}
		case name == "persisted_mutable_state_size_sum":
			c.stateBytes += v
		case name == "visibility_persistence_requests":
			c.visibility += v
		}
	}
	return c, true
}

// minus is what the server did between two scrapes.
func (c serverCounts) minus(o serverCounts) serverCounts {
	return serverCounts{c.heartbeats - o.heartbeats, c.persistence - o.persistence, c.stateWrites - o.stateWrites,
		c.stateBytes - o.stateBytes, c.visibility - o.visibility, c.workflowStarts - o.workflowStarts, c.deletes - o.deletes,
		c.failures - o.failures}
}

// serverTable is the per-page table of what the Temporal server did for each row that has it.
func serverTable(rows []benchRow) string {
	var sb strings.Builder
	for _, r := range rows {
		if r.server == nil || r.pages == 0 {
			continue
		}
		if sb.Len() == 0 {
			sb.WriteString("What the Temporal server did, per page (the server's metrics, over the same window as the CPU): " +
				"heartbeats reaching it, mutable-state writes and their bytes (a heartbeat is one, with its details), " +
				"persistence requests of every kind, visibility requests, workflow starts, closed runs deleted (retention), " +
				"activity attempts that failed (each retried after a backoff).\n\n" +
				"| scenario | crawler | heartbeats | mutable-state writes | mutable-state bytes | persistence requests | visibility requests | workflow starts | runs deleted | failed attempts |\n" +
				"|---|---|---|---|---|---|---|---|---|---|\n")
		}
		p, c := float64(r.pages), r.server
		fmt.Fprintf(&sb, "| %s | %s | %.3f | %.3f | %.0f | %.2f | %.3f | %.3f | %.4f | %.4f |\n", r.scenario, r.crawler, c.heartbeats/p, c.stateWrites/p,
			c.stateBytes/p, c.persistence/p, c.visibility/p, c.workflowStarts/p, c.deletes/p, c.failures/p)
	}
	if sb.Len() > 0 {
		sb.WriteString("\n")
	}
	return sb.String()
}
