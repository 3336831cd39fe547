// Package dbgate orders the queue for a pool's connections: holds first, the
// background work last.
//
// pgxpool hands a freed connection to whoever asked first. In an onsale the pool's
// connections are all busy most of the time, and a hold, the step a buyer waits on
// with a seat map in front of them, queued behind the payment webhooks, the order
// pages' polls, the checkouts and the email jobs that asked before it. A Gate keeps
// that queue short for the calls marked First: another call waits at the gate while a
// First call waits for a connection, and otherwise enters the pool's queue only when
// fewer others are in it than there are connections to be had (idle, or not yet
// opened), and at least one. So a First call waits behind at most one other call
// plus the connections' present work. At the gate, calls go in the order they asked,
// except that a call marked Later (work no person's request waits on: a payment's
// confirmation, the job queue) counts as having asked LaterBy after it did: it lets
// by the others that came up to that much after it, and never more, so it cannot be
// starved. (Strictly last, at 128 admissions a second, the webhooks' confirmations
// would wait behind the order pages' polls of the very orders they confirm, which grow
// as they wait, until every webhook times out and the sale stops selling.)
//
// The gate counts calls between the start and the end of pgxpool's Acquire, never
// connections, so a connection taken out of the pool (Hijack, as River's listener
// does) or a call given up while queued leaves nothing behind.
//
// It imports only pgx: the pool's tracer and the context marks, nothing of what the
// calls do.
package dbgate

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// level is a call's place in the queue for a connection; an unmarked call's is 0,
// the usual place.
type level int8

const (
	later level = -1
	first level = 1
)

// LaterBy is how much later than it asked a call marked Later counts as having asked.
const LaterBy = 250 * time.Millisecond

type levelKey struct{}

// First marks ctx's calls as first in line for a connection at a gated pool.
func First(ctx context.Context) context.Context {
	return context.WithValue(ctx, levelKey{}, first)
}

// Later marks ctx's calls as later in line for a connection at a gated pool: they
// count as having asked LaterBy after they did.
func Later(ctx context.Context) context.Context {
	return context.WithValue(ctx, levelKey{}, later)
}

// IsFirst says whether ctx's calls are marked First.
func IsFirst(ctx context.Context) bool { return levelOf(ctx) == first }

// IsLater says whether ctx's calls are marked Later.
func IsLater(ctx context.Context) bool { return levelOf(ctx) == later }

func levelOf(ctx context.Context) level {
	l, _ := ctx.Value(levelKey{}).(level)
	return l
}

// Gate orders the waits for one pool's connections; its zero value is ready. Safe
// for concurrent use.
type Gate struct {
	mu      sync.Mutex
	first   int         // First calls in pgxpool's Acquire
	inside  int         // other calls past the gate, in pgxpool's Acquire
	waiting [2][]waiter // other calls at the gate, usual and Later, in order of arrival
}

// waiter is a call waiting at the gate: closing ch lets it through.
type waiter struct {
	ch  chan struct{}
	due time.Time // when it asked, plus LaterBy for a Later call
}

// freeConns is the number of connections pool can hand out without a wait: its idle
// ones and those it may still open.
func freeConns(pool *pgxpool.Pool) int {
	st := pool.Stat()
	return int(st.IdleConns()) + int(st.MaxConns()-st.TotalConns())
}

type gaveUpKey struct{}

// enter lets a call towards the pool's queue, waiting at the gate if it must. Every
// call it lets through is counted (first or inside) until leave; a call whose ctx
// ends while it waits at the gate is not, and goes on marked as given up (the pool's
// Acquire then fails at once with the context's error), so that leave counts nothing
// down for it. Marking the rare given-up call rather than every call let through
// keeps the common path free of a context value.
func (g *Gate) enter(ctx context.Context, pool *pgxpool.Pool) context.Context {
	l := levelOf(ctx)
	g.mu.Lock()
	if l == first {
		g.first++
		g.mu.Unlock()
		return ctx
	}
	if g.queued() == 0 && g.open(pool) {
		g.inside++
		g.mu.Unlock()
		return ctx
	}
	q, due := 0, time.Now()
	if l == later {
		q, due = 1, due.Add(LaterBy)
	}
	ch := make(chan struct{})
	g.waiting[q] = append(g.waiting[q], waiter{ch, due})
	g.mu.Unlock()
	select {
	case <-ch:
		return ctx
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if i := slices.IndexFunc(g.waiting[q], func(w waiter) bool { return w.ch == ch }); i >= 0 {
			g.waiting[q] = slices.Delete(g.waiting[q], i, i+1)
			return context.WithValue(ctx, gaveUpKey{}, true)
		}
		// Let through as the context ended: counted inside, so counted down at leave.
		return ctx
	}
}

// leave counts a call out once pgxpool's Acquire ended (with a connection or not) and
// lets the next ones through, the earliest due first.
func (g *Gate) leave(ctx context.Context, pool *pgxpool.Pool) {
	isFirst := levelOf(ctx) == first
	if !isFirst && ctx.Value(gaveUpKey{}) != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if isFirst {
		g.first--
	} else {
		g.inside--
	}
	for g.queued() > 0 && g.open(pool) {
		q := 0
		if len(g.waiting[0]) == 0 || (len(g.waiting[1]) > 0 && g.waiting[1][0].due.Before(g.waiting[0][0].due)) {
			q = 1
		}
		close(g.waiting[q][0].ch)
		g.waiting[q][0] = waiter{}
		g.waiting[q] = g.waiting[q][1:]
		g.inside++
	}
}

// Waiting is what waits for a connection now: the First calls (in pgxpool's queue,
// or taking a free connection), and the usual and the Later calls at the gate.
func (g *Gate) Waiting() (first, usual, later int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.first, len(g.waiting[0]), len(g.waiting[1])
}

// Of is the gate of a pool whose tracer is a Tracer, nil for any other pool.
func Of(pool *pgxpool.Pool) *Gate {
	if t, ok := pool.Config().ConnConfig.Tracer.(Tracer); ok {
		return t.Gate
	}
	return nil
}

// queued is the number of calls waiting at the gate.
func (g *Gate) queued() int { return len(g.waiting[0]) + len(g.waiting[1]) }

// open says whether another call may enter the pool's queue now: no First call is
// waiting for a connection and fewer others are in the queue than connections free,
// and at least one may always be (so that a connection freed at any moment finds a
// caller, and an end of Acquire always follows to let the next through). The pool's
// statistics (a lock of its own) are read only when another call is already in.
func (g *Gate) open(pool *pgxpool.Pool) bool {
	return g.first == 0 && (g.inside == 0 || g.inside < freeConns(pool))
}

// Tracer wraps a pool's tracer with a gate: TraceAcquireStart passes the gate after
// the wrapped tracer's start (so a request's log counts the wait at the gate as its
// wait for a connection), TraceAcquireEnd leaves it before the wrapped tracer's end.
// The wrapped tracer's other methods (queries, batches) are promoted.
type Tracer struct {
	Inner
	Gate *Gate
}

// Inner is what a gated pool's tracer must also be: pgx looks for the batch and
// acquire tracers on the query tracer it is given.
type Inner interface {
	pgx.QueryTracer
	pgx.BatchTracer
	pgxpool.AcquireTracer
}

// TraceAcquireStart implements pgxpool.AcquireTracer.
func (t Tracer) TraceAcquireStart(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireStartData) context.Context {
	return t.Gate.enter(t.Inner.TraceAcquireStart(ctx, pool, data), pool)
}

// TraceAcquireEnd implements pgxpool.AcquireTracer.
func (t Tracer) TraceAcquireEnd(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	t.Gate.leave(ctx, pool)
	t.Inner.TraceAcquireEnd(ctx, pool, data)
}
