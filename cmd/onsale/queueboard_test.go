package main

import (
	"testing"
	"time"
)

// TestFromBoardAddsTheNotice: between its looks a page's wait is the wait of the
// places ahead and its own, as the board gives it, and the board's notice (how long
// after its turn the page learns of it); with everything held there is none.
func TestFromBoardAddsTheNotice(t *testing.T) {
	t.Parallel()
	place := 150.0
	st := queueJSON{Number: 100, Position: 60, Place: &place}
	looked := time.Now().Add(-time.Second)
	bd := &queueBoardSeen{queueBoardJSON: queueBoardJSON{Served: 50, Head: 90, SecondsPerPlace: 0.1, SecondsPerPlaceMin: 0.08, NoticeSeconds: 1.5}, at: time.Now()}
	if eta, _, n, _, ok := fromBoard(st, looked, bd); !ok || eta != 7 || n != 50 { // 50 places × 0.1 s + 1.5 s
		t.Errorf("50 places at 0.1 s and a notice of 1.5 s: got %d s for %d places (ok %v), want 7 s for 50", eta, n, ok)
	}
	held := *bd
	held.AllHeld = true
	if eta, _, _, _, ok := fromBoard(st, looked, &held); !ok || eta != 0 {
		t.Errorf("everything held: got %d s (ok %v), want none", eta, ok)
	}
}

// TestFromBoardLikelyGone: a page whose places (its own included) are beyond the
// board's lastsFor shows that the tickets may be gone, and no wait; at or within it,
// or with lastsFor unknown (-1) or missing (an older server), its wait.
func TestFromBoardLikelyGone(t *testing.T) {
	t.Parallel()
	place := 150.0
	st := queueJSON{Number: 100, Position: 60, Place: &place}
	looked := time.Now().Add(-time.Second)
	for _, c := range []struct {
		lastsFor int // -2: missing
		gone     bool
	}{{-2, false}, {-1, false}, {50, false}, {49, true}, {0, true}} {
		bd := &queueBoardSeen{queueBoardJSON: queueBoardJSON{Served: 50, Head: 90, SecondsPerPlace: 0.1, SecondsPerPlaceMin: 0.08,
			NoticeSeconds: 1.5}, at: time.Now()}
		if c.lastsFor > -2 {
			bd.LastsFor = &c.lastsFor
		}
		eta, _, n, gone, ok := fromBoard(st, looked, bd)
		want := 7 // 50 places × 0.1 s + 1.5 s
		if c.gone {
			want = 0
		}
		if !ok || n != 50 || gone != c.gone || eta != want {
			t.Errorf("50 places, lastsFor %v: got gone %v, %d s for %d places (ok %v); want gone %v, %d s", c.lastsFor, gone, eta, n, ok, c.gone, want)
		}
	}
}

// TestFromBoardPlacesADrawnPage: after the draw a pre-queue page with no number yet
// stands among the board's drawn places as its place among uniform draws; before the
// first admission (head -1) from 0, after it from the head. Without drawn places on
// the board it keeps what its look said.
func TestFromBoardPlacesADrawnPage(t *testing.T) {
	t.Parallel()
	place := 0.5
	st := queueJSON{PreQueue: true, Place: &place, EtaSeconds: 99}
	looked := time.Now().Add(-time.Second)
	seen := func(head float64, drawn int) *queueBoardSeen {
		return &queueBoardSeen{queueBoardJSON: queueBoardJSON{Head: head, Drawn: drawn, SecondsPerPlace: 0.1, SecondsPerPlaceMin: 0.08, NoticeSeconds: 1.5}, at: time.Now()}
	}
	for _, c := range []struct {
		head       float64
		drawn      int
		eta, place int
	}{
		{-1, 101, 7, 51},  // 100 others, half below 0.5: 51 places, 5.1 s + 1.5 s
		{0.2, 101, 5, 39}, // of 100 others above 0.2, 37.5 below 0.5: 38.5 places, 3.85 s + 1.5 s
		{0.6, 40, 2, 1},   // its turn has come: its own place, and the notice
		{-1, 0, 99, 0},    // no drawn places on the board: what its look said
	} {
		eta, _, n, _, ok := fromBoard(st, looked, seen(c.head, c.drawn))
		if !ok || eta != c.eta || n != c.place {
			t.Errorf("head %v, %d drawn: got %d s for %d places (ok %v), want %d s for %d", c.head, c.drawn, eta, n, ok, c.eta, c.place)
		}
	}
}

// TestMustLookAtTheDraw: at the draw a pre-queue page with a drawn place does not look
// (it stands among the board's drawn places, and looks when the server said or at its
// turn); with no drawn places on the board it looks within drawJitter for its number;
// at its turn, at once.
func TestMustLookAtTheDraw(t *testing.T) {
	t.Parallel()
	place := 0.5
	st := queueJSON{PreQueue: true, Place: &place}
	board := func(head float64, drawn int) *queueBoardSeen {
		return &queueBoardSeen{queueBoardJSON: queueBoardJSON{Head: head, Drawn: drawn, Waiting: 100}, at: time.Now()}
	}
	for _, c := range []struct {
		name   string
		bd     *queueBoardSeen
		now    bool
		spread time.Duration
	}{
		{"drawn places on the board", board(-1, 100), false, 0},
		{"no drawn places on the board", board(-1, 0), false, drawJitter},
		{"its turn", board(0.6, 40), true, 0},
	} {
		if now, spread := mustLook(st, c.bd); now != c.now || spread != c.spread {
			t.Errorf("%s: got look now %v, within %v; want %v, %v", c.name, now, spread, c.now, c.spread)
		}
	}
	// Placed by the board, the page shows sold out from it (and the buyer goes, as
	// one with its number does); not placed, it needs a look for that.
	soldOut := board(-1, 100)
	soldOut.SoldOut = true
	if !onBoard(st, soldOut) || onBoard(st, board(-1, 0)) {
		t.Errorf("on the board: with drawn places %v, without %v; want true, false", onBoard(st, soldOut), onBoard(st, board(-1, 0)))
	}
	if now, spread := mustLook(st, soldOut); now || spread != 0 {
		t.Errorf("sold out, placed by the board: got look now %v, within %v; want no look", now, spread)
	}
}

// TestFrontPace: the simulated door page reads the board as door.js does: every
// second near its turn and before the first board, a quarter of its shortest wait
// further back (rounded up to whole seconds), every 5 s at most and with no figure;
// the pre-queue until the draw.
func TestFrontPace(t *testing.T) {
	draw := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	board := func(at time.Duration, perMin float64) *queueBoardSeen {
		bd := &queueBoardSeen{}
		bd.At, bd.DrawAt, bd.OpensAt = draw.Add(at), draw, draw.Add(2*time.Second)
		bd.GroupSpanSeconds, bd.SecondsPerPlaceMin, bd.NoticeSeconds, bd.PreQueueCount = 1, perMin, 1.5, 1000
		return bd
	}
	pre := board(-20*time.Second, 0.008)
	pre.PreQueue = true
	soon := board(-2500*time.Millisecond, 0.008)
	soon.PreQueue = true
	passed := board(30*time.Second, 0.008)
	passed.CursorGroup, passed.Passed = 6, 4000
	sold := board(30*time.Second, 0.008)
	sold.SoldOut = true
	for _, tc := range []struct {
		name string
		p    placeJSON
		bd   *queueBoardSeen
		want time.Duration
	}{
		{"no board yet", placeJSON{Group: 5}, nil, time.Second},
		{"pre-queue, the draw 20 s off", placeJSON{Group: 0, Tiebreak: 0.5}, pre, 5 * time.Second},
		{"pre-queue, the draw 2.5 s off", placeJSON{Group: 0, Tiebreak: 0.5}, soon, 3 * time.Second},
		{"far back", placeJSON{queueJSON: queueJSON{Number: 3000}, Group: 5}, board(3*time.Second, 0.008), 5 * time.Second},
		// 800 ahead at 8 ms: 6.4 s, a quarter of it 1.6 s, read again in 2.
		{"some way back", placeJSON{queueJSON: queueJSON{Number: 800}, Group: 5}, board(3*time.Second, 0.008), 2 * time.Second},
		{"next", placeJSON{queueJSON: queueJSON{Number: 2}, Group: 5}, board(7*time.Second, 0.008), time.Second},
		{"passed", placeJSON{queueJSON: queueJSON{Number: 3000}, Group: 3}, passed, time.Second},
		{"no figure", placeJSON{queueJSON: queueJSON{Number: 10}, Group: 5}, board(3*time.Second, 0), 5 * time.Second},
		{"sold out", placeJSON{queueJSON: queueJSON{Number: 5000}, Group: 5}, sold, 5 * time.Second},
	} {
		if got := tc.p.pace(tc.bd); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
