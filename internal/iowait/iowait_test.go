package iowait_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/iowait"
)

// tracedPool is a one-connection pool with tracer, as the program's (app.openPool).
func tracedPool(t *testing.T, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestTallyCountsRoundTrips: a statement, then a transaction of one statement (begin,
// the statement, commit), are four PostgreSQL round trips; a Redis command and a
// pipeline of two are at least two Redis round trips. Calls under a context without a tally
// count nowhere, and one request's tally does not see another's calls.
func TestTallyCountsRoundTrips(t *testing.T) {
	pool := tracedPool(t, iowait.Tracer{})
	rdb, prefix := dbtest.Redis(t)
	rdb.AddHook(iowait.Tracer{})

	ctx, tally := iowait.With(t.Context())
	other, otherTally := iowait.With(t.Context())
	if !tally.Empty() {
		t.Fatal("a new tally is not empty")
	}
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_sleep(0.01)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, prefix+"k", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := rdb.Pipeline()
	pipe.Get(ctx, prefix+"k")
	pipe.Get(ctx, prefix+"k")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// (A command that opens a Redis connection sends the handshake under its context
	// too: those round trips are the request's, and counted.)
	redisTrips := func() int { _, n := tally.Redis(); return n }
	sent := redisTrips()
	// Calls without a tally, and under the other tally, count nowhere else.
	if _, err := pool.Exec(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Get(context.Background(), prefix+"k").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(other, "SELECT 1"); err != nil {
		t.Fatal(err)
	}

	pg, trips := tally.PG()
	if trips != 4 {
		t.Errorf("PostgreSQL round trips: got %d, want 4 (a statement; begin, a statement, commit)", trips)
	}
	if pg < 10*time.Millisecond {
		t.Errorf("PostgreSQL time: got %v, want at least the 10 ms the statement slept", pg)
	}
	if rd, n := tally.Redis(); n < 2 || n != sent || rd <= 0 {
		t.Errorf("Redis: got %d round trips in %v (%d before the calls under other contexts), want at least 2 (a command, a pipeline), some time, and none added by the other calls", n, rd, sent)
	}
	if _, n := otherTally.PG(); n != 1 {
		t.Errorf("the other request's round trips: got %d, want 1", n)
	}
	if _, n := otherTally.Redis(); n != 0 {
		t.Errorf("the other request's Redis round trips: got %d, want 0", n)
	}
}

// acquireSignal is the tracer with a signal once an acquisition has begun (its start
// marked), so that the test releases the held connection only while a call waits.
type acquireSignal struct {
	iowait.Tracer
	began chan time.Time
}

func (a acquireSignal) TraceAcquireStart(ctx context.Context, p *pgxpool.Pool, d pgxpool.TraceAcquireStartData) context.Context {
	ctx = a.Tracer.TraceAcquireStart(ctx, p, d)
	select {
	case a.began <- time.Now():
	default:
	}
	return ctx
}

// TestTallyCountsTheWaitForAConnection: with the pool's one connection taken, a
// request's statement waits for it, and the wait is tallied as the acquisition, apart
// from the statement's own round trip: at least the time the connection stayed
// taken after the wait began.
func TestTallyCountsTheWaitForAConnection(t *testing.T) {
	signal := acquireSignal{began: make(chan time.Time, 1)}
	pool := tracedPool(t, signal)
	held, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	<-signal.began // this acquisition's own signal

	ctx, tally := iowait.With(t.Context())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := pool.Exec(ctx, "SELECT 1")
		done <- err
	}()
	began := <-signal.began
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	held.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	wait := tally.Acquire()
	pg, trips := tally.PG()
	if trips != 1 {
		t.Errorf("round trips: got %d, want 1", trips)
	}
	if wait > took || wait+pg > took {
		t.Errorf("wait %v and round trip %v: want both within the call's %v", wait, pg, took)
	}
	if held := released.Sub(began); wait < held {
		t.Errorf("wait %v: want at least the %v the connection stayed taken after the wait began", wait, held)
	}
}

// TestDetach: a statement under a detached context counts in no tally, its request's
// included; the control, the same statement under the request's context, counts.
func TestDetach(t *testing.T) {
	pool := tracedPool(t, iowait.Tracer{})
	ctx, tally := iowait.With(t.Context())
	if _, err := pool.Exec(iowait.Detach(ctx), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if _, trips := tally.PG(); trips != 0 {
		t.Errorf("detached: %d round trips in the request's tally, want 0", trips)
	}
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if _, trips := tally.PG(); trips != 1 {
		t.Errorf("the control: %d round trips in the request's tally, want 1", trips)
	}
	if c := context.Background(); iowait.Detach(c) != c {
		t.Error("Detach of a context with no tally: want the context itself")
	}
}
