package booking

import (
	"testing"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/demo"
)

// TestVoidGivesVoucherBack: a voucher limited to one use is used by an order; ending
// part of the order keeps the use, and ending the whole order gives it back: another
// buyer may enter it. (TestStaffRefundChargedAmounts covers the refund.)
func TestVoidGivesVoucherBack(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, smallSpec([]demo.Section{oneRow("A", 6, 1000)}), DefaultConfig())
	v := f.voucher(t, "ONCE", 1, voucherOpen)
	seats := f.rowSeats(t, "A", "A")
	h := f.hold(t, "a", seats[:2]...)
	if err := f.svc.Buyer.SetVoucher(t.Context(), h.ID, "a", "ONCE"); err != nil {
		t.Fatal(err)
	}
	o := f.checkout(t, h, "a")
	if o.AmountCents != 2*1000-500 {
		t.Fatalf("amount with the voucher: got %d, want %d", o.AmountCents, 2*1000-500)
	}
	f.pay(t, o, "evt_a")
	used := func() int {
		return f.count(t, `SELECT used + 100 * (SELECT count(*) FROM voucher_redemptions WHERE voucher_id = $1) FROM vouchers WHERE id = $1`, v)
	}
	tickets := f.validTickets(t, o.ID)
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[:1], Kind: KindVoid}); err != nil {
		t.Fatal(err)
	}
	if got := used(); got != 101 {
		t.Errorf("after ending one of two tickets: got used+100×redemptions %d, want 101 (the use kept)", got)
	}
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindVoid}); err != nil {
		t.Fatal(err)
	}
	if got := used(); got != 0 {
		t.Errorf("after ending the order: got used+100×redemptions %d, want 0 (the use given back)", got)
	}
	h2 := f.hold(t, "b", seats[4])
	if err := f.svc.Buyer.SetVoucher(t.Context(), h2.ID, "b", "ONCE"); err != nil {
		t.Errorf("another buyer entering the given-back voucher: %v, want it taken", err)
	}
}

// TestStaffRefundChargedAmounts: staff refunds give back what the order charged, line
// by line: a ticket its line's total (its fees in, its discount off), and the refund
// that ends the order the rest with the per-order fee, so the parts add up to the
// payment; the preview says the same amounts, and the voucher's use comes back.
func TestStaffRefundChargedAmounts(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, smallSpec([]demo.Section{oneRow("A", 6, 1000)}), DefaultConfig())
	f.ids(t, `INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents) VALUES ($1, 'all', 100, 300) RETURNING event_id`, f.event)
	v := f.voucher(t, "ONCE", 1, voucherOpen)
	seats := f.rowSeats(t, "A", "A")
	h := f.hold(t, "a", seats[:3]...)
	if err := f.svc.Buyer.SetVoucher(t.Context(), h.ID, "a", "ONCE"); err != nil {
		t.Fatal(err)
	}
	o := f.checkout(t, h, "a")
	// 1000 + 100 - 500, then 1100 twice, and 300 for the order.
	if o.AmountCents != 600+1100+1100+300 {
		t.Fatalf("amount: got %d, want 3100", o.AmountCents)
	}
	f.pay(t, o, "evt_a")
	tickets := f.validTickets(t, o.ID)
	first := StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[:1], Kind: KindRefund}
	if p, err := f.svc.Desk.PreviewStaffRefund(t.Context(), first); err != nil || p.AmountCents != 600 {
		t.Errorf("preview of the first ticket: got %d (%v), want 600", p.AmountCents, err)
	}
	if res, err := f.svc.Desk.StaffRefund(t.Context(), first); err != nil || res.AmountCents != 600 {
		t.Fatalf("refund of the first ticket: got %d (%v), want 600", res.AmountCents, err)
	}
	rest := StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund}
	if p, err := f.svc.Desk.PreviewStaffRefund(t.Context(), rest); err != nil || p.AmountCents != 2500 {
		t.Errorf("preview of the rest: got %d (%v), want 2500", p.AmountCents, err)
	}
	if res, err := f.svc.Desk.StaffRefund(t.Context(), rest); err != nil || res.AmountCents != 2500 {
		t.Fatalf("refund of the rest: got %d (%v), want 2500 (two tickets and the order fee)", res.AmountCents, err)
	}
	if n := f.count(t, `SELECT sum(amount_cents) FROM refunds WHERE order_id = $1`, o.ID); n != o.AmountCents {
		t.Errorf("refunds add up to %d, want the %d charged", n, o.AmountCents)
	}
	if n := f.count(t, `SELECT used FROM vouchers WHERE id = $1`, v); n != 0 {
		t.Errorf("voucher uses after the whole refund: got %d, want 0", n)
	}
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
}
