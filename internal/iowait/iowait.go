// Package iowait tallies what one request's work waited for: a pooled PostgreSQL
// connection, PostgreSQL round trips, Redis commands. The request log line carries the
// tally, so that a slow request shows whether it queued for a connection, talked to
// the database too often, or lost its time elsewhere (the CPU, its own work).
//
// A request gets a tally from With; the Tracer, installed on the pool and the Redis
// client, adds to the tally of the context each call runs under, and does nothing
// (not even a context value) for calls whose context has none, such as the batched
// exact holds' workers and the background jobs.
//
// It imports pgx and go-redis only, for their tracer and hook types, so that the pool,
// the Redis client and web's request log may all use it.
package iowait

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// Tally is one request's time waiting for connections and in round trips. Its
// methods are safe for concurrent use: a request's work may fan out.
type Tally struct {
	acquire, pg, redis, batch atomic.Int64 // nanoseconds
	pgTrips, redisTrips       atomic.Int64
}

// Acquire is the time spent waiting for a pooled connection (pgxpool's acquire: at
// once when one is idle).
func (t *Tally) Acquire() time.Duration { return time.Duration(t.acquire.Load()) }

// PG is the time spent in PostgreSQL round trips (statements, begin and commit,
// batches), from sending to the answer read, and their count.
func (t *Tally) PG() (time.Duration, int) {
	return time.Duration(t.pg.Load()), int(t.pgTrips.Load())
}

// Redis is the time spent in Redis commands and pipelines, and their count.
func (t *Tally) Redis() (time.Duration, int) {
	return time.Duration(t.redis.Load()), int(t.redisTrips.Load())
}

// Batched is the time spent waiting for work handed to a batch that runs on its own
// connection (the exact holds', the session writes', the Idempotency-Keys'), from
// handing it over to its answer.
func (t *Tally) Batched() time.Duration { return time.Duration(t.batch.Load()) }

// AddBatched adds to Batched.
func (t *Tally) AddBatched(d time.Duration) { t.batch.Add(int64(d)) }

// TimeBatched starts timing a wait for a batch, for ctx's tally if it has one: the
// batch runs on no request's context, so the request's tally would not see it. Call
// the function it returns when the answer came.
func TimeBatched(ctx context.Context) func() {
	t := From(ctx)
	if t == nil {
		return func() {}
	}
	at := time.Now()
	return func() { t.AddBatched(time.Since(at)) }
}

// Empty is true when nothing was tallied.
func (t *Tally) Empty() bool {
	return t.acquire.Load() == 0 && t.pgTrips.Load() == 0 && t.redisTrips.Load() == 0 && t.batch.Load() == 0
}

type (
	tallyKey struct{}
	startKey struct{}
)

// With returns ctx carrying a new tally, and the tally.
func With(ctx context.Context) (context.Context, *Tally) {
	t := &Tally{}
	return context.WithValue(ctx, tallyKey{}, t), t
}

// From is ctx's tally, nil if it has none.
func From(ctx context.Context) *Tally {
	t, _ := ctx.Value(tallyKey{}).(*Tally)
	return t
}

// Detach returns ctx without its tally: work that goes on after the request has
// answered (and logged its tally) is no part of it.
func Detach(ctx context.Context) context.Context {
	if From(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, tallyKey{}, (*Tally)(nil))
}

// Tracer adds the calls it sees to their context's tally. It is a pgx.QueryTracer, a
// pgx.BatchTracer and a pgxpool.AcquireTracer (for a pool's ConnConfig.Tracer) and a
// redis.Hook.
type Tracer struct{}

var (
	_ pgx.QueryTracer       = Tracer{}
	_ pgx.BatchTracer       = Tracer{}
	_ pgxpool.AcquireTracer = Tracer{}
	_ redis.Hook            = Tracer{}
)

// started is a traced call's tally and start, kept in the call's context as one value
// so that its end finds both in one lookup.
type started struct {
	tally *Tally
	at    time.Time
}

// start marks a traced call's start in its context, when the context has a tally.
func start(ctx context.Context) context.Context {
	t := From(ctx)
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, startKey{}, started{t, time.Now()})
}

// since is the time since the call's start, with the tally to add it to; nil when the
// context has no tally.
func since(ctx context.Context) (*Tally, int64) {
	s, ok := ctx.Value(startKey{}).(started)
	if !ok {
		return nil, 0
	}
	return s.tally, int64(time.Since(s.at))
}

// TraceQueryStart implements pgx.QueryTracer.
func (Tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return start(ctx)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (Tracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	roundTrip(ctx)
}

// TraceBatchStart implements pgx.BatchTracer: a batch is one round trip.
func (Tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return start(ctx)
}

// TraceBatchQuery implements pgx.BatchTracer.
func (Tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd implements pgx.BatchTracer.
func (Tracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	roundTrip(ctx)
}

// roundTrip adds a PostgreSQL round trip that ends now to its context's tally.
func roundTrip(ctx context.Context) {
	if t, d := since(ctx); t != nil {
		t.pg.Add(d)
		t.pgTrips.Add(1)
	}
}

// TraceAcquireStart implements pgxpool.AcquireTracer.
func (Tracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return start(ctx)
}

// TraceAcquireEnd implements pgxpool.AcquireTracer.
func (Tracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if t, d := since(ctx); t != nil {
		t.acquire.Add(d)
	}
}

// DialHook implements redis.Hook.
func (Tracer) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

// ProcessHook implements redis.Hook.
func (Tracer) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		t := From(ctx)
		if t == nil {
			return next(ctx, cmd)
		}
		at := time.Now()
		err := next(ctx, cmd)
		t.redis.Add(int64(time.Since(at)))
		t.redisTrips.Add(1)
		return err
	}
}

// ProcessPipelineHook implements redis.Hook: a pipeline is one round trip.
func (Tracer) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		t := From(ctx)
		if t == nil {
			return next(ctx, cmds)
		}
		at := time.Now()
		err := next(ctx, cmds)
		t.redis.Add(int64(time.Since(at)))
		t.redisTrips.Add(1)
		return err
	}
}
