package app

import (
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// frontends turns TEMPORAL_ADDRESS into the SDK's dial target. One host:port is dialled as
// is. A comma-separated list — the frontends of a Temporal cluster — becomes a resolver of
// its own holding every address: the SDK's round_robin policy then keeps a connection to each
// frontend and sends each call to one that is up, so a node down fails the calls in flight on
// it (retried by the SDK) and no more, as a load balancer in front would, without one.
func frontends(addr string) (string, []grpc.DialOption) {
	addrs := strings.Split(addr, ",")
	if len(addrs) == 1 {
		return addr, nil
	}
	r := manual.NewBuilderWithScheme("trawler-frontends")
	var state resolver.State
	for _, a := range addrs {
		state.Endpoints = append(state.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	r.InitialState(state)
	return r.Scheme() + ":///temporal", []grpc.DialOption{grpc.WithResolvers(r)}
}
