// Package activities holds Trawler's Temporal activities: the only code that does I/O on a
// workflow's behalf (HTTP fetches, Postgres, MinIO). Each group is a struct whose fields are
// its dependencies, registered on the worker for the task queue of its role.
package activities
