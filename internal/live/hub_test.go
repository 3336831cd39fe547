package live

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

// wait bounds every wait for something to happen.
const wait = 10 * time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// hooks records what the hub told its hooks.
type hooks struct {
	applied atomic.Int64 // the highest version Applied
	resets  chan resetCall
	mu      sync.Mutex
	order   []int64 // Applied versions, in call order
	gone    chan int64
}

type resetCall struct{ event, version int64 }

func newHooks() *hooks {
	return &hooks{resets: make(chan resetCall, 100), gone: make(chan int64, 100)}
}

func (k *hooks) options(o HubOptions) HubOptions {
	o.Apply = func(_ context.Context, _ int64, v int64, _ []int64) {
		k.mu.Lock()
		k.order = append(k.order, v)
		k.mu.Unlock()
		k.applied.Store(v)
	}
	o.Reset = func(_ context.Context, ev, v int64) {
		k.applied.Store(v)
		k.resets <- resetCall{ev, v}
	}
	o.Unwatched = func(ev int64) { k.gone <- ev }
	return o
}

// nextReset waits for the hub's next Reset hook call.
func (k *hooks) nextReset(t *testing.T) resetCall {
	t.Helper()
	select {
	case r := <-k.resets:
		return r
	case <-time.After(wait):
		t.Fatal("got no Reset hook call, want one")
		return resetCall{}
	}
}

func newHub(t *testing.T, rdb redis.UniversalClient, prefix string, k *hooks, o HubOptions) *Hub {
	t.Helper()
	if o.Flush == 0 {
		o.Flush = 10 * time.Millisecond
	}
	h := NewHub(rdb, prefix, quiet, k.options(o))
	t.Cleanup(h.Close)
	return h
}

// publish announces a change the way Publisher does, synchronously, and returns its
// version.
func publish(t *testing.T, rdb redis.UniversalClient, prefix string, event int64, seats ...int64) int64 {
	t.Helper()
	ids, _ := json.Marshal(append([]int64{}, seats...))
	ga := "0"
	if len(seats) == 0 {
		ga = "1"
	}
	v, err := publishScript.Run(context.Background(), rdb, []string{versionKey(prefix, event)}, seatsChannel(prefix, event), string(ids), ga).Int64()
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return v
}

func watch(t *testing.T, h *Hub, event, since int64) *Watcher {
	t.Helper()
	w, err := h.Watch(t.Context(), event, since)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	return w
}

// next waits for the watcher's next batch.
func next(t *testing.T, w *Watcher) Batch {
	t.Helper()
	select {
	case b, ok := <-w.C():
		if !ok {
			t.Fatalf("watcher closed (%v), want a batch", w.Err())
		}
		return b
	case <-time.After(wait):
		t.Fatal("got no batch, want one")
		return Batch{}
	}
}

// until gathers a watcher's seats until it reaches version v; a Reset fails the test.
func until(t *testing.T, w *Watcher, v int64) []int64 {
	t.Helper()
	var seats []int64
	for {
		b := next(t, w)
		if b.Reset {
			t.Fatalf("got a Reset at version %d, want changes up to %d", b.Version, v)
		}
		seats = append(seats, b.SeatIDs...)
		if b.Version >= v {
			slices.Sort(seats)
			return slices.Compact(seats)
		}
	}
}

// subscribers counts Redis's subscribers of the event's channel.
func subscribers(t *testing.T, rdb redis.UniversalClient, prefix string, event int64) int64 {
	t.Helper()
	ch := seatsChannel(prefix, event)
	n, err := rdb.PubSubShardNumSub(t.Context(), ch).Result()
	if err != nil {
		t.Fatalf("PUBSUB SHARDNUMSUB: %v", err)
	}
	return n[ch]
}

// eventually polls cond until it holds, failing the test after wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	dbtest.Eventually(t, what, wait, cond)
}

// TestHubFansOutOneSubscription: fifty watchers of one event share one Redis
// subscription, every one of them gets every change, and the Apply hook has seen each
// change before any watcher does.
func TestHubFansOutOneSubscription(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{})
	ws := make([]*Watcher, 50)
	for i := range ws {
		ws[i] = watch(t, h, 1, 0)
	}
	if r := k.nextReset(t); r != (resetCall{1, 0}) {
		t.Fatalf("got Reset %+v, want event 1 at version 0", r)
	}
	if n := subscribers(t, rdb, prefix, 1); n != 1 {
		t.Errorf("got %d subscribers for 50 watchers, want 1", n)
	}
	publish(t, rdb, prefix, 1, 10, 11)
	publish(t, rdb, prefix, 1, 11)
	v := publish(t, rdb, prefix, 1, 12)
	for i, w := range ws {
		for seen := int64(0); seen < v; {
			b := next(t, w)
			if b.Reset {
				t.Fatalf("watcher %d got a Reset, want changes", i)
			}
			if a := k.applied.Load(); a < b.Version {
				t.Fatalf("watcher %d got version %d before Apply saw it (applied %d)", i, b.Version, a)
			}
			seen = b.Version
		}
	}
	k.mu.Lock()
	order := slices.Clone(k.order)
	k.mu.Unlock()
	if !slices.IsSorted(order) || len(slices.Compact(slices.Clone(order))) != len(order) || order[len(order)-1] != 3 {
		t.Errorf("got Apply versions %v, want increasing up to 3", order)
	}
}

// TestHubMergesChanges: changes that arrive within one tick come as one batch: the
// union of their seats at the latest version, GA changes flagged.
func TestHubMergesChanges(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{Flush: time.Hour}) // flushed by hand
	w := watch(t, h, 1, 0)
	k.nextReset(t)
	publish(t, rdb, prefix, 1, 3, 1)
	publish(t, rdb, prefix, 1) // general admission
	publish(t, rdb, prefix, 1, 1, 2)
	eventually(t, "three changes applied", func() bool { return k.applied.Load() == 3 })
	h.mu.Lock()
	f := h.feeds[1]
	h.mu.Unlock()
	for slot := range h.flushSlots() {
		f.flush(slot)
	}
	b := next(t, w)
	if b.Version != 3 || !slices.Equal(b.SeatIDs, []int64{1, 2, 3}) || !b.GA || b.Reset {
		t.Errorf("got %+v, want version 3, seats [1 2 3], GA", b)
	}
}

// TestHubDropsSlowWatcher: a watcher that never reads is dropped with ErrSlow once its
// buffer is full, while another watcher of the event gets every change.
func TestHubDropsSlowWatcher(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{Buffer: 2})
	slow := watch(t, h, 1, 0)
	fast := watch(t, h, 1, 0)
	k.nextReset(t)
	// One change per tick: the fast watcher's batch shows the tick has passed.
	for i := int64(1); i <= 5; i++ {
		v := publish(t, rdb, prefix, 1, i)
		if got := until(t, fast, v); !slices.Equal(got, []int64{i}) {
			t.Fatalf("fast watcher got seats %v, want [%d]", got, i)
		}
	}
	n := 0
	for range slow.C() {
		n++
	}
	if n != 2 {
		t.Errorf("slow watcher had %d batches buffered, want 2", n)
	}
	if !errors.Is(slow.Err(), ErrSlow) {
		t.Errorf("slow watcher ended with %v, want ErrSlow", slow.Err())
	}
	if err := fast.Err(); err != nil {
		t.Errorf("fast watcher ended with %v, want running", err)
	}
}

// TestHubReplaysFromRing: a watcher joining from a version the ring still covers gets
// the seats changed since; one older than the ring, or newer than the feed, gets a
// Reset; one that is current gets nothing until the next change.
func TestHubReplaysFromRing(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{Ring: 5})
	w0 := watch(t, h, 1, 0)
	k.nextReset(t)
	for i := int64(1); i <= 3; i++ {
		publish(t, rdb, prefix, 1, 100+i)
	}
	until(t, w0, 3)

	w1 := watch(t, h, 1, 1)
	if b := next(t, w1); b.Reset || b.Version != 3 || !slices.Equal(b.SeatIDs, []int64{102, 103}) {
		t.Errorf("from version 1 got %+v, want seats [102 103] at version 3", b)
	}
	for i := int64(4); i <= 8; i++ {
		publish(t, rdb, prefix, 1, 100+i)
	}
	until(t, w0, 8) // the ring now holds versions 4..8

	old := watch(t, h, 1, 2)
	if b := next(t, old); !b.Reset || b.Version != 8 {
		t.Errorf("from version 2 with versions 4..8 kept got %+v, want a Reset at 8", b)
	}
	ahead := watch(t, h, 1, 99)
	if b := next(t, ahead); !b.Reset || b.Version != 8 {
		t.Errorf("from version 99 got %+v, want a Reset at 8", b)
	}
	edge := watch(t, h, 1, 3)
	if b := next(t, edge); b.Reset || !slices.Equal(b.SeatIDs, []int64{104, 105, 106, 107, 108}) {
		t.Errorf("from version 3 got %+v, want seats 104..108", b)
	}
	current := watch(t, h, 1, 8)
	publish(t, rdb, prefix, 1, 109)
	if b := next(t, current); b.Reset || b.Version != 9 || !slices.Equal(b.SeatIDs, []int64{109}) {
		t.Errorf("from version 8 got %+v, want seat 109 at version 9", b)
	}
}

// TestHubResetsOnLostMessages: a version gap and a counter that goes backwards both
// reset every watcher, after the Reset hook heard of it; the feed goes on afterwards.
func TestHubResetsOnLostMessages(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{})
	w := watch(t, h, 1, 0)
	k.nextReset(t)
	publish(t, rdb, prefix, 1, 1)
	until(t, w, 1)

	// Versions 2..4 never arrive.
	if err := rdb.Set(t.Context(), versionKey(prefix, 1), 5, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SPublish(t.Context(), seatsChannel(prefix, 1), `{"v":5,"seats":[7]}`).Err(); err != nil {
		t.Fatal(err)
	}
	if r := k.nextReset(t); r.version != 5 {
		t.Errorf("gap: got Reset hook at version %d, want 5", r.version)
	}
	if b := next(t, w); !b.Reset || b.Version != 5 {
		t.Errorf("gap: got %+v, want a Reset at version 5", b)
	}
	publish(t, rdb, prefix, 1, 8)
	if got := until(t, w, 6); !slices.Equal(got, []int64{8}) {
		t.Errorf("after the gap got seats %v, want [8]", got)
	}

	// The counter starts again from nothing, as after a restart of an empty Redis.
	if err := rdb.Del(t.Context(), versionKey(prefix, 1)).Err(); err != nil {
		t.Fatal(err)
	}
	publish(t, rdb, prefix, 1, 9)
	if r := k.nextReset(t); r.version != 1 {
		t.Errorf("backwards: got Reset hook at version %d, want 1", r.version)
	}
	if b := next(t, w); !b.Reset || b.Version != 1 {
		t.Errorf("backwards: got %+v, want a Reset at version 1", b)
	}
	publish(t, rdb, prefix, 1, 10)
	if got := until(t, w, 2); !slices.Equal(got, []int64{10}) {
		t.Errorf("after going backwards got seats %v, want [10]", got)
	}
}

// TestHubWatcherEnds: a watcher ends with its context's error or with ErrClosed when
// the hub closes; Watch fails after Close.
func TestHubWatcherEnds(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	byCtx, err := h.Watch(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	other := watch(t, h, 1, 0)
	cancel()
	drain(t, byCtx)
	if !errors.Is(byCtx.Err(), context.Canceled) {
		t.Errorf("watcher ended with %v, want context.Canceled", byCtx.Err())
	}
	h.Close()
	drain(t, other)
	if !errors.Is(other.Err(), ErrClosed) {
		t.Errorf("watcher ended with %v, want ErrClosed", other.Err())
	}
	if _, err := h.Watch(t.Context(), 1, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Watch after Close: got %v, want ErrClosed", err)
	}
}

// drain reads a watcher until its channel closes.
func drain(t *testing.T, w *Watcher) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case _, ok := <-w.C():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watcher still open, want it closed")
		}
	}
}

// TestPublisherAnnouncesGA: a change without seats goes out flagged as a change of
// general-admission places, and the hub passes the flag on.
func TestPublisherAnnouncesGA(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{})
	w := watch(t, h, 1, 0)
	k.nextReset(t)
	p := NewPublisher(rdb, prefix, quiet)
	p.SeatsChanged(t.Context(), 1, nil)
	p.Close()
	if b := next(t, w); b.Version != 1 || !b.GA || len(b.SeatIDs) != 0 {
		t.Errorf("got %+v, want version 1 flagged GA, no seats", b)
	}
}

// TestHubCatchesUpInOneApply: changes that queue up while the Apply hook is busy (a
// slow database) are applied in one call, with the last version and all their seats,
// and watchers still get every seat.
func TestHubCatchesUpInOneApply(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	gate := make(chan struct{})
	type call struct {
		version int64
		seats   []int64
	}
	calls := make(chan call, 10)
	resets := make(chan struct{}, 1)
	h := NewHub(rdb, prefix, quiet, HubOptions{
		Flush: 10 * time.Millisecond,
		Apply: func(_ context.Context, _ int64, v int64, seats []int64) {
			calls <- call{v, slices.Clone(seats)}
			if v == 1 {
				<-gate
			}
		},
		Reset: func(context.Context, int64, int64) { resets <- struct{}{} },
	})
	t.Cleanup(h.Close)
	w := watch(t, h, 1, 0)
	<-resets
	publish(t, rdb, prefix, 1, 10)
	if c := <-calls; c.version != 1 {
		t.Fatalf("first Apply at version %d, want 1", c.version)
	}
	for i := int64(2); i <= 5; i++ {
		publish(t, rdb, prefix, 1, 10*i, 10*i+1)
	}
	h.mu.Lock()
	f := h.feeds[1]
	h.mu.Unlock()
	eventually(t, "four changes queued behind the busy Apply", func() bool {
		f.qmu.Lock()
		defer f.qmu.Unlock()
		return len(f.queue) == 4
	})
	close(gate)
	c := <-calls
	if want := []int64{20, 21, 30, 31, 40, 41, 50, 51}; c.version != 5 || !slices.Equal(c.seats, want) {
		t.Errorf("catching up got Apply(%d, %v), want Apply(5, %v)", c.version, c.seats, want)
	}
	if got := until(t, w, 5); len(got) != 9 {
		t.Errorf("watcher got seats %v, want 10 and 20..51", got)
	}
}
