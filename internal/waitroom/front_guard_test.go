package waitroom

import (
	"errors"
	"math"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// TestFrontRedisStoppedThenBackEmpty: while Redis is down, arrivals still get their
// places (counted in memory, the flush failing and keeping them), claims fail with
// ErrUnavailable and an admission token still verifies. Redis comes back empty: the
// kept counts go with the next flush, the board shows a new epoch, the places of the
// old one are counted again under it with their groups and tiebreaks, and the cursor
// passes them all.
func TestFrontRedisStoppedThenBackEmpty(t *testing.T) {
	t.Parallel()
	srv, rdb, port := privateRedis(t)
	opt := frontOptions
	opt.Regroup, opt.Timeout, opt.ClaimWindow = 300*time.Millisecond, 500*time.Millisecond, time.Hour
	r := New(rdb, "test:", []Key{testKey}, Hooks{}, quiet, opt)
	ctx := t.Context()
	ev := Event{ID: 21, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 5, Rate: 1000}}
	b0 := tickUntil(t, r, ev, "the room's state", func(b Board) bool { return b.Epoch != "" })
	var places []Place
	for range 30 {
		p, _ := r.Arrive(ev, b0)
		places = append(places, p)
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b := tickUntil(t, r, ev, "the slots' worth passed", func(b Board) bool { return b.Passed >= 4.5 })
	var shopper Place
	for _, p := range places {
		if p.Passed(b) {
			shopper = p
			break
		}
	}
	st, err := r.Claim(ctx, ev, shopper, "shopper", "")
	if err != nil || !st.Admitted {
		t.Fatalf("claim: got %+v, %v", st, err)
	}

	srv.Stop()
	for range 5 {
		// The board cannot be read: the place knows no epoch (web's takePlace).
		p, tok := r.Arrive(ev, Board{})
		if _, err := r.VerifyPlace(tok, ev.ID); err != nil {
			t.Fatalf("a place given while Redis is down: %v", err)
		}
		places = append(places, p)
	}
	if err := r.Flush(ctx); err == nil {
		t.Fatal("Flush with Redis down: got no error")
	}
	if _, err := r.Claim(ctx, ev, places[0], "v0", ""); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Claim with Redis down: got %v, want ErrUnavailable", err)
	}
	if _, err := r.Verify(st.Token, ev.ID, "shopper"); err != nil {
		t.Errorf("Verify with Redis down: got %v, want the token accepted", err)
	}

	srv = dbtest.StartRedisServer(t, port)
	t.Cleanup(srv.Stop)
	eventually(t, "the kept counts flushed", wait, func() bool { return r.Flush(ctx) == nil })
	ev.Settings.Slots = 1000
	b1 := tickUntil(t, r, ev, "a new epoch", func(b Board) bool { return b.Epoch != "" && b.Epoch != b0.Epoch })
	if b1.Counted != 5 {
		t.Errorf("after the restart: got %d counted, want the 5 kept through the outage", b1.Counted)
	}
	for i, p := range places {
		q, _ := r.Recount(p, "", b1)
		if q.Group != p.Group || q.Tiebreak != p.Tiebreak || q.Epoch != b1.Epoch {
			t.Errorf("recounted place %d: got %+v from %+v, want its group and tiebreak under epoch %q", i, q, p, b1.Epoch)
		}
		places[i] = q
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	last := places[0]
	for _, p := range places {
		if p.Group > last.Group || p.Group == last.Group && p.Tiebreak > last.Tiebreak {
			last = p
		}
	}
	b = tickUntil(t, r, ev, "every place passed", last.Passed)
	// The 30 places of the old epoch counted again, the 5 given during the outage
	// counted once (kept through it, then taking the new epoch without a count).
	if b.Counted != 35 {
		t.Errorf("after the recount: got %d counted, want 35", b.Counted)
	}
}

// TestFrontStockStops: with nothing left (sold out) or everything held, the cursor
// does not move; with the stock unknown (the negative control) it does.
func TestFrontStockStops(t *testing.T) {
	t.Parallel()
	r, _, _ := frontRoom(t, nil)
	ev := Event{ID: 22, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 100, Rate: 1000}}
	for range 20 {
		r.Arrive(ev, Board{})
	}
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, stock := range []Stock{{Unsold: 0, Free: 0}, {Unsold: 10, Free: 0}} {
		for range 10 {
			if err := r.tickEvent(t.Context(), ev, stock); err != nil {
				t.Fatal(err)
			}
		}
		if b, err := r.Board(t.Context(), ev); err != nil || b.Passed != 0 {
			t.Errorf("stock %+v: the cursor passed %.1f (%v), want none", stock, b.Passed, err)
		}
	}
	if err := r.tickEvent(t.Context(), ev, Stock{Unsold: 10, Free: 10}); err != nil {
		t.Fatal(err)
	}
	tickUntil(t, r, ev, "the cursor moves with stock to sell", func(b Board) bool { return b.Passed > 0 })
}

// TestFrontOneAdmitter: while one instance holds the event's fence, another's cursor
// tick does nothing.
func TestFrontOneAdmitter(t *testing.T) {
	t.Parallel()
	r1, rdb, prefix := frontRoom(t, nil)
	r2 := newRoom(t, rdb, prefix, Hooks{}, frontOptions)
	ev := Event{ID: 23, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 100, Rate: 1000}}
	r1.Arrive(ev, Board{})
	if err := r1.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := r1.tickEvent(t.Context(), ev, unknownStock); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r2.tickFront(t.Context(), ev); ok || err != nil {
		t.Errorf("a second instance's cursor tick while the first holds the fence: got ok %v, %v; want refused", ok, err)
	}
	if _, ok, err := r1.tickFront(t.Context(), ev); !ok || err != nil {
		t.Errorf("the fence holder's cursor tick: got ok %v, %v; want done", ok, err)
	}
}

// TestFrontGoverned: under the latency governor the cursor keeps to the governed rate,
// the bucket being the same: the first tick of a fresh room passes the governed
// bucket's worth (a tenth of the rate) where, the negative control, an ungoverned
// room passes the configured rate's.
func TestFrontGoverned(t *testing.T) {
	t.Parallel()
	for _, share := range []float64{0.1, 1} {
		r, _, _ := frontRoom(t, nil)
		r.gov.bits.Store(math.Float64bits(share))
		ev := Event{ID: 24, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 10000, Rate: 100}}
		for range 1000 {
			r.Arrive(ev, Board{})
		}
		if err := r.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		lev := r.limitedEvent(ev)
		b := tickUntil(t, r, lev, "a first pass", func(b Board) bool { return b.Passed > 0 })
		most := r.bucketCap(lev.Settings) + 1
		switch {
		case share < 1 && b.Passed > most:
			t.Errorf("governed to %g: the first tick passed %.0f, want at most %.0f", share, b.Passed, most)
		case share == 1 && b.Passed < 50:
			t.Errorf("ungoverned: the first tick passed %.0f, want the rate's bucket (100)", b.Passed)
		}
	}
}
