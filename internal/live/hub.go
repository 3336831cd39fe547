package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Why a watcher's channel closed (Watcher.Err).
var (
	// ErrSlow: the watcher did not take its batches as fast as they came and its buffer
	// filled. It is dropped rather than allowed to stall the event's other watchers; its
	// client reconnects and catches up from its last version.
	ErrSlow = errors.New("live: watcher too slow, dropped")
	// ErrClosed: the hub is shutting down, or was already.
	ErrClosed = errors.New("live: hub closed")
)

// HubOptions tune a Hub. The zero value of every field means its default.
type HubOptions struct {
	// Flush is how often each watcher gets what changed since its last batch: a busy
	// event costs one write per client per tick, not one per change. Default 100 ms.
	Flush time.Duration
	// Buffer is how many batches a watcher may leave untaken before it is dropped with
	// ErrSlow. Default 32 (over three seconds of ticks).
	Buffer int
	// Ring is how many recent changes per event are kept for replay to watchers that
	// join from an older version. Default 1024.
	Ring int
	// Linger is how long an event's subscription outlives its last watcher, so that a
	// page reload or a reconnect does not cost an unsubscribe, a subscribe and a resync.
	// Default 5 s.
	Linger time.Duration
	// MaxBatchSeats caps the seats of one batch: a watcher further behind gets a Reset,
	// since one fresh snapshot is cheaper than thousands of single-seat swaps.
	// Default 1024.
	MaxBatchSeats int
	// HealthCheck is how long a subscription may stay silent before it is pinged, so
	// that a connection that died without a word is noticed. Default 30 s.
	HealthCheck time.Duration

	// Apply is called for every change, in version order, before any watcher hears of
	// it, so that a cache it updates is current when a viewer renders from it. Changes
	// that queued up while it ran come as one call: the last version and all their
	// seats. An empty seatIDs means a change without seats (general-admission places).
	Apply func(ctx context.Context, eventID, version int64, seatIDs []int64)
	// Reset is called when the hub starts following an event and whenever messages may
	// have been lost (a version gap, the counter going backwards, a reconnection):
	// every change up to version has committed, and those after it will be Applied.
	// It is called before the event's watchers are told to reset.
	Reset func(ctx context.Context, eventID, version int64)
	// Unwatched is called when the hub stops following an event (its last watcher left
	// Linger ago, or the hub closed): from then on a cache must not trust its copy to
	// be kept current.
	Unwatched func(eventID int64)
	// Repair, when set, is called every RepairEvery for each event that has watchers
	// here: it compares the seat statuses the viewers were sent (the cache the Apply
	// hook keeps) with a fresh read and returns the seats that differ, and whether the
	// general-admission places do. The hub announces them as an ordinary change, so
	// that every instance's viewers converge on the database even when a change's own
	// announcement was lost between its commit and its publish (the instance died, or
	// Redis did not take it), and so that a hold that lapsed, which nothing else
	// announces (expiry is lazy), shows free. shownFree counts the differences the
	// viewers saw as free that the database has taken (seats, and GA places as one):
	// those are lost announcements; the rest are nearly always lapsed holds. Nil: no
	// repair.
	Repair func(ctx context.Context, eventID int64) (seatIDs []int64, ga bool, shownFree int, err error)
	// RepairEvery is how often Repair runs per watched event. Default 1 s.
	RepairEvery time.Duration
}

func (o HubOptions) withDefaults() HubOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur(&o.Flush, 100*time.Millisecond)
	def(&o.Buffer, 32)
	def(&o.Ring, 1024)
	defDur(&o.Linger, 5*time.Second)
	def(&o.MaxBatchSeats, 1024)
	defDur(&o.HealthCheck, 30*time.Second)
	defDur(&o.RepairEvery, time.Second)
	if o.Apply == nil {
		o.Apply = func(context.Context, int64, int64, []int64) {}
	}
	if o.Reset == nil {
		o.Reset = func(context.Context, int64, int64) {}
	}
	if o.Unwatched == nil {
		o.Unwatched = func(int64) {}
	}
	return o
}

// Hub fans an event's seat changes out to the viewers in this process. It holds one
// Redis subscription per watched event, never one per viewer (each go-redis PubSub
// holds a connection of its own), and hands each watcher batches through a bounded
// buffer. There is one Hub per process.
//
// The channels are sharded (SSUBSCRIBE): in a Redis Cluster an event's subscription is
// a connection to the primary that owns the event's slot, and go-redis's cluster
// client fixes a PubSub's node at its first subscription, so channels of events on
// different nodes could not share one PubSub. One per event keeps that true.
//
// Lock order: Hub.mu before feed.mu. Hooks are called with neither held.
type Hub struct {
	rdb    redis.UniversalClient
	prefix string
	log    *slog.Logger
	opt    HubOptions

	ctx    context.Context // ends every feed and the flusher
	cancel context.CancelFunc
	wg     sync.WaitGroup // the flusher and every feed's receiver

	mu          sync.Mutex
	feeds       map[int64]*feed // the current feed of each watched event
	lastRetired map[int64]*feed // feeds retired from h.feeds, until their receiver ends
	closed      bool
}

// NewHub returns a Hub reading the channels under prefix, with its flusher running
// until Close.
func NewHub(rdb redis.UniversalClient, prefix string, log *slog.Logger, opt HubOptions) *Hub {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{rdb: rdb, prefix: prefix, log: log, opt: opt.withDefaults(), ctx: ctx, cancel: cancel, feeds: map[int64]*feed{}}
	h.wg.Add(1)
	go h.flushLoop()
	return h
}

// Batch is what one watcher is told at one flush tick.
type Batch struct {
	// Version is the event's version the watcher is now at: every change up to it is
	// in this batch or an earlier one.
	Version int64
	// SeatIDs are the seats that changed since the watcher's previous batch, sorted,
	// each once. The slice is shared between watchers: never modify it.
	SeatIDs []int64
	// GA is set when a change without seats (general-admission places) is included.
	GA bool
	// Reset means changes may have been lost: the client must take a fresh snapshot.
	// SeatIDs is then empty.
	Reset bool

	shared *sharedResult
}

type sharedResult struct {
	once sync.Once
	b    []byte
	err  error
}

// Shared returns fn's result, computed once for every watcher that received this same
// batch: watchers at the same version get the same batch, so a busy event renders one
// message per tick, not one per client. Batches not shared just call fn.
func (b Batch) Shared(fn func() ([]byte, error)) ([]byte, error) {
	if b.shared == nil {
		return fn()
	}
	b.shared.once.Do(func() { b.shared.b, b.shared.err = fn() })
	return b.shared.b, b.shared.err
}

// Watcher is one viewer's feed of an event's changes.
type Watcher struct {
	feed *feed
	ch   chan Batch
	slot int // the flush slot it belongs to; fixed

	// Guarded by feed.mu.
	since  int64 // the version the viewer's snapshot is at, until synced
	synced bool  // cursor is meaningful: the feed knew its version when we joined
	cursor int64 // the version of the last batch handed over
	reset  bool  // the next batch must be a Reset
	ended  bool
	err    error
	stop   func() bool // unregisters the context.AfterFunc
}

// C delivers the watcher's batches. It is closed when the watcher ends; Err then says
// why.
func (w *Watcher) C() <-chan Batch { return w.ch }

// Err reports why C closed: ErrSlow, ErrClosed, the context error of the Watch, or nil
// after Close. It is nil while the watcher runs.
func (w *Watcher) Err() error {
	w.feed.mu.Lock()
	defer w.feed.mu.Unlock()
	return w.err
}

// Close ends the watcher. Closing twice, or after the watcher was dropped, is harmless.
func (w *Watcher) Close() { w.end(nil) }

// Watch starts a watcher of the event's changes after sinceVersion, the version of the
// viewer's snapshot. If the hub still holds the changes after it, they come in the
// first batch; if not (or the feed cannot tell yet what it missed), the first batch is
// a Reset. Watch does not wait for Redis: while the subscription is being made, or
// Redis is down, the watcher simply hears nothing yet. It ends when ctx does.
func (h *Hub) Watch(ctx context.Context, eventID, sinceVersion int64) (*Watcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	f := h.feeds[eventID]
	if f == nil {
		f = h.startFeed(eventID)
	}
	if f.linger != nil {
		f.linger.Stop()
		f.linger = nil
	}
	w := &Watcher{feed: f, ch: make(chan Batch, h.opt.Buffer), since: max(sinceVersion, 0)}
	f.mu.Lock()
	w.slot = f.nextSlot
	f.nextSlot = (f.nextSlot + 1) % h.flushSlots()
	f.watchers[w] = struct{}{}
	if f.ready {
		f.sync(w)
	}
	f.mu.Unlock()
	h.mu.Unlock()

	stop := context.AfterFunc(ctx, func() { w.end(context.Cause(ctx)) })
	f.mu.Lock()
	if w.ended {
		stop()
	} else {
		w.stop = stop
	}
	f.mu.Unlock()
	return w, nil
}

// end removes the watcher and closes its channel with err, once.
func (w *Watcher) end(err error) {
	f := w.feed
	f.mu.Lock()
	removed := f.removeLocked(w, err)
	empty := len(f.watchers) == 0
	f.mu.Unlock()
	if removed && empty {
		f.hub.idle(f)
	}
}

// startFeed starts following an event. Called with h.mu held.
func (h *Hub) startFeed(eventID int64) *feed {
	ctx, cancel := context.WithCancel(h.ctx)
	// Without channels, SSubscribe makes no round trip and picks no node yet: the
	// receiver subscribes, and the channel's slot then chooses the node.
	ps := h.rdb.SSubscribe(ctx)
	f := &feed{
		hub: h, event: eventID, done: make(chan struct{}), ps: ps, wake: make(chan struct{}, 1),
		prev: h.retiring(eventID), watchers: map[*Watcher]struct{}{},
	}
	// A blocked receive does not watch its context: closing the PubSub is what
	// wakes it.
	f.cancel = func() {
		cancel()
		f.closeSub()
	}
	h.feeds[eventID] = f
	h.wg.Add(1)
	go f.run(ctx)
	return f
}

// retiring is the feed of the event that is still shutting down, if any: a new feed
// waits for it, so that its Unwatched hook never comes after the new feed's Reset.
// Called with h.mu held; a retired feed leaves h.lastRetired when its receiver ends.
func (h *Hub) retiring(eventID int64) *feed {
	return h.lastRetired[eventID]
}

// idle starts the linger timer of a feed that has no watcher left.
func (h *Hub) idle(f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.feeds[f.event] != f || f.linger != nil {
		return
	}
	f.mu.Lock()
	n := len(f.watchers)
	f.mu.Unlock()
	if n == 0 {
		f.linger = time.AfterFunc(h.opt.Linger, func() { h.retire(f) })
	}
}

// retire stops following an event whose watchers are all gone, unless one came back
// while the timer fired.
func (h *Hub) retire(f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.feeds[f.event] != f {
		return
	}
	f.mu.Lock()
	n := len(f.watchers)
	f.mu.Unlock()
	if n > 0 {
		return
	}
	delete(h.feeds, f.event)
	if h.lastRetired == nil {
		h.lastRetired = map[int64]*feed{}
	}
	h.lastRetired[f.event] = f
	f.linger = nil
	f.cancel()
}

// Watchers counts the watchers open in this process (the live streams), for /metrics.
// A feed is retired only once it has none, so the current feeds hold them all.
func (h *Hub) Watchers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, f := range h.feeds {
		f.mu.Lock()
		n += len(f.watchers)
		f.mu.Unlock()
	}
	return n
}

// Close ends every watcher with ErrClosed, drops every subscription and waits until
// the hub's goroutines have returned. Watch fails afterwards.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.wg.Wait()
		return
	}
	h.closed = true
	feeds := make([]*feed, 0, len(h.feeds))
	for _, f := range h.feeds {
		feeds = append(feeds, f)
		if f.linger != nil {
			f.linger.Stop()
			f.linger = nil
		}
	}
	clear(h.feeds)
	h.mu.Unlock()
	h.cancel()
	for _, f := range feeds {
		f.cancel()
		f.mu.Lock()
		for w := range f.watchers {
			f.removeLocked(w, ErrClosed)
		}
		f.mu.Unlock()
	}
	h.wg.Wait()
}

// flushSlots is how many slots the flush period is cut into. Each watcher belongs to
// one and is flushed once per period, in its slot: the writes of thousands of streams
// are spread over the period instead of all waking at once, which would make the last
// stream of every tick wait for all the others' writes.
func (h *Hub) flushSlots() int {
	return int(min(max(h.opt.Flush/(10*time.Millisecond), 1), 10))
}

// flushLoop hands the watchers of one slot their batches on each tick.
func (h *Hub) flushLoop() {
	defer h.wg.Done()
	slots := h.flushSlots()
	t := time.NewTicker(h.opt.Flush / time.Duration(slots))
	defer t.Stop()
	var feeds []*feed
	for tick := 0; ; tick = (tick + 1) % slots {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		feeds = feeds[:0]
		for _, f := range h.feeds {
			feeds = append(feeds, f)
		}
		h.mu.Unlock()
		for _, f := range feeds {
			if f.flush(tick) {
				h.idle(f)
			}
		}
	}
}

// Done is closed when the hub is closed (server shutdown): other long-lived answers,
// such as the control room's stream, end with it.
func (h *Hub) Done() <-chan struct{} { return h.ctx.Done() }
