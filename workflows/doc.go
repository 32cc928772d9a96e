// Package workflows holds Trawler's Temporal workflows. Workflow code is deterministic: no
// I/O, no wall clock, no goroutines, no map-order dependence; every effect goes through an
// activity, a timer or a signal.
package workflows
