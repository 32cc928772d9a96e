package store

import (
	"context"
	"fmt"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
)

// urlStatesSQL selects the states of the URLs named by the arrays $c (crawls) and $h (hashes),
// and their crawls' states, as two arrays in the order named. Each URL is one indexed lookup
// by its place in the arrays (generate_subscripts), not a join with the arrays unnested: the
// planner sizes an unnest by its array's length, so a statement that joined one was planned
// anew for every call (a window of a few URLs always looked cheaper custom-planned: 24 thousand
// plans of 0.3 ms in a 4-minute make bench, issue 49), where generate_subscripts has one size
// whatever the array and its plan is made once per connection.
func urlStatesSQL(c, h string) string {
	return `array(SELECT coalesce((SELECT u.state FROM urls u WHERE u.crawl_id = (` + c + `::text[])[i] AND u.url_hash = (` + h + `::bytea[])[i]), '')
		FROM generate_subscripts(` + c + `::text[], 1) AS i ORDER BY i),
	array(SELECT coalesce((SELECT c.state FROM crawls c WHERE c.id = (` + c + `::text[])[i]), '')
		FROM generate_subscripts(` + c + `::text[], 1) AS i ORDER BY i)`
}

// urlArrays splits urls into the arrays urlStatesSQL reads.
func urlArrays(urls []pacing.URLKey) ([]string, [][]byte) {
	crawls := make([]string, len(urls))
	hashes := make([][]byte, len(urls))
	for i, u := range urls {
		crawls[i], hashes[i] = u.CrawlID, u.Hash
	}
	return crawls, hashes
}

// windowStates pairs urls with the arrays urlStatesSQL read, stamped as read now at epoch.
func (s *Store) windowStates(urls []pacing.URLKey, states, crawlStates []string, epoch uint64) map[string]pacing.WindowState {
	out := make(map[string]pacing.WindowState, len(urls))
	now := s.clock.local.Now()
	for i, u := range urls {
		if i < len(states) && i < len(crawlStates) {
			out[pacing.WindowKey(u)] = pacing.WindowState{URL: crawl.URLState(states[i]), Crawl: crawl.CrawlState(crawlStates[i]), At: now, Epoch: epoch}
		}
	}
	return out
}

// bookWindowSQL books n gaps ($3) of host $1 from no earlier than $2: after the host's last
// booking, unless that booking is the caller's own window ending at $4, which it extends
// (a lease paces its own requests; only others must start after its window). It reads the
// states of the URLs $5/$6 in the same statement.
var bookWindowSQL = `WITH b AS (
	INSERT INTO hosts AS h (host, next_request_at) VALUES ($1, greatest(clock_timestamp(), $2::timestamptz) + $3::interval)
	ON CONFLICT (host) DO UPDATE SET next_request_at = greatest(clock_timestamp(), $2::timestamptz,
		CASE WHEN h.next_request_at = $4::timestamptz THEN NULL ELSE h.next_request_at END) + $3::interval
	RETURNING next_request_at)
SELECT b.next_request_at, clock_timestamp(), ` + urlStatesSQL("$5", "$6") + ` FROM b`

// BookWindow books the host's next n request gaps in one round trip and reads the states of
// urls (the requests the window is for), stamped with the caller's control epoch. own is the
// Mark of the caller's current window (zero: none): when nobody has booked the host since,
// the new window continues it from earliest instead of starting after it. Bookings from every
// worker and every attempt serialize on the host's row, so two attempts of one lease never
// have overlapping windows.
func (agg HostSchedule) BookWindow(ctx context.Context, host string, gap time.Duration, n int, earliest, own time.Time, urls []pacing.URLKey, epoch uint64) (pacing.Window, error) {
	s := agg.s
	if err := s.toDB(ctx, &earliest); err != nil {
		return pacing.Window{}, err
	}
	n = max(n, 1)
	crawls, hashes := urlArrays(urls)
	ownEnd := markArg(own)
	var w pacing.Window
	var states, crawlStates []string
	var db time.Time
	read := s.clock.reading()
	if err := s.pool.QueryRow(ctx, bookWindowSQL, host, earliest, time.Duration(n)*gap, ownEnd, crawls, hashes).
		Scan(&w.Mark, &db, &states, &crawlStates); err != nil {
		return pacing.Window{}, fmt.Errorf("store: book %d request slots on %s: %w", n, host, err)
	}
	read(db)
	w.Continues = ownEnd != nil && !w.Mark.Add(-time.Duration(n)*gap).After(own)
	w.End = s.clock.fromDB(w.Mark)
	w.Start = w.End.Add(-time.Duration(n) * gap)
	w.States = s.windowStates(urls, states, crawlStates, epoch)
	return w, nil
}

// settleSQL sets the host's next booking to $3 when it is still the window's end $2 (nobody
// booked since), and otherwise (or with no window: $2 null) moves it out to $3 at least.
const settleSQL = `UPDATE hosts SET next_request_at = CASE WHEN next_request_at = $2 THEN $3 ELSE greatest(next_request_at, $3) END
	WHERE host = $1`

// WindowStates reads the states of urls (and their crawls') for a window the caller holds
// already, keyed by WindowKey and stamped with the caller's control epoch.
func (agg Frontier) WindowStates(ctx context.Context, urls []pacing.URLKey, epoch uint64) (map[string]pacing.WindowState, error) {
	s := agg.s
	crawls, hashes := urlArrays(urls)
	var states, crawlStates []string
	if err := s.pool.QueryRow(ctx, `SELECT `+urlStatesSQL("$1", "$2"), crawls, hashes).Scan(&states, &crawlStates); err != nil {
		return nil, fmt.Errorf("store: URL states: %w", err)
	}
	return s.windowStates(urls, states, crawlStates, epoch), nil
}

// markArg is a window's Mark as a statement argument: null for none.
func markArg(mark time.Time) *time.Time {
	if mark.IsZero() {
		return nil
	}
	return &mark
}

// SettleWindow ends a lease's window (end: its Mark; zero for a batch that booked none): the
// host's next booking becomes next, a delay after the lease's last request left and after its
// answer came. That gives back what the lease did not
// use, and, when its last answer came late, keeps the next lease a whole delay from it (the
// server may have seen the request late).
func (agg HostSchedule) SettleWindow(ctx context.Context, host string, end, next time.Time) error {
	s := agg.s
	if err := s.toDB(ctx, &next); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, settleSQL, host, markArg(end), next); err != nil {
		return fmt.Errorf("store: settle the request slots of %s: %w", host, err)
	}
	return nil
}
