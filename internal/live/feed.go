package live

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// feed is the hub's following of one event: one subscription, two goroutines (the
// receiver reads Redis and never waits for the database; the applier calls the hooks and
// fills the ring), the ring of recent changes and the event's watchers.
//
// The ring holds the changes with versions (base, last], contiguous: a gap resets it.
// Every watcher's cursor is a version it has been handed everything up to; a flush
// hands it the merged changes after its cursor. Watchers at the same cursor (nearly all
// of them) share one Batch per tick.
type feed struct {
	hub    *Hub
	event  int64
	prev   *feed         // the event's previous feed; its goroutines must end first
	psMu   sync.Mutex    // guards ps, which the receiver replaces when its slot moves
	ps     *redis.PubSub // the event's one subscription
	cancel func()        // ends the feed: cancels its context, closes ps
	done   chan struct{} // closed when the feed's goroutines have returned

	linger *time.Timer // guarded by hub.mu

	// The receiver's queue for the applier (run), which wakes on wake.
	qmu   sync.Mutex
	queue []item
	wake  chan struct{}

	// Owned by the applier.
	followed bool // Reset was called, so Unwatched must be

	// Guarded by mu. ready, base, last and the ring are written by the applier only,
	// which may read them without mu.
	mu       sync.Mutex
	watchers map[*Watcher]struct{}
	nextSlot int  // the flush slot of the next watcher: round robin
	ready    bool // base and last are known: the subscription is confirmed
	base     int64
	last     int64
	ring     []entry // ring[(start+i)%len] is the change of version base+1+i
	start    int
	n        int
}

// Backoff between attempts while Redis is away.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

// run is the feed's applier. It subscribes, starts the receiver, and takes what the
// receiver queued: (re)subscriptions become Resets, messages become ring entries after
// the Apply hook has seen them. Messages that queued up while it was busy (a slow
// database under the Apply hook) are applied as one run, so the feed catches up instead
// of falling further behind.
func (f *feed) run(ctx context.Context) {
	h := f.hub
	defer h.wg.Done()
	defer func() {
		h.mu.Lock()
		if h.lastRetired[f.event] == f {
			delete(h.lastRetired, f.event)
		}
		h.mu.Unlock()
		close(f.done)
	}()
	defer f.closeSub()
	if f.prev != nil {
		select {
		case <-f.prev.done:
		case <-ctx.Done():
			return
		}
	}
	// A failed SUBSCRIBE is remembered and made again by the reconnecting receive.
	_ = f.sub().SSubscribe(ctx, seatsChannel(h.prefix, f.event))
	received := make(chan struct{})
	go func() {
		defer close(received)
		f.receive(ctx)
	}()
	repaired := make(chan struct{})
	go func() {
		defer close(repaired)
		f.repairLoop(ctx)
	}()
	defer func() {
		<-received // ctx is done, ps closed: the receiver returns
		<-repaired
		if f.followed {
			h.opt.Unwatched(f.event)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		f.qmu.Lock()
		items := f.queue
		f.queue = nil
		f.qmu.Unlock()
		if !f.apply(ctx, items) {
			return
		}
	}
}

// item is what the receiver hands the applier.
type item struct {
	resync string // non-empty: (re)subscribed or lost messages; the reason, or "first"
	change Change
}

// maxQueue bounds what the receiver keeps for an applier that is stuck: beyond it the
// queue is dropped for one resync, which is cheaper than catching up change by change.
const maxQueue = 10000

// receive reads the subscription until ctx ends. go-redis reconnects and resubscribes
// by itself on the receive after a failure; a subscription confirmation after the first
// therefore means a reconnection, and whatever was published while the connection was
// down is lost: the applier resyncs.
func (f *feed) receive(ctx context.Context) {
	h := f.hub
	subscribed := false
	backoff := time.Duration(0)
	for {
		ps := f.sub()
		msg, err := ps.ReceiveTimeout(ctx, h.opt.HealthCheck)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				_ = ps.Ping(ctx) // a dead connection fails here and is replaced
				continue
			}
			if backoff == 0 {
				h.log.Warn("seat feed lost its subscription; reconnecting", "event", f.event, "err", err)
			}
			if strings.HasPrefix(err.Error(), "MOVED ") { // subscribed on a node the slot has left
				f.moved(ctx)
			}
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			if !sleep(ctx, backoff) {
				return
			}
			continue
		}
		backoff = 0
		var it item
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "sunsubscribe" {
				f.moved(ctx)
				continue
			}
			if m.Kind != "ssubscribe" {
				continue
			}
			it.resync = "first"
			if subscribed {
				it.resync = "resubscribed after a lost connection"
			}
			subscribed = true
		case *redis.Message:
			if err := json.Unmarshal([]byte(m.Payload), &it.change); err != nil || it.change.Version <= 0 {
				h.log.Warn("seat feed: message not understood", "event", f.event, "payload", m.Payload)
				continue
			}
		default:
			continue
		}
		f.qmu.Lock()
		if len(f.queue) >= maxQueue {
			f.queue = append(f.queue[:0], item{resync: "applier too far behind"})
		}
		f.queue = append(f.queue, it)
		f.qmu.Unlock()
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// sub is the feed's current subscription.
func (f *feed) sub() *redis.PubSub {
	f.psMu.Lock()
	defer f.psMu.Unlock()
	return f.ps
}

// closeSub closes the current subscription, which wakes a blocked receive.
func (f *feed) closeSub() {
	f.psMu.Lock()
	defer f.psMu.Unlock()
	_ = f.ps.Close()
}

// moved replaces a subscription that Redis ended: the feed never unsubscribes (it
// closes instead), so an sunsubscribe comes from a Redis Cluster whose node gave the
// channel's slot away (and a MOVED answer from a node the slot has left). go-redis
// keeps a PubSub on its node, so a new one, once the client has reloaded the slots,
// finds the slot's new owner; its confirmation resyncs the feed, since whatever was
// published meanwhile went unheard. Once ctx has ended (the feed closing) nothing is
// replaced.
func (f *feed) moved(ctx context.Context) {
	f.psMu.Lock()
	defer f.psMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	f.hub.log.Warn("seat feed: Redis ended the subscription (its slot moved); subscribing again", "event", f.event)
	if c, ok := f.hub.rdb.(*redis.ClusterClient); ok {
		c.ReloadState(ctx) // in the background: a MOVED answer brings us here again
	}
	_ = f.ps.Close()
	f.ps = f.hub.rdb.SSubscribe(ctx, seatsChannel(f.hub.prefix, f.event))
}

// apply takes queued items in order. It reports false if ctx ended.
func (f *feed) apply(ctx context.Context, items []item) bool {
	for i := 0; i < len(items); {
		it := items[i]
		if it.resync != "" {
			reason := it.resync
			if reason == "first" {
				reason = ""
			}
			if !f.resync(ctx, reason) {
				return false
			}
			i++
			continue
		}
		if !f.ready {
			i++ // cannot happen: the confirmation comes before any message
			continue
		}
		// The longest run of consecutive versions from here is applied as one.
		j := i
		for j < len(items) && items[j].resync == "" && items[j].change.Version == f.last+1+int64(j-i) {
			j++
		}
		if j > i {
			f.applyRun(ctx, items[i:j])
			i = j
			continue
		}
		f.handle(ctx, it.change)
		i++
	}
	return ctx.Err() == nil
}

// applyRun applies consecutive changes after f.last: one Apply call with all their
// seats, then one ring entry each.
func (f *feed) applyRun(ctx context.Context, run []item) {
	seats := run[0].change.SeatIDs
	if len(run) > 1 {
		seats = nil
		for _, it := range run {
			seats = append(seats, it.change.SeatIDs...)
		}
		slices.Sort(seats)
		seats = slices.Compact(seats)
	}
	f.hub.opt.Apply(ctx, f.event, run[len(run)-1].change.Version, seats)
	f.mu.Lock()
	for _, it := range run {
		c := it.change
		f.push(entry{seats: c.SeatIDs, ga: c.GA || len(c.SeatIDs) == 0})
	}
	f.mu.Unlock()
}

// resync learns the event's current version after a (re)subscription and resets the
// feed to it. Messages published before the read may still arrive: their versions are
// at most the one read, and handle ignores them.
func (f *feed) resync(ctx context.Context, reason string) bool {
	backoff := time.Duration(0)
	for {
		v, err := f.version(ctx)
		if err == nil {
			f.reset(ctx, v, reason)
			return true
		}
		backoff = min(max(2*backoff, minBackoff), maxBackoff)
		if !sleep(ctx, backoff) {
			return false
		}
	}
}

// handle takes a message that does not follow f.last: versions come in order on one
// connection (the publish script bumps and publishes in one step), so it means trouble.
func (f *feed) handle(ctx context.Context, c Change) {
	if c.Version > f.last+1 {
		// Every change up to c.Version committed before it was published, so the Reset
		// may vouch for it.
		f.reset(ctx, c.Version, "version gap")
		return
	}
	// Either published between our SUBSCRIBE and our read of the counter (covered by
	// the Reset then), or the counter went backwards under us: Redis restarted empty,
	// or its keys were flushed, without our connection noticing.
	cur, err := f.version(ctx)
	if err == nil && cur < f.last {
		f.reset(ctx, cur, "version went backwards")
	}
}

// reset tells the Reset hook, then restarts the ring at version v and marks every
// watcher for a Reset (watchers not yet synced get what their version deserves).
func (f *feed) reset(ctx context.Context, v int64, reason string) {
	h := f.hub
	if reason != "" {
		h.log.Warn("seat feed reset: watchers reload", "event", f.event, "reason", reason, "from", f.last, "to", v)
	}
	f.followed = true
	h.opt.Reset(ctx, f.event, v)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ring == nil {
		f.ring = make([]entry, h.opt.Ring)
	}
	clear(f.ring)
	f.base, f.last, f.start, f.n = v, v, 0, 0
	f.ready = true
	for w := range f.watchers {
		if w.synced {
			w.reset, w.cursor = true, v
		} else {
			f.sync(w)
		}
	}
}

// version reads the event's change counter.
func (f *feed) version(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := f.hub.rdb.Get(ctx, versionKey(f.hub.prefix, f.event)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return v, err
}

// entry is one change in the ring.
type entry struct {
	seats []int64
	ga    bool
}

// push appends the next version's change, forgetting the oldest when the ring is full.
// Called with f.mu held.
func (f *feed) push(e entry) {
	if f.n == len(f.ring) {
		f.start = (f.start + 1) % len(f.ring)
		f.n--
		f.base++
	}
	f.ring[(f.start+f.n)%len(f.ring)] = e
	f.n++
	f.last++
}

// sync places a new watcher: at its own version if the ring covers what came after it,
// else at the latest with a Reset. Called with f.mu held and f.ready.
func (f *feed) sync(w *Watcher) {
	w.synced = true
	if w.since >= f.base && w.since <= f.last {
		w.cursor = w.since
		return
	}
	w.cursor, w.reset = f.last, true
}

// flush hands every watcher of the slot that is behind its batch, without ever
// waiting: a full buffer drops its watcher. It reports whether that left the feed
// without watchers.
func (f *feed) flush(slot int) (emptied bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ready || len(f.watchers) == 0 {
		return false
	}
	var reset *Batch
	var memo map[int64]Batch
	dropped := false
	for w := range f.watchers {
		var b Batch
		switch {
		case w.slot != slot || !w.synced:
			continue
		case w.reset || w.cursor < f.base || w.cursor > f.last:
			b = f.resetBatch(&reset)
		case w.cursor == f.last:
			continue
		default:
			var ok bool
			if b, ok = memo[w.cursor]; !ok {
				b = f.batchFrom(w.cursor, &reset)
				if memo == nil {
					memo = map[int64]Batch{}
				}
				memo[w.cursor] = b
			}
		}
		select {
		case w.ch <- b:
			w.cursor, w.reset = b.Version, false
		default:
			f.removeLocked(w, ErrSlow) // deleting during range is safe
			dropped = true
		}
	}
	return dropped && len(f.watchers) == 0
}

func (f *feed) resetBatch(memo **Batch) Batch {
	if *memo == nil {
		*memo = &Batch{Version: f.last, Reset: true, shared: &sharedResult{}}
	}
	return **memo
}

// batchFrom merges the changes after cursor, which the ring covers.
func (f *feed) batchFrom(cursor int64, reset **Batch) Batch {
	limit := f.hub.opt.MaxBatchSeats
	var ids []int64
	ga := false
	for v := cursor + 1; v <= f.last; v++ {
		e := f.ring[(f.start+int(v-f.base-1))%len(f.ring)]
		ga = ga || e.ga
		ids = append(ids, e.seats...)
		if len(ids) > 4*limit { // far too many even with repeats: stop merging
			return f.resetBatch(reset)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > limit {
		return f.resetBatch(reset)
	}
	return Batch{Version: f.last, SeatIDs: ids, GA: ga, shared: &sharedResult{}}
}

// removeLocked ends a watcher: out of the feed, its reason set, its channel closed. It
// reports whether the watcher was still there. Called with f.mu held, which is also
// what every send holds: nothing is sent on a closed channel.
func (f *feed) removeLocked(w *Watcher, err error) bool {
	if w.ended {
		return false
	}
	w.ended = true
	w.err = err
	delete(f.watchers, w)
	close(w.ch)
	if w.stop != nil {
		w.stop()
	}
	return true
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
