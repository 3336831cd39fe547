package booking

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/live"
)

// validTickets returns an order's valid ticket ids, oldest first.
func (f fixture) validTickets(t *testing.T, orderID int64) []int64 {
	t.Helper()
	return f.ids(t, `SELECT id FROM tickets WHERE event_id = $1 AND order_id = $2 AND voided_at IS NULL ORDER BY id`, f.event, orderID)
}

// TestStaffRefundPartialThenWhole: staff refund one of three seats, then the rest.
// The first leaves the order confirmed with two tickets and its payment kept, refunded
// in part; the second ends the order refunded, its payment refunded in full. Each time
// the seats are free at once, the refund is its tickets' prices, and every seat and
// money invariant holds once the jobs ran. A ticket refunded already cannot be
// refunded again, and that refusal changes nothing.
func TestStaffRefundPartialThenWhole(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")[:3]
	o := f.checkout(t, f.hold(t, "a", seats...), "a")
	if got := f.pay(t, o, "evt_a"); got != OutcomeConfirmed {
		t.Fatalf("pay: got %q, want confirmed", got)
	}
	tickets := f.validTickets(t, o.ID)
	if len(tickets) != 3 {
		t.Fatalf("got %d tickets, want 3", len(tickets))
	}

	res, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[:1], Kind: KindRefund})
	if err != nil {
		t.Fatalf("partial refund: %v", err)
	}
	if res.Whole || res.AmountCents != 5000 || len(res.SeatIDs) != 1 || res.Status != StatusConfirmed {
		t.Errorf("partial refund: got %+v, want one seat, 5000 cents, order confirmed", res)
	}
	if f.soldTo(t, o.ID) != 2 || f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND id = $2 AND sold_at IS NULL`, f.event, res.SeatIDs[0]) != 1 {
		t.Errorf("after the partial refund: got %d seats sold to the order and the refunded one not free, want 2 and free", f.soldTo(t, o.ID))
	}
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
	if st := f.count(t, `SELECT count(*) FROM payments WHERE order_id = $1 AND state = 'succeeded'`, o.ID); st != 1 {
		t.Errorf("after the partial refund: %d succeeded payments, want the one kept", st)
	}

	before := f.count(t, `SELECT count(*) FROM refunds WHERE order_id = $1`, o.ID)
	_, err = f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[:2], Kind: KindRefund})
	var unavailable *TicketsUnavailableError
	if !errors.As(err, &unavailable) || len(unavailable.TicketIDs) != 1 || unavailable.TicketIDs[0] != tickets[0] {
		t.Fatalf("refunding a refunded ticket again: got %v, want TicketsUnavailableError naming it", err)
	}
	if n := len(f.validTickets(t, o.ID)); n != 2 || f.count(t, `SELECT count(*) FROM refunds WHERE order_id = $1`, o.ID) != before {
		t.Errorf("the refused refund changed something: %d valid tickets, want 2", n)
	}

	res, err = f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund})
	if err != nil {
		t.Fatalf("whole refund: %v", err)
	}
	if !res.Whole || res.AmountCents != 10000 || res.Status != StatusRefundPending {
		t.Errorf("whole refund: got %+v, want the rest, 10000 cents, refund_pending", res)
	}
	f.drain(t)
	if st, reason := f.orderStatus(t, o.ID); st != StatusRefunded || reason != ReasonStaffRefund {
		t.Errorf("order: got %s (%s), want refunded (staff_refund)", st, reason)
	}
	if n := f.soldTo(t, o.ID); n != 0 {
		t.Errorf("seats sold to the refunded order: got %d, want 0", n)
	}
	if n := f.jobs.Queued(t, bookingtest.JobOrderRefunded, o.ID); n != 1 {
		t.Errorf("refund emails queued: got %d, want 1", n)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund}); !errors.Is(err, ErrOrderNotConfirmed) {
		t.Errorf("refunding a refunded order: got %v, want ErrOrderNotConfirmed", err)
	}
}

// TestStaffRefundGA: refunding general-admission tickets gives their places back to
// the stripes they came from (the places left and those held or sold still add up to
// the capacity, which Check verifies at the end), and they can be sold again.
func TestStaffRefundGA(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	h, err := f.holdGA(t, "a", 3)
	if err != nil {
		t.Fatal(err)
	}
	o := f.checkout(t, h, "a")
	if got := f.pay(t, o, "evt_a"); got != OutcomeConfirmed {
		t.Fatalf("pay: got %q, want confirmed", got)
	}
	left := f.gaRemaining(t, f.tier)
	tickets := f.validTickets(t, o.ID)
	res, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[1:], Kind: KindRefund})
	if err != nil {
		t.Fatal(err)
	}
	if res.GAPlaces != 2 || res.AmountCents != 4000 {
		t.Errorf("got %+v, want 2 places, 4000 cents", res)
	}
	if got := f.gaRemaining(t, f.tier); got != left+2 {
		t.Errorf("places left: got %d, want %d", got, left+2)
	}
	if _, ga := f.ticketCount(t, o.ID); ga != 1 {
		t.Errorf("valid GA tickets: got %d, want 1", ga)
	}
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
	if _, err := f.holdGA(t, "b", left+2); err != nil {
		t.Errorf("holding the places given back: %v", err)
	}
}

// TestStaffVoid: a void ends the tickets and frees the seats with no money moving: no
// refund is recorded, the order ends refunded as "voided", and the money invariants
// accept the payment it keeps.
func TestStaffVoid(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")[:2]
	o := f.checkout(t, f.hold(t, "a", seats...), "a")
	f.pay(t, o, "evt_a")
	res, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindVoid})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Whole || res.AmountCents != 0 || res.Status != StatusRefunded || len(res.SeatIDs) != 2 {
		t.Errorf("got %+v, want whole, no money, refunded, 2 seats", res)
	}
	if n := f.count(t, `SELECT count(*) FROM refunds WHERE order_id = $1`, o.ID); n != 0 {
		t.Errorf("refunds recorded: got %d, want 0", n)
	}
	if st, reason := f.orderStatus(t, o.ID); reason != ReasonVoided {
		t.Errorf("order: got %s (%s), want refunded (voided)", st, reason)
	}
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
	// The seats sell again.
	ob := f.checkout(t, f.hold(t, "b", seats...), "b")
	if got := f.pay(t, ob, "evt_b"); got != OutcomeConfirmed {
		t.Errorf("selling the voided seats again: got %q, want confirmed", got)
	}
}

// TestStaffRefundUsedTicket: a ticket used at the door is not refunded, and the whole
// request changes nothing.
func TestStaffRefundUsedTicket(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")[:2]
	o := f.checkout(t, f.hold(t, "a", seats...), "a")
	f.pay(t, o, "evt_a")
	tickets := f.validTickets(t, o.ID)
	if _, err := f.pool.Exec(t.Context(), `UPDATE tickets SET checked_in_at = now(), checked_in_gate = 'A' WHERE event_id = $1 AND id = $2`, f.event, tickets[0]); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund})
	var unavailable *TicketsUnavailableError
	if !errors.As(err, &unavailable) {
		t.Fatalf("got %v, want TicketsUnavailableError", err)
	}
	if n := f.soldTo(t, o.ID); n != 2 || len(f.validTickets(t, o.ID)) != 2 {
		t.Errorf("the refused refund changed something: %d seats sold to the order, want 2", n)
	}
}

// TestStaffRefundPublishes: the seats a staff refund frees reach the live feed (and the
// seat map cache it feeds) as available.
func TestStaffRefundPublishes(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t, Config{HoldTTL: time.Minute})
	ctx := t.Context()
	w := f.watch(t)
	var seat int64
	if err := f.pool.QueryRow(ctx, `SELECT min(id) FROM seats WHERE event_id = $1`, f.event).Scan(&seat); err != nil {
		t.Fatal(err)
	}
	h, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: []int64{seat}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.svc.Buyer.Checkout(ctx, h.ID, "a", "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.Buyer.ApplyPayment(ctx, "test", paid(o, "evt_a")); err != nil || got != OutcomeConfirmed {
		t.Fatalf("pay: %q, %v", got, err)
	}
	awaitStatus(t, f, w, seat, SeatSold)
	if _, err := f.svc.Desk.StaffRefund(ctx, StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindVoid}); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, f, w, seat, SeatAvailable)
}

// awaitStatus reads the live feed until a change of seat leaves it in status on the
// seat map the feed keeps current (the map is patched before the feed tells anyone).
func awaitStatus(t *testing.T, f liveFixture, w *live.Watcher, seat int64, status string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		await(t, w, false, seat)
		m, err := f.svc.Maps.SeatMap(t.Context(), f.event)
		if err != nil {
			t.Fatal(err)
		}
		if statusOf(m, seat) == status {
			return
		}
	}
	t.Fatalf("seat %d never announced as %s", seat, status)
}

// TestStaffRefundLimit: a buyer at the per-buyer limit whose tickets staff refunded may
// buy again up to the limit: the limit counts what the buyer still owns.
func TestStaffRefundLimit(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxPerBuyer = 2
	f := newMoneyFixture(t, confirmSpec(), cfg)
	seats := f.rowSeats(t, "Floor", "A")
	o := f.checkout(t, f.hold(t, "a", seats[:2]...), "a")
	f.pay(t, o, "evt_a")
	if _, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: seats[2:3]}); err == nil {
		t.Fatal("a third seat past the limit of 2 was held")
	}
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: f.validTickets(t, o.ID)[:1], Kind: KindRefund}); err != nil {
		t.Fatal(err)
	}
	f.hold(t, "a", seats[2])
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestSearchOrders: by the start of an email (any case; LIKE's own characters match
// only themselves), by order number and by ticket code, newest first, a page at a time.
func TestSearchOrders(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	var orders []Order
	for i, buyer := range []string{"ada", "ada2", "ada3", "bob"} {
		o := f.checkout(t, f.hold(t, buyer, seats[i]), buyer)
		f.pay(t, o, "evt_"+buyer)
		orders = append(orders, o)
	}
	ctx := t.Context()
	p1, err := f.svc.Desk.SearchOrders(ctx, "ADA", 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Orders) != 2 || p1.Orders[0].ID != orders[2].ID || p1.Orders[1].ID != orders[1].ID || p1.Next == 0 {
		t.Fatalf("first page: got %+v, want ada3's and ada2's orders and a next page", p1)
	}
	p2, err := f.svc.Desk.SearchOrders(ctx, "ADA", p1.Next, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Orders) != 1 || p2.Orders[0].ID != orders[0].ID || p2.Next != 0 {
		t.Errorf("second page: got %+v, want ada's order alone, the last page", p2)
	}
	for _, q := range []string{"%", "_", "a%"} {
		if p, err := f.svc.Desk.SearchOrders(ctx, q, 0, 10); err != nil || len(p.Orders) != 0 {
			t.Errorf("search %q: got %d orders, %v, want none", q, len(p.Orders), err)
		}
	}
	var code string
	if err := f.pool.QueryRow(ctx, `SELECT code FROM tickets WHERE order_id = $1`, orders[3].ID).Scan(&code); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{code, strings.ToUpper(code), "#" + strconv.FormatInt(orders[3].ID, 10)} {
		p, err := f.svc.Desk.SearchOrders(ctx, q, 0, 10)
		if err != nil || len(p.Orders) != 1 || p.Orders[0].ID != orders[3].ID || p.Orders[0].ValidTickets != 1 {
			t.Errorf("search %q: got %+v, %v, want bob's order with its ticket", q, p.Orders, err)
		}
	}
}
