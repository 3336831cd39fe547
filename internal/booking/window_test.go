package booking

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// The sales window is moved by SQL on the database clock, never by the test's clock:
// each state is a set of event times relative to now().
type saleState struct {
	name   string
	update string // the SET list of an UPDATE on the event
}

var (
	beforeOnsale = saleState{"before the onsale", `onsale_at = now() + interval '1 hour', sales_close_at = NULL`}
	saleOpen     = saleState{"inside the window", `onsale_at = now() - interval '1 hour', sales_close_at = NULL`}
	saleClosed   = saleState{"after the close", `onsale_at = now() - interval '2 hours', sales_close_at = now() - interval '1 minute'`}
	// The close defaults to the start.
	saleStarted = saleState{"after the start", `onsale_at = now() - interval '2 hours', sales_close_at = NULL, starts_at = now() - interval '1 minute'`}
)

// setSale puts the event in a state of its sales window.
func (f fixture) setSale(t *testing.T, st saleState) {
	t.Helper()
	// Open the window wide first, so that no step of the move breaks the close > onsale check.
	if _, err := f.pool.Exec(t.Context(), `UPDATE events SET sales_close_at = NULL, starts_at = now() + interval '7 days' WHERE id = $1`, f.event); err != nil {
		t.Fatalf("reset the window: %v", err)
	}
	if _, err := f.pool.Exec(t.Context(), `UPDATE events SET `+st.update+` WHERE id = $1`, f.event); err != nil {
		t.Fatalf("move the window %s: %v", st.name, err)
	}
}

// onsaleAt reads the event's onsale time from the database.
func (f fixture) onsaleAt(t *testing.T) time.Time {
	t.Helper()
	var at time.Time
	if err := f.pool.QueryRow(t.Context(), `SELECT onsale_at FROM events WHERE id = $1`, f.event).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// state fingerprints every row of the event a sale can change.
func (f fixture) state(t *testing.T) string {
	t.Helper()
	var fp string
	err := f.pool.QueryRow(t.Context(), `SELECT concat_ws(' | ',
		(SELECT md5(coalesce(string_agg(s::text, ';' ORDER BY s.id), '')) FROM seats s WHERE s.event_id = $1),
		(SELECT md5(coalesce(string_agg(h::text, ';' ORDER BY h.id), '')) FROM holds h WHERE h.event_id = $1),
		(SELECT md5(coalesce(string_agg(g::text, ';' ORDER BY g.tier_id, g.stripe), '')) FROM ga_stripes g WHERE g.event_id = $1),
		(SELECT count(*) FROM hold_ga_places p WHERE p.event_id = $1),
		(SELECT md5(coalesce(string_agg(o::text, ';' ORDER BY o.id), '')) FROM orders o WHERE o.event_id = $1),
		(SELECT count(*) FROM tickets k WHERE k.event_id = $1))`, f.event).Scan(&fp)
	if err != nil {
		t.Fatalf("sale state: %v", err)
	}
	return fp
}

// checkRefusal checks that err is the refusal the state asks for, and that nothing
// changed.
func (f fixture) checkRefusal(t *testing.T, st saleState, err error, before string) {
	t.Helper()
	var notOnSale *NotOnSaleError
	switch st {
	case beforeOnsale:
		if !errors.As(err, &notOnSale) || !errors.Is(err, ErrNotOnSale) {
			t.Fatalf("%s: got %v, want a *NotOnSaleError", st.name, err)
		}
		if want := f.onsaleAt(t); !notOnSale.OnsaleAt.Equal(want) {
			t.Errorf("%s: got onsale %v, want the event's %v", st.name, notOnSale.OnsaleAt, want)
		}
	default:
		if !errors.Is(err, ErrSalesClosed) {
			t.Fatalf("%s: got %v, want ErrSalesClosed", st.name, err)
		}
	}
	if after := f.state(t); after != before {
		t.Errorf("%s: the refusal changed the event: %s -> %s", st.name, before, after)
	}
}

// windowSpec is a row of ten seats and four standing places.
func windowSpec() demo.EventSpec {
	return smallSpec([]demo.Section{oneRow("Floor", 10, 5000)},
		demo.GATier{Name: "Standing", PriceCents: 2000, Capacity: 4, Stripes: 2})
}

// windowHoldKinds are a hold of each kind on windowSpec's row of seats.
var windowHoldKinds = []struct {
	name string
	req  func(f fixture, seats []int64) HoldRequest
}{
	{"one exact seat", func(f fixture, seats []int64) HoldRequest { return HoldRequest{SeatIDs: seats[:1]} }},
	{"three exact seats", func(f fixture, seats []int64) HoldRequest { return HoldRequest{SeatIDs: seats[3:6]} }},
	{"best available", func(f fixture, seats []int64) HoldRequest { return HoldRequest{Quantity: 2, Together: true} }},
	{"general admission", func(f fixture, seats []int64) HoldRequest { return HoldRequest{GATierID: f.tier, Quantity: 3} }},
}

// TestSalesWindowHolds: every kind of hold is refused before the onsale and after the
// close (given, or the start), with nothing held, and the same request succeeds once
// the database's clock is inside the window.
func TestSalesWindowHolds(t *testing.T) {
	t.Parallel()
	for _, k := range windowHoldKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, windowSpec(), DefaultConfig())
			req := k.req(f, f.rowSeats(t, "Floor", "A"))
			req.EventID, req.Buyer = f.event, "ada"
			for _, st := range []saleState{beforeOnsale, saleClosed, saleStarted} {
				f.setSale(t, st)
				before := f.state(t)
				_, err := f.svc.Buyer.Hold(t.Context(), req)
				f.checkRefusal(t, st, err, before)
			}
			f.setSale(t, saleOpen)
			h, err := f.svc.Buyer.Hold(t.Context(), req)
			if err != nil {
				t.Fatalf("inside the window: got %v, want a hold", err)
			}
			if got := len(h.Seats); h.GA == nil && got != max(len(req.SeatIDs), req.Quantity) {
				t.Errorf("inside the window: got %d seats, want %d", got, max(len(req.SeatIDs), req.Quantity))
			}
		})
	}
}

// TestSalesWindowExactBatched: exact holds that arrive together run in one batch
// (batch.go); each is refused on its own by the window, and all succeed once it opens.
func TestSalesWindowExactBatched(t *testing.T) {
	t.Parallel()
	f := newFixture(t, windowSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	for _, st := range []saleState{beforeOnsale, saleOpen} {
		f.setSale(t, st)
		errs := make([]error, len(seats))
		atOnce(len(seats), func(i int) {
			_, errs[i] = f.svc.Buyer.Hold(context.Background(), HoldRequest{EventID: f.event, Buyer: buyerName("b", i), SeatIDs: seats[i : i+1]})
		})
		for i, err := range errs {
			switch {
			case st == beforeOnsale && !errors.Is(err, ErrNotOnSale):
				t.Errorf("%s, buyer %d: got %v, want ErrNotOnSale", st.name, i, err)
			case st == saleOpen && err != nil:
				t.Errorf("%s, buyer %d: got %v, want a hold", st.name, i, err)
			}
		}
		if st == beforeOnsale {
			if n := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1`, f.event); n != 0 {
				t.Errorf("%s: got %d holds, want none", st.name, n)
			}
		}
	}
}

// TestSalesWindowCheckoutAndPay: a hold made in time cannot be checked out, nor its
// order paid, outside the window (no order, no charge); inside it both work. A payment
// already taken is confirmed after the close.
func TestSalesWindowCheckoutAndPay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, windowSpec(), DefaultConfig())
	provider := newFakeProvider()
	f = f.withProvider(provider)
	seats := f.rowSeats(t, "Floor", "A")

	h := f.hold(t, "ada", seats[0], seats[1])
	// A basket with a voucher: its checkout's transaction does not end with the order
	// (the voucher's use follows), and is refused alike.
	f.voucher(t, "WINDOW", 0, voucherOpen)
	withVoucher := f.hold(t, "bob", seats[2])
	if err := f.svc.Buyer.SetVoucher(t.Context(), withVoucher.ID, "bob", "WINDOW"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []saleState{beforeOnsale, saleClosed, saleStarted} {
		f.setSale(t, st)
		before := f.state(t)
		_, err := f.svc.Buyer.Checkout(t.Context(), h.ID, "ada", "ada@example.com")
		f.checkRefusal(t, st, err, before)
		_, err = f.svc.Buyer.Checkout(t.Context(), withVoucher.ID, "bob", "bob@example.com")
		f.checkRefusal(t, st, err, before)
	}
	f.setSale(t, saleOpen)
	o := f.checkout(t, h, "ada")

	for _, st := range []saleState{beforeOnsale, saleClosed, saleStarted} {
		f.setSale(t, st)
		before := f.state(t)
		_, err := f.svc.Buyer.Pay(t.Context(), o.ID, "ada", PaymentMethod{Method: "4242 4242 4242 4242"})
		f.checkRefusal(t, st, err, before)
		if n, _ := provider.counts(); n != 0 {
			t.Fatalf("%s: got %d charges, want none", st.name, n)
		}
	}
	f.setSale(t, saleOpen)
	if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "ada", PaymentMethod{Method: "4242 4242 4242 4242"}); err != nil {
		t.Fatalf("pay inside the window: %v", err)
	}
	if n, _ := provider.counts(); n != 1 {
		t.Fatalf("inside the window: got %d charges, want 1", n)
	}

	// The webhook arrives after the close: the money was taken in time, so it sells.
	f.setSale(t, saleClosed)
	ev := provider.chargeOf(t, o.ID).event("evt_late", KindPaymentSucceeded)
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ev); err != nil || got != OutcomeConfirmed {
		t.Errorf("confirm after the close: got %q, %v, want %q", got, err, OutcomeConfirmed)
	}
	if n := f.soldTo(t, o.ID); n != 2 {
		t.Errorf("confirm after the close: got %d seats sold, want 2", n)
	}
}

// TestQueuedEvents: the admitter's list is the events with the room on whose sale is
// open or opens within the hour, by the database clock, with their settings.
func TestQueuedEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, windowSpec(), DefaultConfig())
	now := time.Now()
	queue := &demo.Queue{Slots: 40, Rate: 2.5, TokenTTL: 7 * time.Minute, Idle: 90 * time.Second}
	specs := map[string]struct {
		spec   demo.EventSpec
		queued bool
	}{
		"room-off-open":  {demo.EventSpec{OnsaleAt: now.Add(-time.Hour)}, false},
		"open":           {demo.EventSpec{OnsaleAt: now.Add(-time.Hour), Queue: queue}, true},
		"soon":           {demo.EventSpec{OnsaleAt: now.Add(30 * time.Minute), Queue: queue}, true},
		"later":          {demo.EventSpec{OnsaleAt: now.Add(3 * time.Hour), Queue: queue}, false},
		"closed":         {demo.EventSpec{OnsaleAt: now.Add(-2 * time.Hour), SalesCloseAt: now.Add(-time.Hour), Queue: queue}, false},
		"closes-later":   {demo.EventSpec{OnsaleAt: now.Add(-2 * time.Hour), SalesCloseAt: now.Add(time.Hour), Queue: queue}, true},
		"started":        {demo.EventSpec{OnsaleAt: now.Add(-2 * time.Hour), Queue: queue, StartsAt: now.Add(-time.Minute)}, false},
		"room-off-later": {demo.EventSpec{OnsaleAt: now.Add(30 * time.Minute)}, false},
	}
	want := map[string]bool{}
	for slug, s := range specs {
		spec := s.spec
		spec.Slug, spec.Name, spec.Venue = slug, "Event "+slug, "Hall"
		if spec.StartsAt.IsZero() {
			spec.StartsAt = now.Add(7 * 24 * time.Hour)
		}
		spec.Sections = []demo.Section{oneRow("Floor", 2, 1000)}
		if _, err := demo.Create(t.Context(), f.pool, spec); err != nil {
			t.Fatalf("create %s: %v", slug, err)
		}
		if s.queued {
			want[slug] = true
		}
	}
	events, err := f.svc.Buyer.QueuedEvents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for i, ev := range events {
		got[ev.Slug] = true
		if !ev.QueueEnabled || ev.QueueSlots != 40 || ev.QueueRate != 2.5 || ev.QueueTokenTTL != 7*time.Minute || ev.QueueIdle != 90*time.Second {
			t.Errorf("%s: got room %v, %d slots, %g/s, token %v, idle %v; want on, 40, 2.5/s, 7m, 1m30s",
				ev.Slug, ev.QueueEnabled, ev.QueueSlots, ev.QueueRate, ev.QueueTokenTTL, ev.QueueIdle)
		}
		if i > 0 && ev.OnsaleAt.Before(events[i-1].OnsaleAt) {
			t.Errorf("%s: listed after a later onsale", ev.Slug)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestEventWindowAndRoom: an event's sales close is its start unless set, and its room
// is off with the schema's defaults unless turned on.
func TestEventWindowAndRoom(t *testing.T) {
	t.Parallel()
	f := newFixture(t, windowSpec(), DefaultConfig())
	ev, err := f.svc.Buyer.Event(t.Context(), f.event)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.SalesCloseAt.Equal(ev.StartsAt) {
		t.Errorf("sales close: got %v, want the start %v", ev.SalesCloseAt, ev.StartsAt)
	}
	if ev.QueueEnabled || ev.QueueSlots != 500 || ev.QueueRate != 50 || ev.QueueTokenTTL != 15*time.Minute || ev.QueueIdle != 3*time.Minute {
		t.Errorf("room: got %v, %d slots, %g/s, token %v, idle %v; want off, 500, 50/s, 15m, 3m",
			ev.QueueEnabled, ev.QueueSlots, ev.QueueRate, ev.QueueTokenTTL, ev.QueueIdle)
	}
	closeAt := ev.StartsAt.Add(-time.Hour)
	if _, err := f.pool.Exec(t.Context(), `UPDATE events SET sales_close_at = $2 WHERE id = $1`, f.event, closeAt); err != nil {
		t.Fatal(err)
	}
	bySlug, err := f.svc.Buyer.EventBySlug(t.Context(), ev.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if !bySlug.SalesCloseAt.Equal(closeAt) {
		t.Errorf("sales close once set: got %v, want %v", bySlug.SalesCloseAt, closeAt)
	}
	list, err := f.svc.Buyer.Events(t.Context())
	if err != nil || len(list) != 1 || !list[0].SalesCloseAt.Equal(closeAt) {
		t.Errorf("listed: got %+v (%v), want one event closing at %v", list, err, closeAt)
	}
}
