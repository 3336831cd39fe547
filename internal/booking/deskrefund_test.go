package booking

import (
	"errors"
	"strings"
	"testing"

	"boxoffice/internal/booking/bookingtest"
)

// TestDeskRefund: a box-office sale's money goes back at the desk by its own method.
// A cash sale of two seats: the preview of one ticket says cash and its price and
// changes nothing; no ticket chosen is refused; the refund is recorded done, by the
// member, with no provider job; its confirmation key replays; then the rest ends the
// order refunded and the payment refunded in full. A card-present sale goes back as
// card_present. Every seat and money invariant holds.
func TestDeskRefund(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	seller, clerk := newStaff(t, f.pool, "box_office"), newStaff(t, f.pool, "box_office")
	o, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), f.sale(seller, "desk-cash-0123456789", seats[:2]...))
	if err != nil {
		t.Fatal(err)
	}
	tickets := f.validTickets(t, o.ID)
	by := Actor{StaffID: clerk, Address: "192.0.2.8"}

	p, err := f.svc.Desk.PreviewStaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[:1], Kind: KindRefund, By: by})
	if err != nil || p.Method != PayCash || p.AmountCents != 5000 || len(p.Tickets) != 1 || p.Whole {
		t.Fatalf("preview: %+v, %v; want one ticket, 5000 cents in cash", p, err)
	}
	if n := f.count(t, `SELECT count(*) FROM refunds WHERE order_id = $1`, o.ID); n != 0 {
		t.Errorf("refunds after the preview: %d, want 0", n)
	}
	for _, req := range []StaffRefundRequest{
		{OrderID: o.ID, Kind: KindRefund, By: by},
		{OrderID: o.ID, Whole: true, TicketIDs: tickets[:1], Kind: KindRefund, By: by},
	} {
		if _, err := f.svc.Desk.StaffRefund(t.Context(), req); !errors.Is(err, ErrInvalidStaffRefund) {
			t.Errorf("%+v: %v, want ErrInvalidStaffRefund", req, err)
		}
		if _, err := f.svc.Desk.PreviewStaffRefund(t.Context(), req); !errors.Is(err, ErrInvalidStaffRefund) {
			t.Errorf("preview of %+v: %v, want ErrInvalidStaffRefund", req, err)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM tickets WHERE order_id = $1 AND voided_at IS NOT NULL`, o.ID); n != 0 {
		t.Fatalf("tickets ended by refused requests: %d, want 0", n)
	}

	req := StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[:1], Kind: KindRefund, By: by, Key: "desk-confirm-key-0001"}
	for i := range 2 {
		res, err := f.svc.Desk.StaffRefund(t.Context(), req)
		if err != nil || res.Method != PayCash || res.AmountCents != 5000 || res.Replayed != (i == 1) {
			t.Fatalf("confirmation %d: %+v, %v; want 5000 cents in cash, the second a replay", i, res, err)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM refunds WHERE order_id = $1 AND state = 'succeeded' AND staff_id = $2
		AND by_staff AND provider_refund_id IS NULL AND amount_cents = 5000`, o.ID, clerk); n != 1 {
		t.Errorf("cash refunds done by the clerk: %d, want 1", n)
	}
	if n := f.jobs.Queued(t, bookingtest.JobRefundDue, 0); n != 0 {
		t.Errorf("provider refund jobs: %d, want none", n)
	}
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[1:], Kind: KindVoid, By: by, Key: req.Key}); !errors.Is(err, ErrRefundKeyUsed) {
		t.Errorf("the key again for a void: %v, want ErrRefundKeyUsed", err)
	}
	res, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund, By: by})
	if err != nil || !res.Whole || res.Status != StatusRefunded || res.Method != PayCash {
		t.Fatalf("the rest: %+v, %v; want the order refunded in cash", res, err)
	}
	if n := f.count(t, `SELECT count(*) FROM payments WHERE order_id = $1 AND state = 'refunded'`, o.ID); n != 1 {
		t.Errorf("payments refunded in full: %d, want 1", n)
	}

	card := f.sale(seller, "desk-card-0123456789", seats[2])
	card.Method = PayCardPresent
	oc, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), card)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: oc.ID, Whole: true, Kind: KindRefund, By: by}); err != nil || res.Method != PayCardPresent {
		t.Errorf("card-present refund: %+v, %v; want card_present", res, err)
	}
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: oc.ID, Whole: true, Kind: KindRefund}); !errors.Is(err, ErrOrderNotConfirmed) {
		t.Errorf("refund of a refunded order: %v, want ErrOrderNotConfirmed", err)
	}
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestDeskRefundInvariants: the money invariants catch a box-office payment refunded
// as if through a provider (left due, by no member), which the desk never does: the
// control that the new rules can fail.
func TestDeskRefundInvariants(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	member := newStaff(t, f.pool, "box_office")
	o, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), f.sale(member, "desk-bad-0123456789", f.rowSeats(t, "Floor", "A")[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(t.Context(), `INSERT INTO refunds (order_id, payment_id, amount_cents, reason, idempotency_key, by_staff, state)
		SELECT order_id, id, amount_cents, 'staff_refund', 'forged-refund', true, 'succeeded' FROM payments WHERE order_id = $1`, o.ID); err != nil {
		t.Fatal(err)
	}
	v, err := bookingtest.MoneyViolations(t.Context(), f.pool, f.event)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range v {
		found = found || (strings.Contains(line, "box-office payment") && strings.Contains(line, "nobody"))
	}
	if !found {
		t.Errorf("violations %q: want the box-office payment refunded by nobody", v)
	}
}
