package main

import (
	"cmp"
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// tracer counts, with -queries, every round trip the server makes: PostgreSQL
// statements by their sqlc name (begin and commit included), batches (one round trip
// each; the statements in them are counted as pg-batched, not as round trips),
// statement preparations, pool acquisitions (whose time is the wait for a free
// connection), and Redis commands.
// It adds a context value and a mutex-guarded map update per round trip.
type tracer struct {
	mu    sync.Mutex
	stats map[string]opStat
}

type opStat struct {
	N     int64
	Total time.Duration
}

type (
	queryKey   struct{}
	prepareKey struct{}
	acquireKey struct{}
	batchKey   struct{}
)

type traceStart struct {
	name string
	at   time.Time
}

func newTracer() *tracer { return &tracer{stats: map[string]opStat{}} }

func (t *tracer) add(name string, d time.Duration) {
	t.mu.Lock()
	s := t.stats[name]
	s.N++
	s.Total += d
	t.stats[name] = s
	t.mu.Unlock()
}

// end counts the round trip whose start ctx carries under key.
func (t *tracer) end(ctx context.Context, key any) {
	if s, ok := ctx.Value(key).(traceStart); ok {
		t.add(s.name, time.Since(s.at))
	}
}

// queryName is a statement's sqlc name, or else its first word (begin, commit, ...).
func queryName(sql string) string {
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	word, _, _ := strings.Cut(strings.TrimSpace(sql), " ")
	return strings.ToLower(word)
}

// TraceQueryStart implements pgx.QueryTracer.
func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, queryKey{}, traceStart{"pg " + queryName(d.SQL), time.Now()})
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *tracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	t.end(ctx, queryKey{})
}

// TraceBatchStart implements pgx.BatchTracer: a batch is one round trip, whatever
// it holds.
func (t *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return context.WithValue(ctx, batchKey{}, traceStart{"pg (batch round trip)", time.Now()})
}

// TraceBatchQuery implements pgx.BatchTracer.
func (t *tracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	t.add("pg-batched "+queryName(d.SQL), 0)
}

// TraceBatchEnd implements pgx.BatchTracer.
func (t *tracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	t.end(ctx, batchKey{})
}

// TracePrepareStart implements pgx.PrepareTracer.
func (t *tracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return context.WithValue(ctx, prepareKey{}, traceStart{"pg (prepare)", time.Now()})
}

// TracePrepareEnd implements pgx.PrepareTracer.
func (t *tracer) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareEndData) {
	t.end(ctx, prepareKey{})
}

// TraceAcquireStart implements pgxpool.AcquireTracer.
func (t *tracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return context.WithValue(ctx, acquireKey{}, traceStart{"pool acquire (wait)", time.Now()})
}

// TraceAcquireEnd implements pgxpool.AcquireTracer.
func (t *tracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	t.end(ctx, acquireKey{})
}

// DialHook implements redis.Hook.
func (t *tracer) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

// ProcessHook implements redis.Hook.
func (t *tracer) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		at := time.Now()
		err := next(ctx, cmd)
		t.add("redis "+strings.ToLower(cmd.Name()), time.Since(at))
		return err
	}
}

// ProcessPipelineHook implements redis.Hook.
func (t *tracer) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		at := time.Now()
		err := next(ctx, cmds)
		t.add("redis pipeline", time.Since(at))
		return err
	}
}

// traceSnapshot is the counters at one moment; nil without -queries.
type traceSnapshot map[string]opStat

func (t *tracer) snapshot() traceSnapshot {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(traceSnapshot, len(t.stats))
	for k, v := range t.stats {
		out[k] = v
	}
	return out
}

// queryReport is the round trips of one measured window, most frequent first.
type queryReport struct {
	Ops []namedOp
}

type namedOp struct {
	Name string
	opStat
}

func (s traceSnapshot) since(prev traceSnapshot) *queryReport {
	if s == nil {
		return nil
	}
	r := &queryReport{}
	for k, v := range s {
		p := prev[k]
		if n := v.N - p.N; n > 0 {
			r.Ops = append(r.Ops, namedOp{Name: k, opStat: opStat{N: n, Total: v.Total - p.Total}})
		}
	}
	slices.SortFunc(r.Ops, func(a, b namedOp) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Name, b.Name)) })
	return r
}

// roundTrips sums the PostgreSQL statements and Redis commands (not pool waits).
func (r *queryReport) roundTrips() (pg, rds int64, pgTime time.Duration) {
	for _, op := range r.Ops {
		switch {
		case strings.HasPrefix(op.Name, "pg "):
			pg += op.N
			pgTime += op.Total
		case strings.HasPrefix(op.Name, "redis "):
			rds += op.N
		}
	}
	return pg, rds, pgTime
}
