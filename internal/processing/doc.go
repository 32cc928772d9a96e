// Package processing is the process stage: it takes fetched pages (a batch the crawl's sweep
// found, or a crawl's pages claimed a few hundred at a time by its processing children), reads
// each body by what it is (HTML, text, feeds, PDF), stores its text and document with its
// duplicate verdict, records its links, admits what it discovered through the one admission
// path, queues renders, and marks the pages done once their links are admitted. It works over
// the narrow Store interface (store.Store in a worker, a fake in its tests) and reports through
// Hooks; activities.Processor is its Temporal-facing side.
package processing
