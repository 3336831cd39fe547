package web_test

import (
	"context"
	"testing"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/payment"
	"boxoffice/web"
)

// Refunds the provider does not settle at once, or settles and then fails, through the
// production program: the test provider's webhooks and River's jobs.

// paidOrder checks out and pays n seats for c and waits for the order's confirmation.
func (a *moneyApp) paidOrder(t *testing.T, c *client, n int) web.OrderJSON {
	t.Helper()
	co := a.checkout(c, c.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, n)...).HoldID)
	c.pay(co.OrderID, "")
	return waitOrder(t, c, co.OrderID, booking.StatusConfirmed)
}

// refundWhere waits until the order's refund number i (from 0, oldest first) is in
// state at attempt, and returns its provider's id.
func (a *moneyApp) refundWhere(t *testing.T, orderID int64, i int, state string, attempt int) string {
	t.Helper()
	var id string
	dbtest.Eventually(t, "refund "+itoa(int64(i))+" "+state, 15*time.Second, func() bool {
		err := a.Pool.QueryRow(context.Background(), `
			SELECT coalesce(provider_refund_id, '') FROM refunds
			WHERE order_id = $1 AND state = $2::refund_state AND attempt = $3
			  AND id = (SELECT id FROM refunds WHERE order_id = $1 ORDER BY id OFFSET $4 LIMIT 1)`,
			orderID, state, attempt, i).Scan(&id)
		return err == nil
	})
	return id
}

// TestMoneyRefundFailsAfterSuccess: a whole refund succeeds and the order ends
// refunded; then the provider fails the refund (its webhook says so). booking makes
// it again under a new key, and the buyer is paid back: one refund at the provider
// that did not fail, of the whole amount, and the order refunded again.
func TestMoneyRefundFailsAfterSuccess(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c := app.newClient(t)
	o := app.paidOrder(t, c, 2)
	if _, err := app.Booking.Desk.StaffRefund(context.Background(), booking.StaffRefundRequest{OrderID: o.OrderID, Whole: true, Kind: booking.KindRefund}); err != nil {
		t.Fatal(err)
	}
	first := app.refundWhere(t, o.OrderID, 0, "succeeded", 1)
	waitOrder(t, c, o.OrderID, booking.StatusRefunded)
	pid, _ := paymentOf(t, app.Pool, o.OrderID)

	if err := app.Provider.SettleRefund(context.Background(), first, booking.RefundFailed); err != nil {
		t.Fatal(err)
	}
	again := app.refundWhere(t, o.OrderID, 0, "succeeded", 2)
	if again == first {
		t.Errorf("the refund made again: got provider refund %s, want a new one", again)
	}
	waitOrder(t, c, o.OrderID, booking.StatusRefunded)
	if n, cents := app.Provider.Refunds(pid), app.Provider.Refunded(pid); n != 1 || cents != int64(o.AmountCents) {
		t.Errorf("paid back at the provider: got %d refunds, %d cents, want 1 of %d", n, cents, o.AmountCents)
	}
	bookingtest.SettleMoney(t, app.Pool, app.EventID, 15*time.Second)
	app.prog.WaitJobs(t)
}

// TestMoneyPendingRefundNotSettledByTotal: a staff refund of one ticket, done, then of
// a second that the provider keeps pending. Reconciliation leaves the second pending
// though the payment's refunded total covers it (the first accounts for it); the
// provider's word settles it.
func TestMoneyPendingRefundNotSettledByTotal(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c := app.newClient(t)
	o := app.paidOrder(t, c, 3)
	refund := func(ticket int64) {
		t.Helper()
		if _, err := app.Booking.Desk.StaffRefund(context.Background(), booking.StaffRefundRequest{
			OrderID: o.OrderID, TicketIDs: []int64{ticket}, Kind: booking.KindRefund,
		}); err != nil {
			t.Fatal(err)
		}
	}
	refund(o.Tickets[0].ID)
	app.refundWhere(t, o.OrderID, 0, "succeeded", 1)
	app.Provider.SetRefundMode(payment.RefundHeld)
	refund(o.Tickets[1].ID)
	second := app.refundWhere(t, o.OrderID, 1, "pending", 1)
	pid, _ := paymentOf(t, app.Pool, o.OrderID)
	if st, err := app.Provider.LookUp(context.Background(), booking.PaymentRef{PaymentID: pid}); err != nil || st.RefundedCents < int64(o.AmountCents)/3 {
		t.Fatalf("the payment's refunded total: got %+v, %v; want it to cover the second refund (the case at stake)", st, err)
	}

	app.reconcile(t, o.OrderID)
	if n := count(t, app.Pool, `SELECT count(*) FROM refunds WHERE order_id = $1 AND state = 'pending'`, o.OrderID); n != 1 {
		t.Fatalf("after reconciliation: got %d refunds pending, want the second still pending at the provider", n)
	}
	if err := app.Provider.SettleRefund(context.Background(), second, booking.RefundSucceeded); err != nil {
		t.Fatal(err)
	}
	app.refundWhere(t, o.OrderID, 1, "succeeded", 1)
	bookingtest.SettleMoney(t, app.Pool, app.EventID, 15*time.Second)
	app.prog.WaitJobs(t)
}
