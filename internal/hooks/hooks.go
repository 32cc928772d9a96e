// Package hooks is how a stage (fetching, processing, rendering) reports to whoever runs it:
// the activity's logger and metrics handler in a worker, nothing in a unit test. Each hook is
// optional; a nil one drops what it is told.
package hooks

// Logger is where a stage logs (the activity's logger in a worker).
type Logger interface {
	Debug(msg string, keyvals ...any)
	Info(msg string, keyvals ...any)
	Warn(msg string, keyvals ...any)
}

// Log is l, or a logger that drops everything when l is nil.
func Log(l Logger) Logger {
	if l == nil {
		return nop{}
	}
	return l
}

type nop struct{}

func (nop) Debug(string, ...any) {}
func (nop) Info(string, ...any)  {}
func (nop) Warn(string, ...any)  {}

// Counter adds to a metric series with tags (key, value, key, value …).
type Counter func(name string, n int64, tags ...string)

// Add adds n to the series (nothing when c is nil or n is 0).
func (c Counter) Add(name string, n int64, tags ...string) {
	if c != nil && n != 0 {
		c(name, n, tags...)
	}
}
