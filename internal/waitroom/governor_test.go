package waitroom

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// TestGovernorLaw: the share of the configured rate falls by a fifth when the load is
// at or past 1 (not twice within govCutGap), rises by a hundredth while it is below
// govEasy and by four under govIdle, holds between, and stays within [govFloor, 1];
// it reads the load once a period.
func TestGovernorLaw(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	g := &governor{}
	type step struct {
		after time.Duration // since t0
		load  float64
		want  float64
	}
	steps := []step{
		{0, 0.1, 1},                         // easy at the ceiling: stays
		{1 * time.Second, 2, 0.8},           // past the bound: cut
		{10 * time.Second, 2, 0.8},          // again within the gap: held
		{11 * time.Second, 2, 0.64},         // the gap has passed: cut
		{11500 * time.Millisecond, 0, 0.64}, // within the period: not read
		{12 * time.Second, 0.9, 0.64},       // near the bound: held
		{13 * time.Second, 0.5, 0.65},       // easy: a hundredth back
		{14 * time.Second, 0.5, 0.66},       // and another
		{15 * time.Second, 0.34, 0.70},      // far below the bound: four hundredths
		{16 * time.Second, 0.35, 0.71},      // at govIdle: one again
		{21 * time.Second, 1, 0.568},        // at the bound, the gap passed: cut
	}
	for _, s := range steps {
		share, _, _ := g.step(t0.Add(s.after), func() float64 { return s.load })
		if math.Abs(share-s.want) > 1e-9 {
			t.Fatalf("at +%v with load %v: share %v, want %v", s.after, s.load, share, s.want)
		}
	}
	at := t0.Add(10 * time.Second)
	for range 40 { // overloaded for long: never below the floor
		at = at.Add(govCutGap)
		g.step(at, func() float64 { return 100 })
	}
	if got := g.now(); got != govFloor {
		t.Errorf("after long overload: share %v, want the floor %v", got, govFloor)
	}
	for range 200 { // easy for long: back to the configured rate, never above
		at = at.Add(govPeriod)
		g.step(at, func() float64 { return 0 })
	}
	if got := g.now(); got != 1 {
		t.Errorf("after long ease: share %v, want 1", got)
	}
	if share, _, changed := g.step(at.Add(time.Hour), nil); share != 1 || changed {
		t.Errorf("no load hook: share %v (changed %v), want 1 unchanged", share, changed)
	}
}

// TestGovernedRoomAdmitsAtItsShare: with the governor at a quarter (and the load
// between govEasy and 1, so that it holds there), the room admits at a quarter of the
// configured 40 a second, its bucket is a quarter as deep, and the queue's and the
// board's waits before any rate is measured are four times as long.
func TestGovernedRoomAdmitsAtItsShare(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	const rate, share, span = 40.0, 0.25, 6 * time.Second
	settings := Settings{Enabled: true, Slots: 1000, Rate: rate, TokenTTL: time.Minute}
	var cur movable
	hooks := Hooks{Events: cur.events, Load: func() float64 { return 0.9 }}
	r := newRoom(t, rdb, prefix, hooks, Options{})
	r.gov.set(share)
	if got := r.Limited(settings).Rate; got != rate*share {
		t.Fatalf("limited rate %v, want %v", got, rate*share)
	}
	ev := preQueued(t, rdb, r, Event{ID: 1, Settings: settings}, 200)

	// Before the draw nothing is measured: the waits are the limited rate's.
	b, err := r.Board(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Second / (rate * share); b.PerPlace != want {
		t.Errorf("board before the draw: %v a place, want %v (the governed rate's)", b.PerPlace, want)
	}
	if b.Notice != Notice {
		t.Errorf("board before the draw: notice %v, want %v", b.Notice, Notice)
	}

	cur.set(ev)
	rec := &admissions{}
	r.onAdmit = rec.hook("r")
	run(t, r)
	end := ev.OnsaleAt.Add(span)
	eventually(t, "6 s of admissions", span+wait, func() bool { return !redisNow(t, rdb).Before(end) })
	got := float64(between(rec.all(), ev.OnsaleAt, end)) / span.Seconds()
	if want := rate * share; math.Abs(got-want) > 0.15*want {
		t.Errorf("got %.2f admissions/s, want %.0f ± 15%% (a quarter of %.0f)", got, want, rate)
	}
	t.Logf("%.2f admissions/s at a share of %v of %.0f/s", got, share, rate)
}

// TestGovernorFollowsTheLoad: a running room cuts its rate once its load hook says
// the application is past its bound, and climbs back towards the configured rate once
// it says the application is well within it.
func TestGovernorFollowsTheLoad(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	settings := Settings{Enabled: true, Slots: 10, Rate: 20}
	var level atomic.Value
	level.Store(3.0)
	r := newRoom(t, rdb, prefix, Hooks{
		Events: events(Event{ID: 1, Settings: settings}),
		Load:   func() float64 { return level.Load().(float64) },
	}, Options{Tick: 20 * time.Millisecond})
	run(t, r)
	eventually(t, "a cut", wait, func() bool { return r.Limited(settings).Rate < settings.Rate })
	level.Store(0.2)
	cut := r.Limited(settings).Rate
	eventually(t, "a climb", wait, func() bool { return r.Limited(settings).Rate > cut })
}

// TestExpectedShare: the share the queue's waits assume is halfway between the share
// now and its mean over the next minute if the governor climbs back by govRaise a
// second; at the configured rate, the configured rate. Limited gives it as the
// expected rate beside the present one.
func TestExpectedShare(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ now, want float64 }{
		{1, 1},
		{0.8, (0.8 + (0.9*20+40)/60) / 2}, // back in 20 s: the mean over a minute is 0.967
		{0.2, (0.2 + 0.5) / 2},            // 0.8 back at 0.01 a second takes 80 s: 0.2 to 0.8 in the minute
	} {
		if got := expectedShare(c.now); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("share %v now: expected %v, want %v", c.now, got, c.want)
		}
	}
	rdb, prefix := dbtest.Redis(t)
	r := newRoom(t, rdb, prefix, Hooks{}, Options{})
	r.gov.set(0.8)
	got := r.Limited(Settings{Rate: 50})
	if got.Rate != 40 || math.Abs(got.expect-50*expectedShare(0.8)) > 1e-9 {
		t.Errorf("limited at 0.8 of 50/s: rate %v, expected %v; want 40 and %v", got.Rate, got.expect, 50*expectedShare(0.8))
	}
}
