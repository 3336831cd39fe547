package waitroom

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

// TestOneAdmitterAcrossInstances: two Rooms (two app instances) against one Redis, both
// running their admitter. Sampled every 5 ms, never both believe they hold the lease
// and the lease names one of them; admissions come from one instance at a time. Three
// seconds in the holder stops: the other takes over within a tick or two, and the total
// rate over six seconds holds within ±10 %.
func TestOneAdmitterAcrossInstances(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	const rate, span = 40.0, 6 * time.Second
	settings := Settings{Enabled: true, Slots: 10000, Rate: rate, TokenTTL: time.Minute}
	var cur movable
	hooks := Hooks{Events: cur.events}
	a := newRoom(t, rdb, prefix, hooks, Options{})
	b := newRoom(t, rdb, prefix, hooks, Options{})
	rooms := map[string]*Room{"a": a, "b": b}
	rec := &admissions{}
	a.onAdmit, b.onAdmit = rec.hook("a"), rec.hook("b")
	ev := cur.set(preQueued(t, rdb, a, Event{ID: 1, Settings: settings}, 400))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sampled := make(chan int)
	go func() {
		n := 0
		defer func() { sampled <- n }()
		for ctx.Err() == nil {
			holders := 0
			for _, r := range rooms {
				if r.holding.Load() {
					holders++
				}
			}
			if holders > 1 {
				t.Errorf("got %d instances holding the lease at once, want at most 1", holders)
			}
			if id, err := rdb.Get(ctx, leaseKey(prefix)).Result(); err == nil && id != a.id && id != b.id {
				t.Errorf("got the lease held by %q, want %q or %q", id, a.id, b.id)
			} else if err != nil && err != redis.Nil && ctx.Err() == nil {
				t.Errorf("read the lease: %v", err)
			}
			n++
			<-time.After(5 * time.Millisecond)
		}
	}()
	stops := map[string]func(){"a": run(t, a), "b": run(t, b)}

	handover := ev.OnsaleAt.Add(span / 2)
	eventually(t, "half the time", span+wait, func() bool { return !redisNow(t, rdb).Before(handover) })
	first := rec.all()[0].room
	stops[first]()
	end := ev.OnsaleAt.Add(span)
	eventually(t, "the whole time", span+wait, func() bool { return !redisNow(t, rdb).Before(end) })
	cancel()
	t.Logf("%d samples of the lease", <-sampled)

	list := rec.all()
	switches, gap := 0, time.Duration(0)
	for i := 1; i < len(list); i++ {
		if list[i].room != list[i-1].room {
			switches++
		}
		gap = max(gap, list[i].at.Sub(list[i-1].at))
	}
	if switches != 1 {
		t.Errorf("got the admitting instance switching %d times, want once (at the handover)", switches)
	}
	if gap > time.Second {
		t.Errorf("got %v without an admission, want the handover within a second", gap)
	}
	got := float64(between(list, ev.OnsaleAt, end)) / span.Seconds()
	if math.Abs(got-rate) > 0.1*rate {
		t.Errorf("got %.2f admissions/s across both instances, want %.0f ± 10%%", got, rate)
	}
	t.Logf("%.2f admissions/s; longest gap %v", got, gap)
}

// TestFenceKeepsOneAdmitterPerEvent: an instance that still believes it may tick (it
// stalled past its lease) admits nobody while another instance's fence on the event
// runs; it admits once that fence lapses.
func TestFenceKeepsOneAdmitterPerEvent(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	ev := open(1, Settings{Slots: 1000, Rate: 20, TokenTTL: time.Minute})
	ev.OnsaleAt = redisNow(t, rdb).Add(300 * time.Millisecond)
	opt := Options{Lease: 500 * time.Millisecond}
	a := newRoom(t, rdb, prefix, Hooks{}, opt)
	b := newRoom(t, rdb, prefix, Hooks{}, opt)
	recA, recB := &admissions{}, &admissions{}
	a.onAdmit, b.onAdmit = recA.hook("a"), recB.hook("b")
	for i := range 50 {
		join(t, a, ev, visitor("v", i))
	}
	eventually(t, "the onsale", wait, func() bool { return !redisNow(t, rdb).Before(ev.OnsaleAt.Add(10 * time.Millisecond)) })

	// Read before the tick that sets the fence: the fence is set at or after this moment,
	// so it cannot lapse before fenced + Lease, give or take Redis's millisecond expiry
	// granularity (slack below). Read after the tick, it could be later than the fence
	// by the round trip, and the check would fail when nothing is wrong.
	const slack = 2 * time.Millisecond
	fenced := redisNow(t, rdb)
	if err := a.tickEvent(t.Context(), ev, unknownStock); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := b.tickEvent(t.Context(), ev, unknownStock); err != nil {
			t.Fatal(err)
		}
	}
	if n := recB.count(); n != 0 && redisNow(t, rdb).Sub(fenced) < opt.Lease-slack {
		t.Errorf("got %d admitted by the fenced-out instance, want 0", n)
	}
	eventually(t, "the other instance admits once the fence lapses", wait, func() bool {
		if err := b.tickEvent(t.Context(), ev, unknownStock); err != nil {
			t.Fatal(err)
		}
		return recB.count() > 0
	})
	if d := redisNow(t, rdb).Sub(fenced); d < opt.Lease-slack {
		t.Errorf("got the fence crossed after %v, want at least the lease %v", d, opt.Lease)
	}
}
