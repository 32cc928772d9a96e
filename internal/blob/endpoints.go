package blob

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// nodes is a list of S3 endpoints that serve one store (the nodes of a distributed MinIO,
// any of which answers for the whole bucket). Requests are signed for the first endpoint's
// name and sent, over connections this dialer opens, to whichever node answers: a node
// down is a refused dial and the next node, not a worker cut off from its bucket. Each
// process starts at a random node, so many workers spread over them, and stays on a node
// while it answers, so keep-alive connections are reused.
type nodes struct {
	addrs   []string
	current atomic.Int64
	dialer  net.Dialer
}

// splitEndpoints reads "host:port[,host:port…]": the name requests are signed for, and the
// dialer that reaches the nodes (nil for a single endpoint, dialled as usual).
func splitEndpoints(endpoint string) (string, *nodes, error) {
	addrs := strings.Split(endpoint, ",")
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return "", nil, fmt.Errorf("blob: endpoint %q: %w", a, err)
		}
	}
	if len(addrs) == 1 {
		return endpoint, nil, nil
	}
	n := &nodes{addrs: addrs, dialer: net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}}
	n.current.Store(rand.Int64N(int64(len(addrs))))
	return addrs[0], n, nil
}

// DialContext dials the current node, and on failure each other node in turn, the first that
// answers becoming current.
func (n *nodes) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	start := n.current.Load()
	var errs []string
	for i := range int64(len(n.addrs)) {
		at := (start + i) % int64(len(n.addrs))
		conn, err := n.dialer.DialContext(ctx, network, n.addrs[at])
		if err == nil {
			n.current.CompareAndSwap(start, at)
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err.Error())
	}
	return nil, fmt.Errorf("blob: no S3 node answers: %s", strings.Join(errs, "; "))
}
