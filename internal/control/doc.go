// Package control is the control stage: what an operator's crawl signals do to the frontier —
// add seeds to a running crawl, replay its dead letters, block hosts and patterns, throttle
// every host of it. Each request is checked first (a bad one comes back as the result's
// error, never a failed workflow), then recorded in Postgres, then the crawl's cached rules
// are forgotten so every worker reads them again within seconds. It works over the narrow
// Store interface and the admission functions it is given (fakes in its tests);
// activities.Frontier carries its Temporal-facing methods.
package control
