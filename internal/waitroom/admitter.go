package waitroom

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// admitter is what one Run keeps between ticks. The hooks' answers (events, stock)
// are fetched beside the ticks, not in them: a hook that is slow under load (a stock
// count waiting on the database) must not space the ticks out, since a tick that comes
// late finds the bucket full and the admissions of the wait beyond its cap are lost.
type admitter struct {
	answers atomic.Pointer[answers] // the hooks' last answers; nil: not asked yet
	asking  atomic.Bool             // a refresh is under way
	refresh sync.WaitGroup          // … and here is its end

	failing bool // the last Redis call failed: log the change, not every failure
}

// answers is one refresh's worth of the hooks' answers, never changed once stored.
type answers struct {
	at     time.Time
	events []Event
	stock  map[int64]Stock // by event; missing or unknownStock: the script keeps its last figures
}

// Run admits until ctx ends; exactly one instance at a time does the work (a lease in
// Redis), the others stand by. Each tick the holder renews the lease, then runs one
// script per event (tickScript), which also checks a per-event fence so that an
// instance that stalled past its lease cannot admit next to its successor. On return
// the lease and fences are given up, so a standby takes over at its next tick.
func (r *Room) Run(ctx context.Context) {
	t := time.NewTicker(r.opt.Tick)
	defer t.Stop()
	a := &admitter{}
	var flusher sync.WaitGroup
	defer flusher.Wait()
	flusher.Go(func() { r.flushLoop(ctx) })
	defer r.release(a)
	defer a.refresh.Wait()
	for {
		r.step(ctx, a)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// step is one tick of Run.
func (r *Room) step(ctx context.Context, a *admitter) {
	r.govern(time.Now()) // every instance: its joins admit too
	held, err := r.takeLease(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.failed(a, "admitter: lease", err)
		}
		r.setHolding(false)
		return
	}
	r.setHolding(held)
	if !held {
		a.refresh.Wait()
		a.answers.Store(nil) // a new holder asks afresh
		return
	}
	h := a.answers.Load()
	if (h == nil || time.Since(h.at) >= r.opt.Refresh) && a.asking.CompareAndSwap(false, true) {
		if h == nil {
			r.refresh(ctx, a) // nothing to tick without the events
			h = a.answers.Load()
		} else {
			a.refresh.Go(func() { r.refresh(ctx, a) })
		}
	}
	if h == nil {
		return
	}
	ok := true
	for _, ev := range h.events {
		if !ev.Settings.Enabled {
			continue
		}
		stock, known := h.stock[ev.ID]
		if !known {
			stock = unknownStock
		}
		if err := r.tickEvent(ctx, r.limitedEvent(ev), stock); err != nil {
			if ctx.Err() != nil {
				return
			}
			r.failed(a, "admitter: tick", err, "event", ev.ID)
			ok = false
		}
	}
	if ok && a.failing {
		a.failing = false
		r.log.Info("waitroom admitter: Redis answers again")
	}
}

func (r *Room) failed(a *admitter, msg string, err error, attrs ...any) {
	if !a.failing {
		a.failing = true
		r.log.Warn("waitroom "+msg+" failed; retrying every tick", append(attrs, "err", err)...)
	}
}

func (r *Room) setHolding(held bool) {
	if r.holding.Swap(held) != held {
		r.log.Info("waitroom admitter", "lease", map[bool]string{true: "taken", false: "lost, standing by"}[held], "instance", r.id)
	}
}

// takeLease takes or renews the lease; false: another instance holds it.
func (r *Room) takeLease(ctx context.Context) (bool, error) {
	res, err := r.eval(ctx, leaseScript, []string{leaseKey(r.prefix)}, r.id, r.opt.Lease.Milliseconds())
	if err != nil {
		return false, err
	}
	return asInt(res, 0) == 1, nil
}

// hookTimeout is the least time the hooks are given.
const hookTimeout = time.Second

// refresh asks the hooks which events to work on and how much each has left to sell,
// and installs the answers at once. A hook that fails leaves the last answer in place:
// the last list of events, and for the stock the figures the script keeps.
func (r *Room) refresh(ctx context.Context, a *admitter) {
	defer a.asking.Store(false)
	h := &answers{at: time.Now(), events: []Event{}, stock: map[int64]Stock{}}
	if last := a.answers.Load(); last != nil {
		h.events = last.events
	}
	if r.hooks.Events != nil {
		// At least a second, whatever the pace: a database that takes longer than a
		// fast pace to answer (a loaded test machine, with Refresh at 50 ms) must still
		// be heard. Only the first refresh holds up the ticks (there is nothing to tick
		// before it); later ones run beside them, one at a time.
		hctx, cancel := context.WithTimeout(ctx, max(r.opt.Refresh, hookTimeout))
		defer cancel()
		evs, err := r.hooks.Events(hctx)
		switch {
		case err == nil:
			h.events = evs
		case ctx.Err() == nil:
			r.log.Warn("waitroom admitter: events hook failed; keeping the last list", "err", err)
		}
		for _, ev := range h.events {
			if r.hooks.Stock == nil {
				break
			}
			n, err := r.hooks.Stock(hctx, ev.ID)
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("waitroom admitter: stock hook failed; keeping the last figure", "event", ev.ID, "err", err)
				}
				n = unknownStock
			}
			h.stock[ev.ID] = Stock{Unsold: max(n.Unsold, -1), Free: max(n.Free, -1)}
		}
	}
	a.answers.Store(h)
}

// tickEvent runs tickScript for one event.
func (r *Room) tickEvent(ctx context.Context, ev Event, stock Stock) error {
	s := ev.Settings
	res, err := r.script(ctx, tickScript, eventKeys(r.prefix, ev.ID),
		r.knownEpoch(ev.ID), r.freshEpoch(), r.opt.Regroup.Milliseconds(), r.bucketCap(s),
		ev.OnsaleAt.UnixMilli(), s.Slots, s.Rate, tokenTTL(s).Milliseconds(), r.opt.KeepPlace.Milliseconds(),
		stock.Unsold, r.id, r.opt.Lease.Milliseconds(), maxMoves, r.idleMS(s), rateWindow, stock.Free, claimSeconds,
		lapseMS(s), backWindow)
	if err != nil {
		return err
	}
	if asInt(res[0], 0) < 0 {
		r.log.Debug("waitroom admitter: another instance still holds the event's fence", "event", ev.ID)
		return nil
	}
	ep, _ := res[4].(string)
	r.noteEpoch(ev.ID, ep)
	if n := asInt(res[0], 0); n > 0 && r.hooks.Admitted != nil {
		r.hooks.Admitted(ev.ID, int(n))
	}
	if lapsed, reused := asInt(item(res, 6), 0), asInt(item(res, 7), 0); (lapsed > 0 || reused > 0) && r.hooks.Lapsed != nil {
		r.hooks.Lapsed(ev.ID, int(lapsed), int(reused))
	}
	if n := asInt(res[0], 0); n > 0 && r.onAdmit != nil {
		moved := make([]string, 0, n)
		for _, v := range res[min(8, len(res)):] {
			s, _ := v.(string)
			moved = append(moved, s)
		}
		r.onAdmit(ev.ID, moved, time.UnixMilli(asInt(res[3], 0)), false)
	}
	_, _, err = r.tickFront(ctx, ev)
	return err
}

// release gives up the lease and the fences of the events this instance ticked, with
// a context of its own: Run's has ended. It stops believing it holds the lease before
// it lets go, so two instances never both believe it.
func (r *Room) release(a *admitter) {
	if !r.holding.Swap(false) {
		return
	}
	r.log.Info("waitroom admitter", "lease", "released", "instance", r.id)
	ctx := context.Background()
	var events []Event
	if h := a.answers.Load(); h != nil {
		events = h.events
	}
	for _, ev := range events {
		_, _ = r.eval(ctx, unfenceScript, []string{eventKeys(r.prefix, ev.ID)[keyState]}, r.id)
	}
	if _, err := r.eval(ctx, releaseScript, []string{leaseKey(r.prefix)}, r.id); err != nil {
		r.log.Warn("waitroom admitter: lease not released; it lapses by itself", "err", err)
	}
}
