package waitroom

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

// open is an event whose onsale has passed.
func open(id int64, s Settings) Event {
	s.Enabled = true
	return Event{ID: id, OnsaleAt: time.Now().Add(-time.Hour), Settings: s}
}

func join(t *testing.T, r *Room, ev Event, v string) Status {
	t.Helper()
	st, err := r.Join(t.Context(), ev, v)
	if err != nil {
		t.Fatalf("Join(%s): %v", v, err)
	}
	return st
}

func status(t *testing.T, r *Room, ev Event, v string) Status {
	t.Helper()
	st, err := r.Status(t.Context(), ev, v)
	if err != nil {
		t.Fatalf("Status(%s): %v", v, err)
	}
	return st
}

// TestRoomOffPassesWithoutRedis: with the room off everyone is admitted at once with
// a valid token, and Redis is not asked (this client's server does not exist).
func TestRoomOffPassesWithoutRedis(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + dbtest.FreePort(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	r := newRoom(t, rdb, "test:", Hooks{}, Options{})
	ev := Event{ID: 3, Settings: Settings{Enabled: false, TokenTTL: time.Minute}}
	for _, call := range []func(context.Context, Event, string) (Status, error){r.Join, r.Status} {
		st, err := call(t.Context(), ev, "v1")
		if err != nil || !st.Admitted {
			t.Fatalf("got %+v, %v; want admitted, nil", st, err)
		}
		if _, err := r.Verify(st.Token, 3, "v1"); err != nil {
			t.Errorf("Verify: got %v, want nil", err)
		}
	}
}

// TestJoinAdmitsAtOnceAndKeepsAdmission: free slots and nobody waiting admit at once;
// joining again, or asking, keeps the same admission, end and token alike.
func TestJoinAdmitsAtOnceAndKeepsAdmission(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	r := newRoom(t, rdb, prefix, Hooks{}, Options{})
	ev := open(1, Settings{Slots: 5, Rate: 10, TokenTTL: time.Minute})
	st := join(t, r, ev, "a")
	if !st.Admitted || st.Token == "" {
		t.Fatalf("got %+v, want admitted with a token", st)
	}
	if d := time.Until(st.ExpiresAt); d < 55*time.Second || d > 65*time.Second {
		t.Errorf("got admission ending in %v, want about 1m", d)
	}
	c, err := r.Verify(st.Token, 1, "a")
	if err != nil || !c.ExpiresAt.Equal(st.ExpiresAt) {
		t.Errorf("Verify: got %+v, %v; want claims ending %v", c, err, st.ExpiresAt)
	}
	again := join(t, r, ev, "a")
	if !again.Admitted || !again.ExpiresAt.Equal(st.ExpiresAt) || again.Token != st.Token {
		t.Errorf("joining again got %+v, want the same admission %v", again, st.ExpiresAt)
	}
	asked := status(t, r, ev, "a")
	if !asked.Admitted || !asked.ExpiresAt.Equal(st.ExpiresAt) {
		t.Errorf("Status got %+v, want admitted until %v", asked, st.ExpiresAt)
	}
}

// TestJoinKeepsPlace: with no free slot everyone queues first in, first out, and
// joining again keeps the place.
func TestJoinKeepsPlace(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	r := newRoom(t, rdb, prefix, Hooks{}, Options{})
	ev := open(1, Settings{Slots: 0, Rate: 10})
	for i, v := range []string{"a", "b", "c"} {
		st := join(t, r, ev, v)
		if st.Admitted || !st.Queued || st.Position != i+1 || st.PreQueue {
			t.Errorf("Join(%s): got %+v, want queued at position %d", v, st, i+1)
		}
	}
	if st := join(t, r, ev, "a"); st.Position != 1 || st.Waiting != 3 {
		t.Errorf("joining again got position %d of %d, want 1 of 3", st.Position, st.Waiting)
	}
	st := status(t, r, ev, "b")
	if !st.Queued || st.Position != 2 || st.Ahead != 1 || st.Waiting != 3 {
		t.Errorf("Status(b): got %+v, want position 2, 1 ahead, 3 waiting", st)
	}
	if st.ETAMin != 0 || st.ETAMax != 0 {
		t.Errorf("Status(b) with no slots: got ETA %v–%v, want none (0)", st.ETAMin, st.ETAMax)
	}
	if st := status(t, r, ev, "nobody"); st.Admitted || st.Queued || st.Position != 0 {
		t.Errorf("Status of a stranger: got %+v, want neither admitted nor queued", st)
	}
}

// TestLeaveGivesSlotBack: the one slot is taken; once its shopper leaves, the next
// in line is admitted.
func TestLeaveGivesSlotBack(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	ev := open(1, Settings{Slots: 1, Rate: 50, TokenTTL: time.Minute})
	r := newRoom(t, rdb, prefix, Hooks{Events: events(ev)}, Options{Tick: 20 * time.Millisecond})
	if st := join(t, r, ev, "a"); !st.Admitted {
		t.Fatalf("Join(a): got %+v, want admitted", st)
	}
	if st := join(t, r, ev, "b"); st.Admitted || st.Position != 1 {
		t.Fatalf("Join(b): got %+v, want queued first", st)
	}
	run(t, r)
	if err := r.Leave(t.Context(), ev.ID, "a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b admitted after a left", wait, func() bool { return status(t, r, ev, "b").Admitted })
	if st := status(t, r, ev, "a"); st.Admitted {
		t.Errorf("Status(a) after Leave: got admitted, want not")
	}
}

// TestSoldOutStopsAndResumes: at stock 0 nobody is admitted and the queue says sold
// out; with stock but nothing free (everything left held) nobody is admitted either,
// and the queue says so with no ETA; when holds lapse (free stock again) admission
// resumes.
func TestSoldOutStopsAndResumes(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	var stock, free atomic.Int64
	ev := open(1, Settings{Slots: 10, Rate: 50, TokenTTL: time.Minute})
	hooks := Hooks{Events: events(ev), Stock: func(context.Context, int64) (Stock, error) {
		return Stock{Unsold: int(stock.Load()), Free: int(free.Load())}, nil
	}}
	r := newRoom(t, rdb, prefix, hooks, Options{Tick: 20 * time.Millisecond, Refresh: 20 * time.Millisecond})
	run(t, r)
	eventually(t, "the stock figure", wait, func() bool { return status(t, r, ev, "a").SoldOut })
	if st := join(t, r, ev, "a"); st.Admitted || !st.SoldOut || st.SeatsLeft != 0 {
		t.Fatalf("Join when sold out: got %+v, want queued, sold out, 0 left", st)
	}
	// Ten admitter ticks later "a" still waits.
	until := redisNow(t, rdb).Add(200 * time.Millisecond)
	for redisNow(t, rdb).Before(until) {
		if st := status(t, r, ev, "a"); st.Admitted {
			t.Fatalf("got admitted while sold out, want waiting")
		}
		<-time.After(10 * time.Millisecond)
	}
	stock.Store(3) // three unsold, all held
	eventually(t, "everything held", wait, func() bool { return status(t, r, ev, "a").AllHeld })
	if st := join(t, r, ev, "b"); st.Admitted || !st.AllHeld || st.SoldOut || st.ETA != 0 || st.ETAMax != 0 {
		t.Fatalf("Join with everything held: got %+v, want queued, all held, not sold out, no ETA", st)
	}
	until = redisNow(t, rdb).Add(200 * time.Millisecond)
	for redisNow(t, rdb).Before(until) {
		if st := status(t, r, ev, "a"); st.Admitted {
			t.Fatalf("got admitted while everything was held, want waiting")
		}
		<-time.After(10 * time.Millisecond)
	}
	free.Store(3)
	eventually(t, "admission after stock came back", wait, func() bool { return status(t, r, ev, "a").Admitted })
	if st := status(t, r, ev, "b"); st.SoldOut || st.AllHeld || st.SeatsLeft != 3 {
		t.Errorf("got sold out %v, all held %v, %d left; want false, false, 3", st.SoldOut, st.AllHeld, st.SeatsLeft)
	}
}

// TestAdmitsNoMoreThanFreePlaces: with few places free the room lets in as many from
// the head of the queue as there are places free less the admissions of this second
// and the claimSeconds before, not a second's worth of its rate, most of whom would
// find nothing; places that come back let as many more in. (The checks end within a
// second of the joins, before their claims age out.)
func TestAdmitsNoMoreThanFreePlaces(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	var free atomic.Int64
	free.Store(3)
	ev := open(1, Settings{Slots: 100, Rate: 1000, TokenTTL: time.Minute})
	hooks := Hooks{Events: events(ev), Stock: func(context.Context, int64) (Stock, error) {
		return Stock{Unsold: 50, Free: int(free.Load())}, nil
	}}
	r := newRoom(t, rdb, prefix, hooks, Options{Tick: 20 * time.Millisecond, Refresh: 20 * time.Millisecond})
	run(t, r)
	eventually(t, "the stock figure", wait, func() bool { return status(t, r, ev, "x").SeatsLeft == 50 })
	// Nobody waits: the first three go straight in, then the places are claimed.
	waiters := make([]string, 20)
	for i := range waiters {
		waiters[i] = fmt.Sprintf("w%02d", i)
		if st := join(t, r, ev, waiters[i]); st.Admitted != (i < 3) {
			t.Fatalf("%s joining: admitted %v, want %v (3 places free)", waiters[i], st.Admitted, i < 3)
		}
	}
	admitted := func() (in []string) {
		for _, v := range waiters {
			if status(t, r, ev, v).Admitted {
				in = append(in, v)
			}
		}
		return in
	}
	// Ten ticks later, at a rate of 1,000 a second and 100 slots: still three, the
	// first three in line.
	until := redisNow(t, rdb).Add(200 * time.Millisecond)
	for redisNow(t, rdb).Before(until) {
		<-time.After(20 * time.Millisecond)
	}
	if in := admitted(); len(in) != 3 || in[0] != "w00" || in[2] != "w02" {
		t.Fatalf("3 places free: admitted %v, want w00-w02", in)
	}
	free.Store(5) // two more come back (or the three did not hold yet: the claims stand)
	eventually(t, "five admitted", wait, func() bool { return len(admitted()) >= 5 })
	if in := admitted(); len(in) != 5 || in[3] != "w03" || in[4] != "w04" {
		t.Errorf("5 places free: admitted %v, want w00-w04", in)
	}
}

// TestUnseenWaiterLosesPlace: a waiter whose page stops checking in loses the place
// after KeepPlace; one that keeps checking in keeps it and moves up.
func TestUnseenWaiterLosesPlace(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	const keep = 400 * time.Millisecond
	ev := open(1, Settings{Slots: 0, Rate: 10})
	r := newRoom(t, rdb, prefix, Hooks{Events: events(ev)}, Options{Tick: 20 * time.Millisecond, KeepPlace: keep})
	join(t, r, ev, "gone")
	joined := redisNow(t, rdb)
	join(t, r, ev, "here")
	run(t, r)
	queue := eventKeys(prefix, ev.ID)[keyQueue]
	eventually(t, "the unseen waiter dropped", wait, func() bool {
		status(t, r, ev, "here") // the page of "here" checks in; nobody asks for "gone"
		return rdb.ZScore(t.Context(), queue, "gone").Err() == redis.Nil
	})
	if d := redisNow(t, rdb).Sub(joined); d < keep {
		t.Errorf("got the place lost after %v, want at least %v", d, keep)
	}
	if st := status(t, r, ev, "gone"); st.Queued || st.Admitted {
		t.Errorf("Status(gone): got %+v, want neither queued nor admitted", st)
	}
	if st := status(t, r, ev, "here"); !st.Queued || st.Position != 1 {
		t.Errorf("Status(here): got %+v, want queued first", st)
	}
}

// TestLostStateRegroups: when the event's keys vanish (Redis came back empty), this
// instance, which had seen the event, treats the next joins as a pre-queue drawn at the
// end of the regroup window, and nobody is admitted before it.
func TestLostStateRegroups(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	ev := open(1, Settings{Slots: 100, Rate: 100, TokenTTL: time.Minute})
	r := newRoom(t, rdb, prefix, Hooks{}, Options{Regroup: time.Minute})
	join(t, r, ev, "a") // admitted at once: the event's state now exists
	if err := rdb.Del(t.Context(), eventKeys(prefix, ev.ID)...).Err(); err != nil {
		t.Fatal(err)
	}
	if st := status(t, r, ev, "b"); st.Queued || st.Admitted || st.PreQueue {
		t.Errorf("Status after the loss: got %+v, want a stranger, no regroup yet", st)
	}
	before := redisNow(t, rdb)
	st := join(t, r, ev, "b")
	if st.Admitted || !st.Queued || !st.PreQueue {
		t.Fatalf("Join after the loss: got %+v, want queued in a regroup pre-queue", st)
	}
	if d := st.DrawAt.Sub(before); d < 59*time.Second || d > 61*time.Second {
		t.Errorf("got the draw %v after the join, want the regroup window, 1m", d)
	}
	if st := join(t, r, ev, "c"); st.Admitted {
		t.Errorf("a second join during the regroup: got admitted, want waiting for the draw")
	}

	// Another instance that never saw the event has no reason to regroup.
	other := newRoom(t, rdb, prefix, Hooks{}, Options{})
	fresh := open(2, ev.Settings)
	if st := join(t, other, fresh, "a"); !st.Admitted {
		t.Errorf("first join of a new event: got %+v, want admitted at once", st)
	}
}

// TestETA: the wait's bounds, from the rate the room is expected to admit at (never
// less than its present rate), or from a measured rate well below that, or, before
// one is measured, from the settings.
func TestETA(t *testing.T) {
	t.Parallel()
	s := Settings{Slots: 100, Rate: 10, TokenTTL: 100 * time.Second} // slots turn over at 1/s at worst
	cut := s
	cut.Rate, cut.expect = 8, 10 // admitting at 8/s now, expected to average 10/s
	for _, c := range []struct {
		name        string
		ahead       int
		measured    float64
		s           Settings
		lo, est, hi time.Duration
	}{
		{"measured", 99, 10, s, 8 * time.Second, 10 * time.Second, 12500 * time.Millisecond},
		{"measured slower than set", 9, 2, s, 4 * time.Second, 5 * time.Second, 6250 * time.Millisecond},
		{"measured faster than the rate now (just cut)", 99, 20, s, 8 * time.Second, 10 * time.Second, 12500 * time.Millisecond},
		{"just cut, a climb back expected", 99, 20, cut, 8 * time.Second, 10 * time.Second, 12500 * time.Millisecond},
		{"measured a little below the rate (it lags a climb)", 99, 8, cut, 8 * time.Second, 10 * time.Second, 12500 * time.Millisecond},
		{"measured well below the rate: held back elsewhere", 99, 4, s, 20 * time.Second, 25 * time.Second, 31250 * time.Millisecond},
		{"measured, then paused", 99, 10, Settings{Slots: 100, Rate: 0}, 0, 0, 0},
		{"unknown: the configured rate, up to turnover", 99, 0, s, 10 * time.Second, 10 * time.Second, 100 * time.Second},
		{"unknown, slots never bind", 9, 0, Settings{Slots: 1000, Rate: 5, TokenTTL: time.Second}, 2 * time.Second, 2 * time.Second, 2 * time.Second},
		{"paused", 5, 0, Settings{Slots: 10, Rate: 0}, 0, 0, 0},
	} {
		lo, est, hi := eta(c.ahead, c.measured, c.s)
		if lo != c.lo || est != c.est || hi != c.hi {
			t.Errorf("%s: got %v (%v–%v), want %v (%v–%v)", c.name, est, lo, hi, c.est, c.lo, c.hi)
		}
	}
}

// TestWaitsIncludeTheNotice: every wait the queue shows ends when the page learns of
// its turn: a queued visitor's is the places' wait and the Notice; a pre-queue
// visitor's earliest is the draw and the Notice; with everything held, or the room
// paused, there is none.
func TestWaitsIncludeTheNotice(t *testing.T) {
	t.Parallel()
	r := &Room{}
	now := time.Now()
	s := Settings{Enabled: true, Slots: 100, Rate: 10, TokenTTL: 100 * time.Second}
	ev := Event{ID: 1, OnsaleAt: now.Add(-time.Minute), Settings: s}
	queued := reply{code: codeWaiting, rank: 99, waiting: 500, now: now.UnixMilli(), mrate: 10, stock: 1000, free: 900, served: 40, place: 140}
	lo, est, hi := eta(99, 10, s)
	st := r.status(ev, "v", queued)
	if st.ETAMin != lo+Notice || st.ETA != est+Notice || st.ETAMax != hi+Notice {
		t.Errorf("queued 100th: got %v (%v–%v), want %v (%v–%v), the places' wait and the notice",
			st.ETA, st.ETAMin, st.ETAMax, est+Notice, lo+Notice, hi+Notice)
	}
	held := queued
	held.free = 0
	if st := r.status(ev, "v", held); !st.AllHeld || st.ETAMin != 0 || st.ETA != 0 || st.ETAMax != 0 {
		t.Errorf("everything held: got %+v, want no wait", st)
	}
	paused := ev
	paused.Settings.Rate = 0
	if st := r.status(paused, "v", queued); st.ETAMin != 0 || st.ETA != 0 || st.ETAMax != 0 {
		t.Errorf("room paused: got %v (%v–%v), want no wait", st.ETA, st.ETAMin, st.ETAMax)
	}
	pre := ev
	pre.OnsaleAt = now.Add(30 * time.Second).Truncate(time.Millisecond)
	preq := queued
	preq.rank, preq.served, preq.mrate = -1, 0, 0
	if st := r.status(pre, "v", preq); !st.PreQueue || st.ETAMin != pre.OnsaleAt.Sub(time.UnixMilli(preq.now))+Notice {
		t.Errorf("pre-queue: got earliest %v, want the draw in %v and the notice", st.ETAMin, pre.OnsaleAt.Sub(time.UnixMilli(preq.now)))
	}
}

// TestPreQueueLooksSpreadByPlace: a pre-queue page whose draw comes within the minute
// looks after the draw at a moment set by its place, spread over the minute after it
// (a second at the least), rather than the whole pre-queue at the draw; one whose
// draw is further off looks again in a minute.
func TestPreQueueLooksSpreadByPlace(t *testing.T) {
	t.Parallel()
	r := &Room{opt: Options{KeepPlace: 5 * time.Minute}}
	for _, c := range []struct {
		place     float64
		untilDraw time.Duration
		want      time.Duration
	}{
		{0.5, 10 * time.Second, 40 * time.Second},
		{0.75, 10 * time.Second, 55 * time.Second},
		{0.001, 10 * time.Second, 11 * time.Second},
		{0.25, 0, 15 * time.Second},
		{0.25, 2 * time.Hour, MaxLook},
	} {
		st := Status{Queued: true, PreQueue: true, Place: c.place}
		if got := r.lookAfter(st, c.untilDraw); got != c.want {
			t.Errorf("place %v, draw in %v: look after %v, want %v", c.place, c.untilDraw, got, c.want)
		}
	}
}

// TestQueuedLooks: a queued page whose turn is due within half of KeepPlace looks at
// half of KeepPlace (the board shows it its turn first); one further back, or with no
// wait to tell, looks about once a minute, spread by its number from half a minute to
// a minute and a half, so that successive arrivals do not look again together.
func TestQueuedLooks(t *testing.T) {
	t.Parallel()
	r := &Room{opt: Options{KeepPlace: 5 * time.Minute}}
	for _, c := range []struct {
		eta  time.Duration
		want time.Duration
	}{
		{3 * time.Second, 150 * time.Second},
		{150 * time.Second, 150 * time.Second},
	} {
		st := Status{Queued: true, Number: 7, ETA: c.eta}
		if got := r.lookAfter(st, -time.Minute); got != c.want {
			t.Errorf("turn in %v: look after %v, want %v", c.eta, got, c.want)
		}
	}
	// Further back, or no wait to tell: a minute or so, spread by the number.
	for _, eta := range []time.Duration{151 * time.Second, 0} {
		seen := map[time.Duration]bool{}
		sum := time.Duration(0)
		for n := int64(1); n <= 100; n++ {
			got := r.lookAfter(Status{Queued: true, Number: n, ETA: eta}, -time.Minute)
			if got < 30*time.Second || got >= 90*time.Second {
				t.Fatalf("number %d, turn in %v: look after %v, want within [30 s, 90 s)", n, eta, got)
			}
			seen[got.Truncate(10*time.Second)] = true
			sum += got
		}
		if len(seen) != 6 {
			t.Errorf("turn in %v: 100 successive numbers looked in %d of the six 10-second spans, want all", eta, len(seen))
		}
		if mean := sum / 100; mean < 55*time.Second || mean > 65*time.Second {
			t.Errorf("turn in %v: mean look after %v, want about a minute", eta, mean)
		}
	}
}

// TestKeysShareHashTag: every key of an event hashes on {event:ID}, so Redis Cluster
// keeps an event's keys on one slot and its scripts may touch them all.
func TestKeysShareHashTag(t *testing.T) {
	t.Parallel()
	for _, k := range eventKeys("boxoffice:", 42) {
		from, end := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
		if from < 0 || end < from || k[from:end+1] != "{event:42}" {
			t.Errorf("key %q: got no hash tag {event:42} first, want it", k)
		}
	}
}

// TestHangingHookDoesNotStopAdmissions: the admitter asks its hooks beside its ticks, so
// a stock count that hangs (a database that stopped answering) leaves the last figure
// in use and the queue moving. Asked inside the tick, as before, it stopped every
// admission until the hook came back.
func TestHangingHookDoesNotStopAdmissions(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	ev := open(9, Settings{Slots: 1, Rate: 50, TokenTTL: time.Minute})
	var calls atomic.Int64
	hang := make(chan struct{})
	r := newRoom(t, rdb, prefix, Hooks{
		Events: events(ev),
		Stock: func(context.Context, int64) (Stock, error) {
			if calls.Add(1) > 1 {
				<-hang // ignores its context, as a stuck driver call may
			}
			return Stock{Unsold: 100, Free: 100}, nil
		},
	}, Options{Tick: 20 * time.Millisecond, Refresh: 20 * time.Millisecond})
	for i := range 3 {
		join(t, r, ev, visitor("h", i))
	}
	run(t, r)
	t.Cleanup(func() { close(hang) }) // before run's stop, which waits for Run
	eventually(t, "the first visitor admitted", wait, func() bool { return status(t, r, ev, visitor("h", 0)).Admitted })
	eventually(t, "the stock hook hanging", wait, func() bool { return calls.Load() > 1 })
	if err := r.Leave(t.Context(), ev.ID, visitor("h", 0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the next visitor admitted while the hook hangs", wait, func() bool {
		return status(t, r, ev, visitor("h", 1)).Admitted
	})
}

// TestPollAfter: a page near its turn asks every second, one far back every 5 s (a
// quarter of the wait, the page's notice aside), and a pre-queue page comes back at
// the draw.
func TestPollAfter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		st        Status
		untilDraw time.Duration
		want      time.Duration
	}{
		{"turn any moment", Status{Queued: true, ETAMin: 2 * time.Second}, 0, time.Second},
		{"turn in 12 s", Status{Queued: true, ETAMin: 12*time.Second + Notice}, 0, 3 * time.Second},
		{"far back", Status{Queued: true, ETAMin: 10 * time.Minute}, 0, MaxPoll},
		{"paused room: no estimate", Status{Queued: true}, 0, MaxPoll},
		{"pre-queue, draw in 3 s", Status{Queued: true, PreQueue: true, ETAMin: 3 * time.Second}, 3 * time.Second, 3 * time.Second},
		{"pre-queue, draw in an hour", Status{Queued: true, PreQueue: true, ETAMin: time.Hour}, time.Hour, MaxPoll},
		{"admitted", Status{Admitted: true}, 0, MaxPoll},
	} {
		if got := pollAfter(c.st, c.untilDraw); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
