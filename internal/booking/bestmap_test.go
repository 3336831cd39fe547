package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"boxoffice/internal/catalog"
	"boxoffice/internal/demo"
)

// loadMap loads the event's seat map into the service's cache, as a viewer's request
// does; best available then chooses from it.
func (f fixture) loadMap(t *testing.T) {
	t.Helper()
	if _, err := f.svc.Maps.SeatMap(t.Context(), f.event); err != nil {
		t.Fatalf("seat map: %v", err)
	}
}

// TestBestAvailableFarRow: 150 rows of 4 seats, seats 2 and 4 held in every row but
// the last. Only the last row can seat two together, and it lies beyond the 128 best
// rows with a free seat: best available must find it, from the map and from the
// database alike.
func TestBestAvailableFarRow(t *testing.T) {
	t.Parallel()
	for _, fromMap := range []bool{false, true} {
		t.Run(fmt.Sprintf("map=%v", fromMap), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, smallSpec([]demo.Section{
				{Name: "Deep", Rows: 150, SeatsPerRow: 4, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 3000}}},
			}), DefaultConfig())
			last := catalog.RowLabel(149)
			ids := f.ids(t, `SELECT id FROM seats WHERE event_id = $1 AND number IN (2, 4) AND row_label <> $2 ORDER BY id`, f.event, last)
			if len(ids) != 2*149 {
				t.Fatalf("got %d seats to hold, want %d", len(ids), 2*149)
			}
			for i := 0; i < len(ids); i += 10 {
				f.hold(t, buyerName("x", i), ids[i:min(i+10, len(ids))]...)
			}
			if fromMap {
				f.loadMap(t)
			}
			h, err := f.bestHold(t, "a", 2, "", true)
			if err != nil {
				t.Fatalf("2 together with one row able to seat them: got %v, want that row", err)
			}
			checkTogether(t, h.Seats, 2)
			if h.Seats[0].Row != last {
				t.Errorf("got row %s, want %s", h.Seats[0].Row, last)
			}
			if got, want := f.svc.store.bestFromMap.Load(), map[bool]int64{false: 0, true: 1}[fromMap]; got != want {
				t.Errorf("holds chosen from the map: got %d, want %d", got, want)
			}
		})
	}
}

// TestBestAvailableMapLeavesOutChangedSeats: a map read before seats were taken still
// shows them free. Seats taken through the service are noted as changed, and best
// available chooses around them at the first try; seats taken behind its back (in SQL)
// cost it a failed claim, and it still gets the next best. The second half shows the
// miss count can fail.
func TestBestAvailableMapLeavesOutChangedSeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Main", 40, 5000)}), DefaultConfig())
	row := f.rowSeats(t, "Main", "A")
	f.loadMap(t)

	// The middle of the row is best (TestBestAvailableDemo): 19-22 of 40.
	f.hold(t, "first", row[18:22]...)
	h, err := f.bestHold(t, "second", 4, "", true)
	if err != nil {
		t.Fatalf("best 4: %v", err)
	}
	checkTogether(t, h.Seats, 4)
	if got, want := f.svc.store.bestMapMisses.Load(), int64(0); got != want {
		t.Errorf("after seats taken through the service: got %d failed claims, want %d", got, want)
	}
	if got := f.svc.store.bestFromMap.Load(); got != 1 {
		t.Errorf("holds chosen from the map: got %d, want 1", got)
	}

	// Now the seats the map would offer first go behind the service's back.
	taken := map[int64]bool{}
	for _, s := range h.Seats {
		taken[s.ID] = true
	}
	f.loadMap(t)
	tries, usable := f.svc.store.mapChoices(HoldRequest{EventID: f.event, Quantity: 4, Together: true}, nil)
	if !usable || len(tries) == 0 {
		t.Fatalf("the map's choices: got %v (usable %v), want some", tries, usable)
	}
	next := tries[0]
	for _, id := range next {
		if taken[id] {
			t.Fatalf("the map offers seat %d, held by the second buyer", id)
		}
	}
	if _, err := f.pool.Exec(t.Context(), `UPDATE seats SET held_by = $2, hold_expires_at = now() + interval '10 minutes'
		WHERE event_id = $1 AND id = ANY($3)`, f.event, h.ID.Seq, next); err != nil {
		t.Fatalf("take seats in SQL: %v", err)
	}
	h2, err := f.bestHold(t, "third", 4, "", true)
	if err != nil {
		t.Fatalf("best 4 after seats taken in SQL: %v", err)
	}
	checkTogether(t, h2.Seats, 4)
	for _, s := range h2.Seats {
		if taken[s.ID] || slices.Contains(next, s.ID) {
			t.Errorf("seat %d given twice", s.ID)
		}
	}
	if got := f.svc.store.bestMapMisses.Load(); got != 1 {
		t.Errorf("after seats taken behind the service's back: got %d failed claims, want 1", got)
	}
	// Give those seats back, so that the fixture's checks find every held seat in a
	// hold of the right size.
	if _, err := f.pool.Exec(t.Context(), `UPDATE seats SET held_by = NULL, hold_expires_at = NULL
		WHERE event_id = $1 AND id = ANY($2)`, f.event, next); err != nil {
		t.Fatalf("give back: %v", err)
	}
}

// TestBestAvailableMapNeverSaysSoldOut: a map read while everything was held shows no
// seat; a hold that lapses since is free, and best available, finding nothing on the
// map, asks the database and gets it.
func TestBestAvailableMapNeverSaysSoldOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Main", 4, 5000)}), DefaultConfig())
	h := f.hold(t, "first", f.rowSeats(t, "Main", "A")...)
	f.loadMap(t)
	f.lapse(t, h.ID) // in SQL: the service hears nothing
	got, err := f.bestHold(t, "second", 4, "", true)
	if err != nil {
		t.Fatalf("best 4 with a lapsed hold of 4 and a map showing none: got %v, want the 4", err)
	}
	checkTogether(t, got.Seats, 4)
	if n := f.svc.store.bestFromMap.Load(); n != 0 {
		t.Errorf("holds chosen from the map: got %d, want 0 (the map showed none)", n)
	}
	if _, err := f.bestHold(t, "third", 1, "", false); !errors.Is(err, ErrSoldOut) {
		t.Errorf("one more: got %v, want ErrSoldOut", err)
	}
}

// TestBestAvailableFromMapTakesNoTurn: with every best-available turn of the event
// taken (searches under way), a hold the map can seat goes ahead without one; the
// same hold on an event without a usable map waits for a turn (the control: the
// turns are really taken).
func TestBestAvailableFromMapTakesNoTurn(t *testing.T) {
	t.Parallel()
	for _, fromMap := range []bool{true, false} {
		t.Run(fmt.Sprintf("map=%v", fromMap), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, smallSpec([]demo.Section{oneRow("Main", 40, 5000)}), DefaultConfig())
			req := HoldRequest{EventID: f.event, Buyer: "quick", Quantity: 2, Together: true}
			for range bestTurns {
				_, done, err := f.svc.store.bestTurn(t.Context(), req)
				if err != nil {
					t.Fatalf("take a turn: %v", err)
				}
				defer done()
			}
			if fromMap {
				f.loadMap(t)
			}
			// Long enough for a transaction on a loaded machine; waiting for a turn
			// never ends while the test holds them.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			h, err := f.svc.Buyer.Hold(ctx, req)
			switch {
			case fromMap && err != nil:
				t.Fatalf("best 2 from the map with the turns taken: %v, want the seats at once", err)
			case fromMap:
				checkTogether(t, h.Seats, 2)
				if n := f.svc.store.bestFromMap.Load(); n != 1 {
					t.Errorf("holds chosen from the map: got %d, want 1", n)
				}
			case !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("best 2 without a map, the turns taken: got %v (%d seats), want it to wait for a turn", err, len(h.Seats))
			}
		})
	}
}

// TestChooseFromMapDisjoint: holds choosing from the map at the same moment get
// different seats (each leaves out what the others are claiming), and so does a
// turn's look at the map; seats let go of are offered again.
func TestChooseFromMapDisjoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Main", 40, 5000)}), DefaultConfig())
	f.loadMap(t)
	req := HoldRequest{EventID: f.event, Buyer: "x", Quantity: 4, Together: true}
	a, releaseA := f.svc.store.chooseFromMap(req)
	b, releaseB := f.svc.store.chooseFromMap(req)
	if a == nil || b == nil {
		t.Fatalf("choices: %v and %v, want two", a, b)
	}
	defer releaseB()
	for _, id := range b {
		if slices.Contains(a, id) {
			t.Fatalf("two holds choosing at once both got seat %d: %v and %v", id, a, b)
		}
	}
	// The turn's look at the map (holdBestFromMap) leaves them out too.
	tries, usable := f.svc.store.mapChoices(req, nil)
	if !usable || len(tries) == 0 {
		t.Fatalf("the turn's choices: %v (usable %v), want some", tries, usable)
	}
	for _, try := range tries {
		for _, id := range try {
			if slices.Contains(a, id) || slices.Contains(b, id) {
				t.Fatalf("the turn's look offers seat %d, being claimed: %v", id, try)
			}
		}
	}
	releaseA()
	c, releaseC := f.svc.store.chooseFromMap(req)
	defer releaseC()
	if !slices.Equal(c, a) {
		t.Errorf("after the first let go: got %v, want its seats, the best, again: %v", c, a)
	}
}
