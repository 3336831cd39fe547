package dbgate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/iowait"
)

// gatedPool is a pool of size conns on a fresh database, behind gate.
func gatedPool(t *testing.T, conns int32, gate *Gate) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = conns
	cfg.ConnConfig.Tracer = Tracer{Inner: iowait.Tracer{}, Gate: gate}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// counts is the gate's state: First calls and others in the pool's queue, others at
// the gate.
func (g *Gate) counts() (first, inside, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.first, g.inside, g.queued()
}

// waitFor polls the gate until cond holds, failing the test after 10 s.
func waitFor(t *testing.T, g *Gate, what string, cond func(first, inside, waiting int) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if cond(g.counts()) {
			return
		}
		if time.Now().After(deadline) {
			f, i, w := g.counts()
			t.Fatalf("waiting for %s: first %d, inside %d, waiting %d", what, f, i, w)
		}
	}
}

// call is one call to queue: its name, how its context is marked, and how long to
// wait before queueing it.
type call struct {
	name  string
	mark  func(context.Context) context.Context
	after time.Duration
}

func unmarked(ctx context.Context) context.Context { return ctx }

// queueInOrder takes a pool of one connection, queues the calls behind it one after
// the other, frees the connection and returns the order in which they got it.
func queueInOrder(t *testing.T, calls ...call) []string {
	g := &Gate{}
	pool := gatedPool(t, 1, g)
	ctx := t.Context()
	busy, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(busy.Release) // before the pool closes, should the test fail first
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for i, c := range calls {
		time.Sleep(c.after)
		wg.Go(func() {
			conn, err := pool.Acquire(c.mark(ctx))
			if err != nil {
				t.Error(c.name, err)
				return
			}
			mu.Lock()
			order = append(order, c.name)
			mu.Unlock()
			conn.Release()
		})
		waitFor(t, g, c.name+" queued", func(f, inside, waiting int) bool { return f+inside+waiting == i+1 })
	}
	busy.Release()
	wg.Wait()
	if f, i, w := g.counts(); f != 0 || i != 0 || w != 0 {
		t.Errorf("after all: first %d, inside %d, waiting %d; want all 0", f, i, w)
	}
	return order
}

func checkOrder(t *testing.T, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// A hold marked First gets the next connection but one: the call already in the
// pool's queue keeps its place, the others at the gate let the hold by.
func TestHoldGoesFirst(t *testing.T) {
	others := []call{{"other1", unmarked, 0}, {"other2", unmarked, 0}, {"other3", unmarked, 0}}
	got := queueInOrder(t, append(others, call{"hold", First, 0})...)
	checkOrder(t, got, "other1", "hold", "other2", "other3")
	// Negative control: unmarked, the hold waits its turn behind all three.
	got = queueInOrder(t, append(others, call{"hold", unmarked, 0})...)
	checkOrder(t, got, "other1", "other2", "other3", "hold")
}

// Calls marked Later let by the usual ones that asked up to LaterBy after them, and
// a hold goes before both.
func TestLaterGoesLast(t *testing.T) {
	got := queueInOrder(t, call{"later1", Later, 0}, call{"later2", Later, 0}, call{"usual", unmarked, 0}, call{"hold", First, 0})
	checkOrder(t, got, "later1", "hold", "usual", "later2")
	// Negative control: the usual call marked Later too keeps its place behind later2.
	got = queueInOrder(t, call{"later1", Later, 0}, call{"later2", Later, 0}, call{"usual", Later, 0}, call{"hold", First, 0})
	checkOrder(t, got, "later1", "hold", "later2", "usual")
}

// A call marked Later is never starved: a usual call that asks more than LaterBy after
// it goes after it.
func TestLaterNotStarved(t *testing.T) {
	got := queueInOrder(t, call{"later1", Later, 0}, call{"later2", Later, 0}, call{"usual", unmarked, LaterBy + 50*time.Millisecond})
	checkOrder(t, got, "later1", "later2", "usual")
}

// A call whose context ends while it waits at the gate gives up with the context's
// error and leaves nothing counted; the calls behind it go on.
func TestGateGivenUp(t *testing.T) {
	g := &Gate{}
	pool := gatedPool(t, 1, g)
	busy, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(busy.Release)
	inPool := make(chan error, 1)
	go func() {
		c, err := pool.Acquire(t.Context())
		if err == nil {
			c.Release()
		}
		inPool <- err
	}()
	waitFor(t, g, "one in the pool's queue", func(_, i, _ int) bool { return i == 1 })
	ctx, cancel := context.WithCancel(t.Context())
	atGate := make(chan error, 1)
	go func() {
		_, err := pool.Acquire(ctx)
		atGate <- err
	}()
	waitFor(t, g, "one at the gate", func(_, _, w int) bool { return w == 1 })
	cancel()
	if err := <-atGate; !errors.Is(err, context.Canceled) {
		t.Errorf("given up at the gate: %v, want context.Canceled", err)
	}
	if f, i, w := g.counts(); f != 0 || i != 1 || w != 0 {
		t.Errorf("after giving up: first %d, inside %d, waiting %d; want 0, 1, 0", f, i, w)
	}
	busy.Release()
	if err := <-inPool; err != nil {
		t.Errorf("the call in the pool's queue: %v", err)
	}
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("a call after: %d, %v", n, err)
	}
	if f, i, w := g.counts(); f != 0 || i != 0 || w != 0 {
		t.Errorf("at the end: first %d, inside %d, waiting %d; want all 0", f, i, w)
	}
}

// Many calls, holds, usual and Later ones, some given up, on a pool of two: every call that was
// not given up gets a connection, and the gate ends with nothing counted.
func TestGateUnderLoad(t *testing.T) {
	g := &Gate{}
	pool := gatedPool(t, 2, g)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := map[int]int{}
	for i := range 200 {
		wg.Go(func() {
			ctx := t.Context()
			switch i % 3 {
			case 0:
				ctx = First(ctx)
			case 1:
				ctx = Later(ctx)
			}
			if i%7 == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(3000))*time.Microsecond)
				defer cancel()
			}
			_, err := pool.Exec(ctx, "SELECT pg_sleep(0.0005)")
			switch {
			case err == nil:
				mu.Lock()
				done[i%3]++
				mu.Unlock()
			case i%7 != 0:
				t.Errorf("call %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if f, i, w := g.counts(); f != 0 || i != 0 || w != 0 {
		t.Errorf("at the end: first %d, inside %d, waiting %d; want all 0", f, i, w)
	}
	if done[0] == 0 || done[1] == 0 || done[2] == 0 {
		t.Errorf("calls done by level: %v; want every level's", done)
	}
}
