package booking

import (
	"testing"

	"boxoffice/internal/demo"
)

// TestVoidGivesVoucherBack: a voucher limited to one use is used by an order; ending
// part of the order keeps the use, and ending the whole order gives it back: another
// buyer may enter it. (A refund ends an order through the same endOrder.)
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
