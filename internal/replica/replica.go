// Package replica chooses where the reads that may be a second stale go: to a
// streaming replica while its measured lag is under a bound, else to the primary.
// Whatever decides (holds, checkouts, confirmations) never asks it: those use the
// primary's pool directly.
//
// The lag is measured against the primary's own write position, not against the
// replica's last replay time: a replica of an idle primary has nothing to replay and
// is fresh, and a replica cut off from a busy primary falls behind the positions the
// primary reports. Every Every, the chooser notes the primary's WAL position and the
// time, then asks the replica how far it has replayed. The replica has replayed
// everything the primary had written at the latest noted time whose position it has
// reached, so its lag is at most the time since then. A read served later may miss
// what was written since the measurement too, so the replica is used only while the
// lag plus the measurement's age is under MaxLag, and never on a measurement older
// than two intervals.
package replica

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of Options.
const (
	DefaultMaxLag = time.Second
	DefaultEvery  = 250 * time.Millisecond
)

// Options tune the chooser; zero values take the defaults.
type Options struct {
	MaxLag time.Duration // how stale a read may be
	Every  time.Duration // how often the lag is measured
	Now    func() time.Time
	// Log hears when the reads move between the replica and the primary; nil: no log.
	Log *slog.Logger
}

// Reads hands out the pool a stale-tolerant read should use.
type Reads struct {
	primary, replica *pgxpool.Pool
	opt              Options

	mu      sync.Mutex
	history []mark // the primary's positions over the last MaxLag, oldest first
	lag     time.Duration
	at      time.Time // when lag was measured; zero: never, or the last try failed
}

// mark is the primary's WAL position at a time.
type mark struct {
	at  time.Time
	lsn int64
}

// New returns a chooser over the two pools. With a nil replica every read goes to
// the primary.
func New(primary, replica *pgxpool.Pool, opt Options) *Reads {
	if opt.MaxLag <= 0 {
		opt.MaxLag = DefaultMaxLag
	}
	if opt.Every <= 0 {
		opt.Every = DefaultEvery
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Reads{primary: primary, replica: replica, opt: opt}
}

// Pool is the pool for a read that may be MaxLag stale: the replica while its last
// measurement is recent and its lag leaves room for one more interval, else the
// primary.
func (r *Reads) Pool() *pgxpool.Pool {
	if r.UseReplica() {
		return r.replica
	}
	return r.primary
}

// UseReplica reports whether Pool hands out the replica now.
func (r *Reads) UseReplica() bool {
	if r == nil || r.replica == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() {
		return false // no good measurement: the replica may be cut off
	}
	// What a read may miss now: the lag when measured, plus the time since.
	age := r.opt.Now().Sub(r.at)
	return age <= 2*r.opt.Every && r.lag+age < r.opt.MaxLag
}

// Lag is the last measured lag and when it was measured; ok is false when the last
// measurement failed or none was made.
func (r *Reads) Lag() (lag time.Duration, at time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lag, r.at, !r.at.IsZero()
}

// errNotReplica: the replica's server is not in recovery (it was promoted, or the
// URL names a primary), so its replay position says nothing.
var errNotReplica = errors.New("replica: the server is not a streaming replica (not in recovery)")

// Measure takes one measurement: the primary's position now, then the replica's
// replay position. On error the replica is not used until a measurement succeeds.
func (r *Reads) Measure(ctx context.Context) error {
	if r.replica == nil {
		return nil
	}
	// A measurement that takes MaxLag could not show a replica under it anyway.
	ctx, cancel := context.WithTimeout(ctx, r.opt.MaxLag)
	defer cancel()
	var head int64
	err := r.primary.QueryRow(ctx, "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").Scan(&head)
	now := r.opt.Now()
	r.note(now, head, err)
	if err != nil {
		return err
	}
	var replayed *int64
	// NULL unless in recovery: a promoted replica keeps its last replayed position.
	const q = "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() - '0/0'::pg_lsn END"
	if err := r.replica.QueryRow(ctx, q).Scan(&replayed); err != nil {
		r.fail()
		return err
	}
	if replayed == nil {
		r.fail()
		return errNotReplica
	}
	r.settle(r.opt.Now(), *replayed)
	return nil
}

// note records the primary's position at now and drops marks older than MaxLag: a
// replica behind all of them is too stale anyway.
func (r *Reads) note(now time.Time, lsn int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.at = time.Time{}
		return
	}
	r.history = append(r.history, mark{at: now, lsn: lsn})
	keep := 0
	for keep < len(r.history)-1 && now.Sub(r.history[keep].at) > r.opt.MaxLag {
		keep++
	}
	r.history = r.history[keep:]
}

// settle sets the lag from the replica's replay position: the time since the latest
// mark it has reached.
func (r *Reads) settle(now time.Time, replayed int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.history) - 1; i >= 0; i-- {
		if r.history[i].lsn <= replayed {
			r.lag, r.at = now.Sub(r.history[i].at), now
			return
		}
	}
	r.at = time.Time{} // behind every mark: more than MaxLag stale
}

func (r *Reads) fail() {
	r.mu.Lock()
	r.at = time.Time{}
	r.mu.Unlock()
}

// Run measures every Every until ctx ends.
func (r *Reads) Run(ctx context.Context) {
	if r.replica == nil {
		return
	}
	t := time.NewTicker(r.opt.Every)
	defer t.Stop()
	using := false
	for {
		err := r.Measure(ctx) // a failure leaves reads on the primary until one succeeds
		if now := r.UseReplica(); now != using && ctx.Err() == nil {
			using = now
			r.logMove(using, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// logMove says where the stale-tolerant reads went, and why.
func (r *Reads) logMove(toReplica bool, err error) {
	if r.opt.Log == nil {
		return
	}
	lag, _, ok := r.Lag()
	switch {
	case toReplica:
		r.opt.Log.Info("stale-tolerant reads go to the replica", "lag", lag)
	case err != nil:
		r.opt.Log.Warn("stale-tolerant reads go to the primary: the replica's lag cannot be measured", "err", err)
	case ok:
		r.opt.Log.Warn("stale-tolerant reads go to the primary: the replica lags", "lag", lag, "max", r.opt.MaxLag)
	default:
		r.opt.Log.Warn("stale-tolerant reads go to the primary: the replica lags", "behind", "more than "+r.opt.MaxLag.String())
	}
}
