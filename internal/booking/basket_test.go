package booking

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// basketSpec has 40 seats and 20 standing places in two areas.
func basketSpec() demo.EventSpec {
	return smallSpec([]demo.Section{oneRow("Floor", 40, 5000)},
		demo.GATier{Name: "Standing", PriceCents: 2000, Capacity: 20, Stripes: 4},
		demo.GATier{Name: "Balcony", PriceCents: 3000, Capacity: 10, Stripes: 2})
}

// holdRow reads a hold's seat_count and expiry, and how many seats hold it now.
func (f fixture) holdRow(t *testing.T, id HoldID) (seatCount, seatsHeld int, expires time.Time) {
	t.Helper()
	err := f.pool.QueryRow(t.Context(), `
		SELECT h.seat_count, (SELECT count(*) FROM seats s WHERE s.event_id = h.event_id AND s.held_by = h.id AND seat_is_held(s))::int, h.expires_at
		FROM holds h WHERE h.event_id = $1 AND h.id = $2`, id.Event, id.Seq).Scan(&seatCount, &seatsHeld, &expires)
	if err != nil {
		t.Fatalf("hold %s: %v", id, err)
	}
	return seatCount, seatsHeld, expires
}

// TestBasketAddSeats: seats added to a hold join it with its expiry, never a later
// one, its seat_count follows, and the live maps hear of the added seats; the seat
// page's basket is that one hold.
func TestBasketAddSeats(t *testing.T) {
	t.Parallel()
	f, rec := newFixture(t, basketSpec(), DefaultConfig()).listening()
	seats := f.rowSeats(t, "Floor", "A")
	h := f.hold(t, "ann", seats[0])
	rec.take()
	// The next seats would lapse later if they were a hold of their own.
	f.svc.store.cfg.HoldTTL = time.Hour
	got, err := f.svc.Buyer.AddSeats(t.Context(), h.ID, HoldRequest{Buyer: "ann", SeatIDs: []int64{seats[1], seats[2]}})
	if err != nil {
		t.Fatalf("add seats: %v", err)
	}
	if got.ID != h.ID || !got.ExpiresAt.Equal(h.ExpiresAt) {
		t.Errorf("got hold %s until %v, want %s until %v", got.ID, got.ExpiresAt, h.ID, h.ExpiresAt)
	}
	if ids := sortedIDs(got.Seats); !slices.Equal(ids, seats[:3]) {
		t.Errorf("got seats %v, want %v", ids, seats[:3])
	}
	if n := f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND held_by = $2 AND hold_expires_at = $3`,
		f.event, h.ID.Seq, h.ExpiresAt); n != 3 {
		t.Errorf("seats with the hold's expiry: got %d, want 3", n)
	}
	if count, held, exp := f.holdRow(t, h.ID); count != 3 || held != 3 || !exp.Equal(h.ExpiresAt) {
		t.Errorf("hold row: got seat_count %d, %d seats held, until %v; want 3, 3, %v", count, held, exp, h.ExpiresAt)
	}
	if a := rec.take(); !slices.Equal(a, []int64{seats[1], seats[2]}) {
		t.Errorf("announced %v, want %v", a, seats[1:3])
	}
	basket, found, err := f.svc.Buyer.Basket(t.Context(), f.event, "ann")
	if err != nil || !found || basket.ID != h.ID {
		t.Errorf("basket: got %s found %v err %v, want %s", basket.ID, found, err, h.ID)
	}
	// Asking again for seats the hold has changes nothing.
	again, err := f.svc.Buyer.AddSeats(t.Context(), h.ID, HoldRequest{Buyer: "ann", SeatIDs: []int64{seats[1]}})
	if err != nil || len(again.Seats) != 3 {
		t.Errorf("add a seat the hold has: got %d seats, err %v; want 3, nil", len(again.Seats), err)
	}
}

// TestBasketAddToBasket: the seat page's adds (exact seats, best available, standing
// places) all join the buyer's one basket; a second standing area is refused.
func TestBasketAddToBasket(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	first, err := f.svc.Buyer.AddToBasket(t.Context(), HoldRequest{EventID: f.event, Buyer: "bo", SeatIDs: seats[:1]})
	if err != nil {
		t.Fatalf("open the basket: %v", err)
	}
	steps := []HoldRequest{
		{EventID: f.event, Buyer: "bo", SeatIDs: seats[5:6]},
		{EventID: f.event, Buyer: "bo", Quantity: 2},
		{EventID: f.event, Buyer: "bo", GATierID: f.tier, Quantity: 2},
		{EventID: f.event, Buyer: "bo", GATierID: f.tier, Quantity: 1},
	}
	var h Hold
	for i, req := range steps {
		if h, err = f.svc.Buyer.AddToBasket(t.Context(), req); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if h.ID != first.ID || !h.ExpiresAt.Equal(first.ExpiresAt) {
			t.Fatalf("step %d: got hold %s until %v, want %s until %v", i, h.ID, h.ExpiresAt, first.ID, first.ExpiresAt)
		}
	}
	if len(h.Seats) != 4 || h.GA == nil || h.GA.Quantity != 3 {
		t.Errorf("basket: got %d seats and %+v, want 4 seats and 3 places", len(h.Seats), h.GA)
	}
	if n := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1 AND buyer = 'bo' AND hold_is_live(holds)`, f.event); n != 1 {
		t.Errorf("live holds of the buyer: got %d, want 1", n)
	}
	if count, held, _ := f.holdRow(t, first.ID); count != 4 || held != 4 {
		t.Errorf("hold row: got seat_count %d and %d seats held, want 4 and 4", count, held)
	}
	var other int64
	f.pool.QueryRow(t.Context(), `SELECT id FROM ga_tiers WHERE event_id = $1 AND name = 'Balcony'`, f.event).Scan(&other)
	if _, err := f.svc.Buyer.AddToBasket(t.Context(), HoldRequest{EventID: f.event, Buyer: "bo", GATierID: other, Quantity: 1}); !errors.Is(err, ErrOtherTier) {
		t.Errorf("a second standing area: got %v, want ErrOtherTier", err)
	}
	o := f.checkout(t, h, "bo")
	if want := 4*5000 + 3*2000; o.AmountCents != want {
		t.Errorf("order amount: got %d, want %d", o.AmountCents, want)
	}
	f.pay(t, o, "evt_basket")
	if n := f.count(t, `SELECT count(*) FROM tickets WHERE order_id = $1 AND voided_at IS NULL`, o.ID); n != 7 {
		t.Errorf("tickets: got %d, want 7", n)
	}
}

// TestBasketLimit: the buyer's limit counts the seats being added with everything the
// buyer has, in the same statement; nothing is added past it.
func TestBasketLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	h := f.hold(t, "cy", seats[:4]...)
	f.hold(t, "cy", seats[4:8]...) // another hold of the buyer counts too
	_, err := f.svc.Buyer.AddSeats(t.Context(), h.ID, HoldRequest{Buyer: "cy", SeatIDs: seats[8:11]})
	wantLimit(t, "add past the limit", err)
	if count, held, _ := f.holdRow(t, h.ID); count != 4 || held != 4 {
		t.Errorf("hold row after the refusal: got seat_count %d and %d seats held, want 4 and 4", count, held)
	}
	if _, err := f.svc.Buyer.AddSeats(t.Context(), h.ID, HoldRequest{Buyer: "cy", SeatIDs: seats[8:10]}); err != nil {
		t.Errorf("add up to the limit: %v", err)
	}
}

// TestBasketRefusals: a hold of another buyer, a lapsed one and one whose checkout
// began take no seat and give none back; a taken seat makes the whole add fail.
func TestBasketRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	h := f.hold(t, "di", seats[0])
	f.hold(t, "other", seats[1])
	add := func(id HoldID, buyer string, ids ...int64) error {
		_, err := f.svc.Buyer.AddSeats(t.Context(), id, HoldRequest{Buyer: buyer, SeatIDs: ids})
		return err
	}
	if err := add(h.ID, "eve", seats[2]); !errors.Is(err, ErrHoldNotFound) {
		t.Errorf("another buyer's hold: got %v, want ErrHoldNotFound", err)
	}
	var taken *SeatsUnavailableError
	if err := add(h.ID, "di", seats[2], seats[1]); !errors.As(err, &taken) || !slices.Equal(taken.SeatIDs, seats[1:2]) {
		t.Errorf("a taken seat: got %v, want seat %d unavailable", err, seats[1])
	}
	if _, err := f.svc.Buyer.RemoveSeat(t.Context(), h.ID, "di", seats[1]); !errors.Is(err, ErrSeatNotInHold) {
		t.Errorf("remove a seat of another hold: got %v, want ErrSeatNotInHold", err)
	}
	f.checkout(t, h, "di")
	if err := add(h.ID, "di", seats[2]); !errors.Is(err, ErrCheckoutBegun) {
		t.Errorf("after checkout: got %v, want ErrCheckoutBegun", err)
	}
	if _, err := f.svc.Buyer.RemoveSeat(t.Context(), h.ID, "di", seats[0]); !errors.Is(err, ErrCheckoutBegun) {
		t.Errorf("remove after checkout: got %v, want ErrCheckoutBegun", err)
	}
	if st := f.seatStatus(t, seats[2]); st != SeatAvailable {
		t.Errorf("seat asked for by the refused adds: got %s, want %s", st, SeatAvailable)
	}
	// Adding to the page's basket now opens a new one: the checked-out hold is fixed.
	b, err := f.svc.Buyer.AddToBasket(t.Context(), HoldRequest{EventID: f.event, Buyer: "di", SeatIDs: seats[2:3]})
	if err != nil || b.ID == h.ID {
		t.Errorf("basket after checkout: got %s, %v; want a new hold", b.ID, err)
	}
	f.lapse(t, b.ID)
	if err := add(b.ID, "di", seats[3]); !errors.Is(err, ErrHoldExpired) {
		t.Errorf("lapsed hold: got %v, want ErrHoldExpired", err)
	}
}

// TestBasketRemoveSeat: removing a seat frees that seat alone, announced to the live
// maps; the hold keeps the others and its expiry, and a hold emptied is released.
func TestBasketRemoveSeat(t *testing.T) {
	t.Parallel()
	f, rec := newFixture(t, basketSpec(), DefaultConfig()).listening()
	seats := f.rowSeats(t, "Floor", "A")
	h := f.hold(t, "flo", seats[:3]...)
	rec.take()
	released, err := f.svc.Buyer.RemoveSeat(t.Context(), h.ID, "flo", seats[1])
	if err != nil || released {
		t.Fatalf("remove: released %v, err %v; want false, nil", released, err)
	}
	if a := rec.take(); !slices.Equal(a, seats[1:2]) {
		t.Errorf("announced %v, want %v", a, seats[1:2])
	}
	if st := f.seatStatus(t, seats[1]); st != SeatAvailable {
		t.Errorf("removed seat: got %s, want %s", st, SeatAvailable)
	}
	if count, held, exp := f.holdRow(t, h.ID); count != 2 || held != 2 || !exp.Equal(h.ExpiresAt) {
		t.Errorf("hold row: got seat_count %d, %d held, until %v; want 2, 2, %v", count, held, exp, h.ExpiresAt)
	}
	if _, err := f.svc.Buyer.RemoveSeat(t.Context(), h.ID, "flo", seats[1]); !errors.Is(err, ErrSeatNotInHold) {
		t.Errorf("remove it again: got %v, want ErrSeatNotInHold", err)
	}
	if _, err := f.svc.Buyer.RemoveSeat(t.Context(), h.ID, "gus", seats[0]); !errors.Is(err, ErrHoldNotFound) {
		t.Errorf("another buyer: got %v, want ErrHoldNotFound", err)
	}
	for _, id := range []int64{seats[0], seats[2]} {
		if released, err = f.svc.Buyer.RemoveSeat(t.Context(), h.ID, "flo", id); err != nil {
			t.Fatalf("remove %d: %v", id, err)
		}
	}
	if !released {
		t.Errorf("emptied hold: released false, want true")
	}
	if _, found, _ := f.svc.Buyer.Basket(t.Context(), f.event, "flo"); found {
		t.Errorf("basket after emptying it: found, want none")
	}
}

// TestBasketCheckoutBegunMeanwhile: a checkout that begins on the basket while an add
// waits for the hold's row lock (the add found the basket before the order existed)
// sends the added seats into a new hold, as the message of ErrCheckoutBegun promises,
// and leaves the ordered hold as its order has it.
func TestBasketCheckoutBegunMeanwhile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	h := f.hold(t, "cy", seats[0])
	checkout, err := f.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer checkout.Rollback(context.Background()) //nolint:errcheck // committed below
	if _, err := checkout.Exec(t.Context(), `SELECT 1 FROM holds WHERE event_id = $1 AND id = $2 FOR UPDATE`, f.event, h.ID.Seq); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		h   Hold
		err error
	}
	added := make(chan answer, 1)
	go func() {
		got, err := f.svc.Buyer.AddToBasket(context.Background(), HoldRequest{EventID: f.event, Buyer: "cy", SeatIDs: seats[1:2]})
		added <- answer{got, err}
	}()
	eventually(t, "the add waiting for the hold's row", 10*time.Second, func() bool {
		return f.count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) == 1
	})
	if _, err := checkout.Exec(t.Context(), `INSERT INTO orders (event_id, hold_id, buyer, email, seat_ids, amount_cents)
		VALUES ($1, $2, 'cy', 'cy@example.com', $3, 5000)`, f.event, h.ID.Seq, seats[:1]); err != nil {
		t.Fatal(err)
	}
	if err := checkout.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	a := <-added
	if a.err != nil {
		t.Fatalf("add while the checkout began: %v, want the seat in a new hold", a.err)
	}
	if a.h.ID == h.ID || !slices.Equal(sortedIDs(a.h.Seats), seats[1:2]) {
		t.Errorf("got hold %s with seats %v, want a new hold with %v", a.h.ID, sortedIDs(a.h.Seats), seats[1:2])
	}
	if count, held, _ := f.holdRow(t, h.ID); count != 1 || held != 1 {
		t.Errorf("the ordered hold: seat_count %d, %d seats held; want 1 and 1", count, held)
	}
}
