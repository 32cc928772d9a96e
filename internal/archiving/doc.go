// Package archiving is the archive stage: it writes a crawl's captures into WARC 1.1 files
// (warc/<crawl>/…warc.gz, each with a sorted .cdxj index beside it) and records where each
// capture went. It decides which captures go into which file, when a file is ready (full,
// old enough, or the crawl's end), and that rendered DOMs go first, as conversion records in
// files of their own. Captures are read back from the store in fetch order, so a crash loses
// nothing: the next run rewrites the unfinished file under the same name with the same record
// IDs. It works over the narrow Store and Blobs interfaces (store.Store and blob.Store in a
// worker, fakes in its tests) and reports through Hooks (Temporal heartbeats and metrics in a
// worker: activities.Archiver).
package archiving
