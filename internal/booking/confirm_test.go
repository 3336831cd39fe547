package booking

import (
	"fmt"
	"sync/atomic"
	"testing"

	"boxoffice/internal/db"
	"boxoffice/internal/demo"
)

// confirmSpec is a row of ten seats and a small GA tier.
func confirmSpec() demo.EventSpec {
	return smallSpec([]demo.Section{oneRow("Floor", 10, 5000)},
		demo.GATier{Name: "Standing", PriceCents: 2000, Capacity: 6, Stripes: 2})
}

// ticketCount counts an order's valid tickets, of seats and of GA places.
func (f fixture) ticketCount(t *testing.T, orderID int64) (seats, ga int) {
	t.Helper()
	err := f.pool.QueryRow(t.Context(), `
		SELECT count(seat_id)::int, count(ga_tier_id)::int FROM tickets
		WHERE event_id = $1 AND order_id = $2 AND voided_at IS NULL`, f.event, orderID).Scan(&seats, &ga)
	if err != nil {
		t.Fatalf("tickets of order %d: %v", orderID, err)
	}
	return seats, ga
}

// soldTo counts the seats sold to an order.
func (f fixture) soldTo(t *testing.T, orderID int64) int {
	t.Helper()
	return f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND order_id = $2`, f.event, orderID)
}

// TestApplyPaymentIdempotent: a success event confirms its order once, whether it comes
// again later or twenty copies arrive at once; another event for the same order, a
// second success or a failure, changes nothing once the order is confirmed.
func TestApplyPaymentIdempotent(t *testing.T) {
	t.Parallel()

	t.Run("same event five times in a row", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		o := f.checkout(t, f.hold(t, "a", seats[0], seats[1]), "a")
		for i := range 5 {
			want := OutcomeDuplicate
			if i == 0 {
				want = OutcomeConfirmed
			}
			if got := f.pay(t, o, "evt_1"); got != want {
				t.Errorf("delivery %d: got %q, want %q", i+1, got, want)
			}
		}
		if s, ga := f.ticketCount(t, o.ID); s != 2 || ga != 0 {
			t.Errorf("tickets: got %d seat and %d GA, want 2 and 0", s, ga)
		}
		got, err := f.svc.Buyer.Order(t.Context(), o.ID, "a")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != StatusConfirmed || len(got.Tickets) != len(got.Seats) || len(got.Seats) != 2 {
			t.Errorf("order: got status %s, %d seats, %d tickets, want confirmed, 2, 2", got.Status, len(got.Seats), len(got.Tickets))
		}
	})

	t.Run("twenty copies at once", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		o := f.checkout(t, f.hold(t, "a", seats[:3]...), "a")
		var confirmed, duplicate atomic.Int64
		var errs errorCounter
		atOnce(20, func(int) {
			out, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", paid(o, "evt_1"))
			switch {
			case err != nil:
				errs.add(err)
			case out == OutcomeConfirmed:
				confirmed.Add(1)
			case out == OutcomeDuplicate:
				duplicate.Add(1)
			default:
				errs.add(fmt.Errorf("got outcome %q, want confirmed or duplicate", out))
			}
		})
		errs.report(t, "concurrent deliveries")
		if confirmed.Load() != 1 || duplicate.Load() != 19 {
			t.Errorf("got %d confirmed and %d duplicate, want 1 and 19", confirmed.Load(), duplicate.Load())
		}
		if s, _ := f.ticketCount(t, o.ID); s != 3 {
			t.Errorf("tickets: got %d, want 3", s)
		}
	})

	// Twenty payments for one order: one sells it, and each of the others, money
	// taken for nothing, is refunded (one refund each).
	t.Run("twenty distinct success events at once", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		o := f.checkout(t, f.hold(t, "a", seats[0]), "a")
		var confirmed, refunded atomic.Int64
		var errs errorCounter
		atOnce(20, func(i int) {
			out, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", paid(o, fmt.Sprintf("evt_%d", i)))
			switch {
			case err != nil:
				errs.add(err)
			case out == OutcomeConfirmed:
				confirmed.Add(1)
			case out == OutcomeRefundDue:
				refunded.Add(1)
			default:
				errs.add(fmt.Errorf("got outcome %q, want confirmed or refund_due", out))
			}
		})
		errs.report(t, "concurrent events")
		if confirmed.Load() != 1 || refunded.Load() != 19 {
			t.Errorf("got %d confirmed and %d refund_due, want 1 and 19", confirmed.Load(), refunded.Load())
		}
		if n := f.count(t, `SELECT count(*) FROM refunds WHERE order_id = $1 AND reason = 'already_paid'`, o.ID); n != 19 {
			t.Errorf("refunds: got %d, want 19", n)
		}
	})

	t.Run("later events change nothing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		o := f.checkout(t, f.hold(t, "a", seats[0], seats[1]), "a")
		if got := f.pay(t, o, "evt_1"); got != OutcomeConfirmed {
			t.Fatalf("first success: got %q, want %q", got, OutcomeConfirmed)
		}
		var before string
		if err := f.pool.QueryRow(t.Context(), `SELECT confirmed_at::text FROM orders WHERE id = $1`, o.ID).Scan(&before); err != nil {
			t.Fatal(err)
		}

		// A second payment sells nothing: it is refunded, and the order stands.
		if got := f.pay(t, o, "evt_2"); got != OutcomeRefundDue {
			t.Errorf("second success: got %q, want %q", got, OutcomeRefundDue)
		}
		failed := PaymentEvent{ID: "evt_3", Kind: KindPaymentFailed, PaymentID: "pi_evt_1", OrderID: o.ID, EventID: o.EventID, AmountCents: int64(o.AmountCents)}
		if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", failed); err != nil || got != OutcomeIgnored {
			t.Errorf("failure after success: got %q, %v, want %q", got, err, OutcomeIgnored)
		}
		if st, reason := f.orderStatus(t, o.ID); st != StatusConfirmed || reason != "" {
			t.Errorf("order: got %s (%s), want confirmed", st, reason)
		}
		var after string
		if err := f.pool.QueryRow(t.Context(), `SELECT confirmed_at::text FROM orders WHERE id = $1`, o.ID).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if after != before {
			t.Errorf("confirmed_at: got %s, want %s (unchanged)", after, before)
		}
		if s, _ := f.ticketCount(t, o.ID); s != 2 || f.soldTo(t, o.ID) != 2 {
			t.Errorf("got %d tickets and %d seats sold, want 2 and 2", s, f.soldTo(t, o.ID))
		}
	})

	t.Run("failure then success", func(t *testing.T) {
		t.Parallel()
		provider := newFakeProvider()
		f := newFixture(t, confirmSpec(), DefaultConfig()).withProvider(provider)
		o := f.checkout(t, f.hold(t, "a", f.rowSeats(t, "Floor", "A")[0]), "a")
		if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "a", PaymentMethod{Method: "card"}); err != nil {
			t.Fatalf("pay: %v", err)
		}
		failed := provider.chargeOf(t, o.ID).event("evt_1", KindPaymentFailed)
		if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", failed); err != nil || got != OutcomeFailed {
			t.Errorf("failure: got %q, %v, want %q", got, err, OutcomeFailed)
		}
		if st, reason := f.orderStatus(t, o.ID); st != StatusPending || reason != "payment_failed" {
			t.Errorf("after the failure: got %s (%s), want pending (payment_failed)", st, reason)
		}
		// The claim is free: the buyer pays again, and that payment sells.
		if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "a", PaymentMethod{Method: "card"}); err != nil {
			t.Fatalf("pay again: %v", err)
		}
		ok := provider.chargeOf(t, o.ID).event("evt_2", KindPaymentSucceeded)
		if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ok); err != nil || got != OutcomeConfirmed {
			t.Errorf("success after a failure: got %q, %v, want %q", got, err, OutcomeConfirmed)
		}
	})

	t.Run("event of another show", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		o := f.checkout(t, f.hold(t, "a", f.rowSeats(t, "Floor", "A")[0]), "a")
		ev := paid(o, "evt_1")
		ev.EventID++
		if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ev); err != nil || got != OutcomeIgnored {
			t.Errorf("got %q, %v, want %q", got, err, OutcomeIgnored)
		}
		if st, _ := f.orderStatus(t, o.ID); st != StatusPending {
			t.Errorf("order: got %s, want pending", st)
		}
	})
}

// TestApplyPaymentAmountMismatch: a payment for another amount than the order's sells
// nothing: the order waits for its refund and its seats stay merely held.
func TestApplyPaymentAmountMismatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, confirmSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	o := f.checkout(t, f.hold(t, "a", seats[0], seats[1]), "a")
	ev := paid(o, "evt_1")
	ev.AmountCents--
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ev); err != nil || got != OutcomeRefundPending {
		t.Fatalf("got %q, %v, want %q", got, err, OutcomeRefundPending)
	}
	if st, reason := f.orderStatus(t, o.ID); st != StatusRefundPending || reason != "amount_mismatch" {
		t.Errorf("order: got %s (%s), want refund_pending (amount_mismatch)", st, reason)
	}
	if n := f.soldTo(t, o.ID); n != 0 {
		t.Errorf("seats sold: got %d, want 0", n)
	}
	if s, ga := f.ticketCount(t, o.ID); s+ga != 0 {
		t.Errorf("tickets: got %d, want 0", s+ga)
	}
	// The right amount afterwards does not revive it (the order only moves forward):
	// it is refunded too.
	if got := f.pay(t, o, "evt_2"); got != OutcomeRefundDue {
		t.Errorf("correct payment after the mismatch: got %q, want %q", got, OutcomeRefundDue)
	}
	if n := f.count(t, `SELECT count(*) FROM refunds WHERE order_id = $1`, o.ID); n != 2 {
		t.Errorf("refunds: got %d, want 2 (one per payment)", n)
	}
}

// TestApplyPaymentGA: a GA order gets one ticket per place. A GA hold that lapsed and
// whose places the tidy-up gave back is taken again on payment if places remain, and
// goes to refund_pending (sold_out) if they do not.
func TestApplyPaymentGA(t *testing.T) {
	t.Parallel()
	holdGA := func(t *testing.T, f fixture, buyer string, qty int) Hold {
		t.Helper()
		h, err := f.holdGA(t, buyer, qty)
		if err != nil {
			t.Fatalf("GA hold of %d for %s: %v", qty, buyer, err)
		}
		return h
	}
	lapseAndTidy := func(t *testing.T, f fixture, id HoldID) {
		t.Helper()
		f.lapse(t, id)
		res, err := f.svc.Worker.Tidy(t.Context())
		if err != nil {
			t.Fatalf("tidy: %v", err)
		}
		if res.GAHolds != 1 {
			t.Fatalf("tidy gave back %d GA holds, want 1", res.GAHolds)
		}
	}

	t.Run("live hold", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		o := f.checkout(t, holdGA(t, f, "a", 3), "a")
		if o.AmountCents != 3*2000 {
			t.Errorf("amount: got %d, want %d", o.AmountCents, 3*2000)
		}
		if got := f.pay(t, o, "evt_1"); got != OutcomeConfirmed {
			t.Fatalf("got %q, want %q", got, OutcomeConfirmed)
		}
		if s, ga := f.ticketCount(t, o.ID); s != 0 || ga != 3 {
			t.Errorf("tickets: got %d seat and %d GA, want 0 and 3", s, ga)
		}
		if got := f.gaRemaining(t, f.tier); got != 3 {
			t.Errorf("places left: got %d, want 3", got)
		}
	})

	t.Run("lapsed, tidied, places remain", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		o := f.checkout(t, holdGA(t, f, "a", 3), "a")
		lapseAndTidy(t, f, o.HoldID)
		if got := f.gaRemaining(t, f.tier); got != 6 {
			t.Fatalf("places left after the tidy-up: got %d, want 6", got)
		}
		if got := f.pay(t, o, "evt_1"); got != OutcomeConfirmed {
			t.Fatalf("got %q, want %q", got, OutcomeConfirmed)
		}
		if got := f.gaRemaining(t, f.tier); got != 3 {
			t.Errorf("places left: got %d, want 3", got)
		}
		if _, ga := f.ticketCount(t, o.ID); ga != 3 {
			t.Errorf("tickets: got %d, want 3", ga)
		}
	})

	t.Run("lapsed, tidied, sold out", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		o := f.checkout(t, holdGA(t, f, "a", 3), "a")
		lapseAndTidy(t, f, o.HoldID)
		holdGA(t, f, "b", 4) // leaves 2, fewer than A's 3
		if got := f.pay(t, o, "evt_1"); got != OutcomeRefundPending {
			t.Fatalf("got %q, want %q", got, OutcomeRefundPending)
		}
		if st, reason := f.orderStatus(t, o.ID); st != StatusRefundPending || reason != "sold_out" {
			t.Errorf("order: got %s (%s), want refund_pending (sold_out)", st, reason)
		}
		if got := f.gaRemaining(t, f.tier); got != 2 {
			t.Errorf("places left: got %d, want 2 (nothing taken for A)", got)
		}
		if _, ga := f.ticketCount(t, o.ID); ga != 0 {
			t.Errorf("tickets: got %d, want 0", ga)
		}
	})

	t.Run("lapsed, not tidied", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, confirmSpec(), DefaultConfig())
		o := f.checkout(t, holdGA(t, f, "a", 3), "a")
		f.lapse(t, o.HoldID) // its places were never given back: they are still A's
		if got := f.pay(t, o, "evt_1"); got != OutcomeConfirmed {
			t.Fatalf("got %q, want %q", got, OutcomeConfirmed)
		}
		if got := f.gaRemaining(t, f.tier); got != 3 {
			t.Errorf("places left: got %d, want 3", got)
		}
		res, err := f.svc.Worker.Tidy(t.Context())
		if err != nil || res.GAHolds != 0 {
			t.Errorf("tidy after the sale: got %d GA holds given back, %v, want 0", res.GAHolds, err)
		}
	})
}

// TestOrderConfirmOnlyPending: OrderConfirm confirms a pending order and marks its hold
// sold; an order in another state (here expired) stays as it is, and so does its hold.
// Each confirmation is rolled back: it sells no seats, which a sale does beside it.
func TestOrderConfirmOnlyPending(t *testing.T) {
	t.Parallel()
	f := newFixture(t, confirmSpec(), Config{})
	seats := f.rowSeats(t, "Floor", "A")
	confirm := func(h Hold, o Order) (status string, holdSold bool) {
		t.Helper()
		ctx := t.Context()
		tx, err := f.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := db.New(tx).OrderConfirm(ctx, db.OrderConfirmParams{ID: o.ID, EventID: h.ID.Event, HoldID: h.ID.Seq}); err != nil {
			t.Fatal(err)
		}
		err = tx.QueryRow(ctx, `SELECT o.status::text, h.sold_at IS NOT NULL FROM orders o JOIN holds h ON h.event_id = o.event_id AND h.id = o.hold_id
			WHERE o.id = $1`, o.ID).Scan(&status, &holdSold)
		if err != nil {
			t.Fatal(err)
		}
		return status, holdSold
	}

	h := f.hold(t, "expired-buyer", seats[0])
	o := f.checkout(t, h, "expired-buyer")
	if _, err := f.pool.Exec(t.Context(), `UPDATE orders SET status = 'expired' WHERE id = $1`, o.ID); err != nil {
		t.Fatal(err)
	}
	if st, sold := confirm(h, o); st != "expired" || sold {
		t.Errorf("an expired order confirmed: status %s, hold sold %v; want expired and the hold not sold", st, sold)
	}

	h = f.hold(t, "pending-buyer", seats[1])
	o = f.checkout(t, h, "pending-buyer")
	if st, sold := confirm(h, o); st != "confirmed" || !sold {
		t.Errorf("a pending order confirmed: status %s, hold sold %v; want confirmed and the hold sold", st, sold)
	}
}
