// Package frontier is the frontier stage: the short Postgres steps the crawl and host
// workflows run as local activities — recording a crawl and admitting its seeds, reading its
// progress, moving its state, the sweep that wakes stale hosts and finds pages whose
// processing never finished, and giving an abandoned lease's claims back. It works over the
// narrow Store interface and the admission functions it is given (fakes in its tests);
// activities.Frontier is its Temporal-facing side.
package frontier
