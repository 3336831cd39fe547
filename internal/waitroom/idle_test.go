package waitroom

import (
	"sync"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// Admissions that hold nothing within the idle window lapse (lifecycle.go).

func endOf(t *testing.T, r *Room, eventID int64, v string, exp time.Time) End {
	t.Helper()
	e, err := r.EndOf(t.Context(), eventID, v, exp)
	if err != nil {
		t.Fatalf("EndOf(%s): %v", v, err)
	}
	return e
}

// lapses records what the Lapsed hook hears, by event.
type lapses struct {
	mu             sync.Mutex
	lapsed, reused map[int64]int
}

func (l *lapses) hook(eventID int64, lapsed, reused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lapsed == nil {
		l.lapsed, l.reused = map[int64]int{}, map[int64]int{}
	}
	l.lapsed[eventID] += lapsed
	l.reused[eventID] += reused
}

func (l *lapses) of(eventID int64) (lapsed, reused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lapsed[eventID], l.reused[eventID]
}

// TestIdleAdmissionLapses: two slots, a minute's admission and a 300 ms idle window.
// "holder" and then "idler" go straight in, "next" waits. The holder's hold comes at
// once (Extend); the idler holds nothing. Its admission lapses: "next" is let in to
// its slot within the token's lifetime, the idler's token is refused as lapsed
// (while the holder's stands, though its idle deadline passed first), and Counts and
// the Lapsed hook count one lapse and one reuse. The idler joining again waits in the
// queue; a new admission's token is not refused. The control: the same in an event
// whose idle window is no shorter than the admission, where "next" still waits when
// the other event's lapse has let its "next" in.
func TestIdleAdmissionLapses(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	s := Settings{Slots: 2, Rate: 50, TokenTTL: time.Minute, Idle: 300 * time.Millisecond}
	idle, control := open(1, s), open(2, s)
	control.Settings.Idle = time.Minute
	var heard lapses
	var ads admissions
	r := newRoom(t, rdb, prefix, Hooks{Events: events(idle, control), Lapsed: heard.hook}, Options{Tick: 20 * time.Millisecond})
	r.onAdmit = ads.hook("r")

	ends := map[int64]map[string]time.Time{idle.ID: holderIdlerNext(t, r, idle), control.ID: holderIdlerNext(t, r, control)}
	run(t, r)
	eventually(t, "next admitted to the lapsed slot", wait, func() bool { return status(t, r, idle, "next").Admitted })
	var at time.Time
	for _, ad := range ads.all() {
		if ad.visitor == "next" {
			at = ad.at
		}
	}
	if !at.Before(ends[idle.ID]["idler"]) {
		t.Errorf("next admitted at %v, want before the idler's token ends at %v", at, ends[idle.ID]["idler"])
	}
	if st := status(t, r, control, "next"); !st.Queued {
		t.Errorf("control, idle window as long as the admission: next got %+v, want still queued", st)
	}
	if e := endOf(t, r, idle.ID, "idler", ends[idle.ID]["idler"]); e != Lapsed {
		t.Errorf("the idler's token: got end %v, want Lapsed", e)
	}
	if st := status(t, r, idle, "idler"); st.Admitted || st.Queued {
		t.Errorf("the idler after the lapse: got %+v, want neither admitted nor queued", st)
	}
	for _, ev := range []Event{idle, control} {
		if e := endOf(t, r, ev.ID, "holder", ends[ev.ID]["holder"]); e != Running {
			t.Errorf("event %d: the holder's token: got end %v, want Running", ev.ID, e)
		}
		if st := status(t, r, ev, "holder"); !st.Admitted {
			t.Errorf("event %d: the holder got %+v, want admitted for its hold's life", ev.ID, st)
		}
	}
	c, err := r.Counts(t.Context(), idle.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counts{Waiting: 0, Active: 2, Lapsed: 1, Reused: 1}) {
		t.Errorf("counts: got %+v, want 2 shopping, 1 lapsed, 1 reused", c)
	}
	if l, u := heard.of(idle.ID); l != 1 || u != 1 {
		t.Errorf("Lapsed hook: got %d lapsed, %d reused; want 1 and 1", l, u)
	}
	if l, u := heard.of(control.ID); l != 0 || u != 0 {
		t.Errorf("Lapsed hook, control: got %d lapsed, %d reused; want none", l, u)
	}

	again := join(t, r, idle, "idler")
	if !again.Queued {
		t.Fatalf("the idler joining again: got %+v, want queued (slots full)", again)
	}
	if err := r.Leave(t.Context(), idle.ID, "holder"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the idler admitted anew", wait, func() bool { return status(t, r, idle, "idler").Admitted })
	st := status(t, r, idle, "idler")
	if e := endOf(t, r, idle.ID, "idler", st.ExpiresAt); e != Running {
		t.Errorf("the idler's new token: got end %v, want Running", e)
	}
	if e := endOf(t, r, idle.ID, "idler", ends[idle.ID]["idler"]); e != Lapsed {
		t.Errorf("the idler's old token after the new admission: got end %v, want Lapsed", e)
	}
}

// holderIdlerNext fills the event's two slots with "holder", whose hold comes at once,
// and "idler", and queues "next"; it returns the ends of the first two's tokens.
func holderIdlerNext(t *testing.T, r *Room, ev Event) map[string]time.Time {
	t.Helper()
	ends := map[string]time.Time{}
	for _, v := range []string{"holder", "idler"} {
		st := join(t, r, ev, v)
		if !st.Admitted {
			t.Fatalf("event %d: %s got %+v, want admitted to a free slot", ev.ID, v, st)
		}
		ends[v] = st.ExpiresAt
	}
	if err := r.Extend(t.Context(), ev.ID, "holder", time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if st := join(t, r, ev, "next"); !st.Queued {
		t.Fatalf("event %d: next got %+v, want queued behind full slots", ev.ID, st)
	}
	return ends
}

// TestHoldRacingLapseRestores: a hold whose admission check came just before the
// lapse lands after it; Extend then restores the admission, so that its slot counts
// again and its tokens stand: the buyer holds seats and pays with them.
func TestHoldRacingLapseRestores(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	ev := open(1, Settings{Slots: 1, Rate: 50, TokenTTL: time.Minute, Idle: 100 * time.Millisecond})
	r := newRoom(t, rdb, prefix, Hooks{Events: events(ev)}, Options{Tick: 20 * time.Millisecond})
	first := join(t, r, ev, "a")
	if !first.Admitted {
		t.Fatalf("a got %+v, want admitted", first)
	}
	stop := run(t, r)
	eventually(t, "a's admission lapsed", wait, func() bool { return endOf(t, r, ev.ID, "a", first.ExpiresAt) == Lapsed })
	stop()
	if err := r.Extend(t.Context(), ev.ID, "a", time.Now().Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if e := endOf(t, r, ev.ID, "a", first.ExpiresAt); e != Running {
		t.Errorf("a's token after its hold came: got end %v, want Running", e)
	}
	if st := status(t, r, ev, "a"); !st.Admitted || !st.ExpiresAt.After(first.ExpiresAt) {
		t.Errorf("a after its hold came: got %+v, want admitted until the hold's end", st)
	}
	if st := join(t, r, ev, "b"); st.Admitted {
		t.Errorf("b with a's slot taken again: got %+v, want queued", st)
	}
}

// TestETAFollowsLapses: three slots, full, with a long queue behind them; admissions
// last a minute. Where admissions lapse after a second for want of a hold, slots come
// back about three a second, and the board's wait per place is the time one takes to
// come back (1 / Returns), far below the control's, an event whose admissions do not
// lapse, where nothing comes back and each place waits for full slots turning over
// once a token lifetime (20 s).
func TestETAFollowsLapses(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	s := Settings{Slots: 3, Rate: 50, TokenTTL: time.Minute, Idle: time.Second}
	idle, control := open(1, s), open(2, s)
	control.Settings.Idle = time.Minute
	r := newRoom(t, rdb, prefix, Hooks{Events: events(idle, control)}, Options{Tick: 20 * time.Millisecond})
	for _, ev := range []Event{idle, control} {
		for i := range 60 {
			join(t, r, ev, visitor("v", i))
		}
	}
	run(t, r)
	eventually(t, "slots coming back where admissions lapse", wait, func() bool {
		b := board(t, r, idle)
		return b.Returns >= 1 && b.Waiting > 0
	})
	b := board(t, r, idle)
	if want := time.Duration(float64(time.Second) / b.Returns); (b.PerPlace - want).Abs() > time.Microsecond {
		t.Errorf("with lapses: %v a place at %.2f come back a second, want %v (one come back a place)", b.PerPlace, b.Returns, want)
	}
	eventually(t, "the control's come-back rate known", wait, func() bool { return board(t, r, control).Returns >= 0 })
	bc := board(t, r, control)
	if bc.Returns != 0 || bc.PerPlace != 20*time.Second {
		t.Errorf("control: %v a place at %.2f come back a second, want 20s (3 slots a minute) and none", bc.PerPlace, bc.Returns)
	}
	if b.PerPlace*10 > bc.PerPlace {
		t.Errorf("the wait a place with lapses %v, without %v: want a tenth or less", b.PerPlace, bc.PerPlace)
	}
	last, lastc := status(t, r, idle, visitor("v", 59)), status(t, r, control, visitor("v", 59))
	if !last.Queued || !lastc.Queued || last.ETA <= 0 || last.ETA*10 > lastc.ETA {
		t.Errorf("the last waiter's wait with lapses %v (%+v), without %v (%+v): want a tenth or less",
			last.ETA, last, lastc.ETA, lastc)
	}
}

// TestPaceRate: the queue's pace is the measured admission rate while a slot is free;
// with every slot taken, the rate at which admissions come back, never below full
// slots turning over once per token lifetime.
func TestPaceRate(t *testing.T) {
	t.Parallel()
	s := Settings{Slots: 100, Rate: 10, TokenTTL: 100 * time.Second}
	for _, c := range []struct {
		name     string
		measured float64
		back     float64
		active   int64
		want     float64
	}{
		{"a slot free", 8, 2, 99, 8},
		{"full, slots coming back", 8, 2, 100, 2},
		{"full, nothing back in the last minute: turnover", 0, 0, 100, 1},
		{"full, come-back rate unknown", 8, -1, 100, 8},
		{"no tick yet", 8, 2, -1, 8},
		{"paused (no slots)", 0, 2, 0, 0},
	} {
		ss := s
		if c.name == "paused (no slots)" {
			ss.Slots = 0
		}
		if got := paceRate(c.measured, c.back, c.active, ss); got != c.want {
			t.Errorf("%s: got %g, want %g", c.name, got, c.want)
		}
	}
}
