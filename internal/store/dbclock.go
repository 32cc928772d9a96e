package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trawlerdev/trawler/internal/clock"
)

// dbClock maps this process's clock onto the database's. The times processes share for
// politeness — a host's next request slot, an address's, the end of a lease's window, a
// claim's expiry — are kept on the database's clock, and each process converts at this
// boundary: workers whose clocks disagree by seconds still keep one schedule, as exact as the
// offset is measured (half a round trip to Postgres).
//
// The offset comes from the clock_timestamp() that bookings read anyway: a reading taken
// between two local readings gives the offset within half their interval. The estimate keeps
// the tightest reading, takes a looser one after offsetFor, and follows a step of either
// clock (an NTP correction) at once: a reading that cannot agree with the estimate replaces it.
type dbClock struct {
	local clock.Clock

	mu  sync.Mutex
	off time.Duration // the database's clock minus the local one
	err time.Duration // how far off may be wrong: half the round trip of its reading
	at  time.Time     // when it was read (local clock); zero: not yet
}

// offsetFor is how long the tightest reading stands before a looser one may replace it: the
// two clocks drift apart by a few microseconds a minute at most.
const offsetFor = time.Minute

// observe folds in a database clock reading db taken between the local readings before and
// after.
func (c *dbClock) observe(before, db, after time.Time) {
	rtt := after.Sub(before)
	if rtt < 0 || db.IsZero() {
		return
	}
	off, e := db.Sub(before.Add(rtt/2)), rtt/2
	c.mu.Lock()
	defer c.mu.Unlock()
	apart := off - c.off
	if apart < 0 {
		apart = -apart
	}
	if c.at.IsZero() || e <= c.err || after.Sub(c.at) > offsetFor || apart > e+c.err {
		c.off, c.err, c.at = off, e, after
	}
}

// offsetNoise is how far from zero an estimate must be, beyond its own error, to be applied:
// a machine whose clock agrees with the database's (the same machine, or both kept by NTP)
// converts nothing, so times it stores read back exactly as they went in.
const offsetNoise = time.Millisecond

// offset is the offset to apply (zero when the estimate cannot be told from zero), and
// whether there is an estimate.
func (c *dbClock) offset() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off <= c.err+offsetNoise && -c.off <= c.err+offsetNoise {
		return 0, !c.at.IsZero()
	}
	return c.off, !c.at.IsZero()
}

// measure reads the database's clock a few times when there is no estimate yet (the first
// conversion of a process).
func (c *dbClock) measure(ctx context.Context, pool *pgxpool.Pool) error {
	if _, ok := c.offset(); ok {
		return nil
	}
	for range 3 {
		var db time.Time
		before := c.local.Now()
		if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&db); err != nil {
			return fmt.Errorf("store: read the database's clock: %w", err)
		}
		c.observe(before, db, c.local.Now())
	}
	return nil
}

// toDB converts a local time to the database's clock (zero stays zero).
func (c *dbClock) toDB(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	off, _ := c.offset()
	return t.Add(off)
}

// fromDB converts a time on the database's clock to the local one (zero stays zero).
func (c *dbClock) fromDB(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	off, _ := c.offset()
	return t.Add(-off)
}

// fromDBPtr is fromDB for a time that may be absent.
func (c *dbClock) fromDBPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	l := c.fromDB(*t)
	return &l
}

// reading starts a reading of the database's clock: call the function it returns with the
// clock_timestamp() a statement read, once the statement is back.
func (c *dbClock) reading() func(db time.Time) {
	before := c.local.Now()
	return func(db time.Time) { c.observe(before, db, c.local.Now()) }
}

// toDB converts the local times ts point to onto the database's clock, in place, measuring
// the offset first when there is none yet: every time a statement takes for politeness goes
// through here.
func (s *Store) toDB(ctx context.Context, ts ...*time.Time) error {
	if err := s.clock.measure(ctx, s.pool); err != nil {
		return err
	}
	for _, t := range ts {
		*t = s.clock.toDB(*t)
	}
	return nil
}

// Clock is the local clock the store converts times from and to.
func (s *Store) Clock() clock.Clock { return s.clock.local }

// Offset is the measured offset of the database's clock from the local one (database minus
// local), measuring it first when there is none yet.
func (s *Store) Offset(ctx context.Context) (time.Duration, error) {
	if err := s.clock.measure(ctx, s.pool); err != nil {
		return 0, err
	}
	off, _ := s.clock.offset()
	return off, nil
}
