package waitroom

import (
	"testing"
	"time"
)

// TestPlaceWait: a place's wait on the board is its position's worth of the wait a
// place, counted from when the cursor opens (the pre-queue at the draw waits out the
// settle first), no sooner than its group's opening, and the notice; none while the
// board has no figure or once the place has passed.
func TestPlaceWait(t *testing.T) {
	t.Parallel()
	draw := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	board := func(at time.Duration, per time.Duration) Board {
		return Board{At: draw.Add(at), DrawAt: draw, OpensAt: draw.Add(2 * time.Second), GroupSpan: time.Second,
			PerPlaceMin: per * 8 / 10, PerPlace: per, PerPlaceMax: per * 5 / 4, Notice: Notice, PreCount: 1000, Counted: 5000,
			LastsFor: -1}
	}
	passed := board(ms(30000), ms(10))
	passed.CursorGroup, passed.Passed = 4, 4000
	paused := board(ms(500), 0)
	for _, tc := range []struct {
		name  string
		place Place
		b     Board
		want  time.Duration
	}{
		// 500 ahead of 1,000 drawn: 501 places at 10 ms from the cursor's opening 1.5 s on.
		{"pre-queue at the draw", Place{Group: 0, Tiebreak: 0.5}, board(ms(500), ms(10)), ms(1500 + 5010 + 1500)},
		// The cursor opened: nothing to wait out but the places.
		{"pre-queue, the cursor open", Place{Group: 0, Tiebreak: 0.5}, board(ms(3000), ms(10)), ms(5010 + 1500)},
		// Two ahead, but group 5 opens at 7 s: 4 s from the board's 3 s.
		{"few ahead, its group not open", Place{Group: 5, Number: 2}, board(ms(3000), ms(10)), ms(4000 + 1500)},
		// 3,000 ahead at 10 ms: 30 s, long after its group opens.
		{"far back", Place{Group: 5, Number: 3000}, board(ms(3000), ms(10)), ms(30010 + 1500)},
		{"passed", Place{Group: 3, Number: 3000}, passed, 0},
		{"no figure", Place{Group: 0, Tiebreak: 0.5}, paused, 0},
	} {
		lo, est, hi := tc.place.Wait(tc.b)
		if est != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, est, tc.want)
		}
		if !(lo <= est && est <= hi) || tc.want > time.Minute/2 && !(lo < est && est < hi) {
			t.Errorf("%s: bounds %v–%v, want around %v", tc.name, lo, hi, est)
		}
	}
}

// TestPlacePollAfter: the door page reads the board every second while its turn (or
// the draw) may come within a few, a quarter of its shortest wait further back, and
// every MaxPoll at most; every second once passed, every MaxPoll with no figure.
func TestPlacePollAfter(t *testing.T) {
	t.Parallel()
	draw := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	board := func(at, per time.Duration) Board {
		return Board{At: draw.Add(at), DrawAt: draw, OpensAt: draw.Add(2 * time.Second), GroupSpan: time.Second,
			PerPlaceMin: per * 8 / 10, PerPlace: per, PerPlaceMax: per * 5 / 4, Notice: Notice, PreCount: 1000, Counted: 5000,
			LastsFor: -1}
	}
	pre := board(-20*time.Second, 10*time.Millisecond)
	pre.PreQueue = true
	soon := board(-2500*time.Millisecond, 10*time.Millisecond)
	soon.PreQueue = true
	passed := board(30*time.Second, 10*time.Millisecond)
	passed.CursorGroup, passed.Passed = 4, 4000
	sold := board(30*time.Second, 10*time.Millisecond)
	sold.SoldOut = true
	for _, tc := range []struct {
		name  string
		place Place
		b     Board
		want  time.Duration
	}{
		{"pre-queue, the draw 20 s off", Place{Group: 0, Tiebreak: 0.5}, pre, MaxPoll},
		{"pre-queue, the draw 2.5 s off", Place{Group: 0, Tiebreak: 0.5}, soon, 2500 * time.Millisecond},
		// 3,000 ahead at 8 ms at the fastest: 24 s, a quarter of it past MaxPoll.
		{"far back", Place{Group: 5, Number: 3000}, board(3*time.Second, 10*time.Millisecond), MaxPoll},
		// 800 ahead at 8 ms: 6.4 s, a quarter of it 1.6 s.
		{"some way back", Place{Group: 5, Number: 800}, board(3*time.Second, 10*time.Millisecond), 1602 * time.Millisecond},
		{"next", Place{Group: 5, Number: 2}, board(7*time.Second, 10*time.Millisecond), MinPoll},
		{"passed", Place{Group: 3, Number: 3000}, passed, MinPoll},
		{"no figure", Place{Group: 5, Number: 10}, board(3*time.Second, 0), MaxPoll},
		{"sold out", Place{Group: 5, Number: 5000}, sold, MaxPoll},
	} {
		if got := tc.place.PollAfter(tc.b); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPlaceNumberCountsFlushes: a place's number counts every arrival its instance has
// learned of, though the board the caller read is older: its own flushed, another
// instance's flushed before its own flush, and its own not yet flushed. The board
// alone (the old count, the negative control) would number the place 0.
func TestPlaceNumberCountsFlushes(t *testing.T) {
	t.Parallel()
	r1, rdb, prefix := frontRoom(t, nil)
	r2 := newRoom(t, rdb, prefix, Hooks{}, frontOptions)
	ev := Event{ID: 17, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 10, Rate: 1}}
	stale, err := r1.Board(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		r2.Arrive(ev, stale)
	}
	if err := r2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		r1.Arrive(ev, stale)
	}
	if err := r1.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 7 {
		r1.Arrive(ev, stale)
	}
	if p, _ := r1.Arrive(ev, stale); p.Number != 157 || stale.Counted != 0 {
		t.Errorf("a place after 157 arrivals, on a board of %d: got number %d, want 157", stale.Counted, p.Number)
	}
}
