package web_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/jobs"
	"boxoffice/internal/money"
	"boxoffice/web"
)

// The money rules of issue 7, each through the API and the provider's webhooks, with
// the invariants of money checked in SQL after every test (moneyApp.settle).

// TestMoneyLateSuccessRefundedOnce: a success that arrives after its hold lapsed and
// its seat was sold to someone else sells nothing and is refunded automatically,
// exactly once, however often it is delivered or looked up; the order ends refunded
// with the reason in the API and on its page.
func TestMoneyLateSuccessRefundedOnce(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	a, b := app.newClient(t), app.newClient(t)
	seat := firstSeats(t, app.Pool, app.EventID, 1)
	h := a.hold(app.EventID, seat...)
	co := app.checkout(a, h.HoldID)
	if st, ans, _ := a.payAs(co.OrderID, cardOK, "none", nil); st != http.StatusAccepted || ans.Status != booking.PayProcessing {
		t.Fatalf("pay: got %d %+v, want 202 processing", st, ans)
	}
	lapse(t, app.Pool, h.HoldID)
	cob := app.checkout(b, b.hold(app.EventID, seat...).HoldID)
	b.pay(cob.OrderID, "")
	waitOrder(t, b, cob.OrderID, booking.StatusConfirmed)

	// A's success comes now: three deliveries of the event at once, then a lookup.
	pid, _ := paymentOf(t, app.Pool, co.OrderID)
	for range 3 {
		if err := app.Provider.Resend(context.Background(), pid); err != nil {
			t.Fatal(err)
		}
	}
	o := waitOrder(t, a, co.OrderID, booking.StatusRefunded)
	app.reconcile(t, co.OrderID)
	if o.StatusReason != booking.ReasonSeatsUnavailable || len(o.Tickets) != 0 || len(o.Refunds) != 1 ||
		o.Refunds[0].Status != "refunded" || o.Refunds[0].AmountCents != co.AmountCents {
		t.Errorf("order: got %s (%s), %d tickets, refunds %+v, want refunded (seats_unavailable), none, one refund of %d",
			o.Status, o.StatusReason, len(o.Tickets), o.Refunds, co.AmountCents)
	}
	if got := app.Provider.Refunded(pid); got != int64(co.AmountCents) {
		t.Errorf("refunded at the provider: got %d, want %d", got, co.AmountCents)
	}
	if n := app.jobCount(t, jobs.RefundDue{}.Kind(), co.OrderID); n != 1 {
		t.Errorf("refund jobs: got %d, want 1", n)
	}
	if n := app.jobCount(t, jobs.OrderRefundedEmail{}.Kind(), co.OrderID); n != 1 {
		t.Errorf("refund emails queued: got %d, want 1", n)
	}
	want := "the seats were sold to someone else; your payment has been refunded in full."
	if note := a.orderNote(co.OrderID); !strings.Contains(note, want) {
		t.Errorf("order page: got %q, want it to say %q", note, want)
	}
	app.settle(t)
}

// TestMoneySecondSuccessRefunded: a second payment for an order that another payment
// confirmed is refunded, and the order keeps its tickets; a payment other than the
// order's, while the order's own is under way, is refunded and the order's own sells.
func TestMoneySecondSuccessRefunded(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 4)
	ctx := context.Background()
	elsewhere := func(co web.CheckoutAnswerJSON) string { // a payment booking did not start
		t.Helper()
		res, err := app.Provider.Charge(ctx, booking.ChargeRequest{
			Key: "elsewhere_" + rand.Text(), OrderID: co.OrderID, EventID: app.EventID,
			AmountCents: int64(co.AmountCents), Method: cardOK,
		})
		if err != nil {
			t.Fatalf("charge elsewhere: %v", err)
		}
		return res.PaymentID
	}

	confirmed := app.checkout(c, c.hold(app.EventID, seats[0], seats[1]).HoldID)
	c.pay(confirmed.OrderID, "")
	waitOrder(t, c, confirmed.OrderID, booking.StatusConfirmed)
	second := elsewhere(confirmed)
	o := waitOrderWhere(t, c, confirmed.OrderID, "the second payment refunded", refundsDone(1))
	if o.Status != booking.StatusConfirmed || len(o.Tickets) != 2 || o.Refunds[0].Reason != booking.ReasonAlreadyPaid {
		t.Errorf("order: got %s with %d tickets, refunds %+v, want confirmed with 2 and one already_paid refund",
			o.Status, len(o.Tickets), o.Refunds)
	}
	if got := app.Provider.Refunded(second); got != int64(confirmed.AmountCents) {
		t.Errorf("second payment refunded: got %d, want %d", got, confirmed.AmountCents)
	}
	if note := c.orderNote(confirmed.OrderID); !strings.Contains(note, "A second payment of") || !strings.Contains(note, "has been refunded in full") {
		t.Errorf("order page: got %q, want it to tell of the refunded second payment", note)
	}
	// The buyer is told by email too, once, that the order stands and the second
	// charge came back (settle checks once; this is what it says).
	app.prog.WaitJobs(t)
	msg := app.mailWith(t, "Refund of a further payment for order "+itoa(confirmed.OrderID))
	for _, want := range []string{"A second payment has been refunded", "your order stands and your tickets are still valid",
		"further payment of " + money.Shop{}.Format(confirmed.AmountCents) + " for it has been refunded in full"} {
		if !strings.Contains(msg.Text, want) {
			t.Errorf("refund email: got %q:\n%s\nwant it to say %q", msg.Subject, msg.Text, want)
		}
	}

	underWay := app.checkout(c, c.hold(app.EventID, seats[2], seats[3]).HoldID)
	c.payAs(underWay.OrderID, cardOK, "none", nil)
	own, _ := paymentOf(t, app.Pool, underWay.OrderID)
	other := elsewhere(underWay)
	o = waitOrderWhere(t, c, underWay.OrderID, "the other payment refunded", refundsDone(1))
	if o.Status != booking.StatusPending || o.Refunds[0].Reason != booking.ReasonOtherPayment {
		t.Errorf("order: got %s, refunds %+v, want pending with one other_payment refund", o.Status, o.Refunds)
	}
	if own == other || own == "" {
		t.Fatalf("the order's own payment is the other one")
	}
	if err := app.Provider.Resend(ctx, own); err != nil {
		t.Fatal(err)
	}
	if o := waitOrder(t, c, underWay.OrderID, booking.StatusConfirmed); len(o.Tickets) != 2 {
		t.Errorf("order: got %d tickets, want 2", len(o.Tickets))
	}
	app.settle(t)
}

// TestMoneyUnknownOutcome: a charge whose answer is lost keeps the order's claim (no
// second charge can start), the buyer reads that the payment is being checked, and
// reconciliation settles it: as a success when the provider took it, as a failure that
// frees the claim when the provider took nothing (a 5xx before charging).
func TestMoneyUnknownOutcome(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)

	co := app.checkout(c, c.hold(app.EventID, seats[0]).HoldID)
	if st, ans, _ := c.payAs(co.OrderID, cardOK, "lost", nil); st != http.StatusAccepted || ans.Status != booking.PayUnknown {
		t.Fatalf("pay with the answer lost: got %d %+v, want 202 unknown", st, ans)
	}
	if o := c.order(co.OrderID); o.Status != booking.StatusPending || o.StatusReason != booking.ReasonPaymentUnknown {
		t.Errorf("order: got %s (%s), want pending (payment_unknown)", o.Status, o.StatusReason)
	}
	if note := c.orderNote(co.OrderID); !strings.Contains(note, "Your payment is being checked") {
		t.Errorf("order page: got %q, want it to say the payment is being checked", note)
	}
	if st, _, code := c.payAs(co.OrderID, cardOK, "", nil); st != http.StatusConflict || code != "payment_in_progress" {
		t.Errorf("paying again: got %d %s, want 409 payment_in_progress", st, code)
	}
	app.reconcile(t, co.OrderID)
	if o := c.order(co.OrderID); o.Status != booking.StatusConfirmed || len(o.Tickets) != 1 {
		t.Errorf("after reconciliation: got %s with %d tickets, want confirmed with 1", o.Status, len(o.Tickets))
	}
	if n := app.Provider.Charges(co.OrderID); n != 1 {
		t.Errorf("charges: got %d, want 1", n)
	}

	failed := app.checkout(c, c.hold(app.EventID, seats[1]).HoldID)
	if st, ans, _ := c.payAs(failed.OrderID, cardOK, "error", nil); st != http.StatusAccepted || ans.Status != booking.PayUnknown {
		t.Fatalf("pay with a provider error: got %d %+v, want 202 unknown", st, ans)
	}
	app.reconcile(t, failed.OrderID)
	if o := c.order(failed.OrderID); o.Status != booking.StatusPending || o.StatusReason != booking.ReasonPaymentFailed {
		t.Errorf("after reconciliation: got %s (%s), want pending (payment_failed)", o.Status, o.StatusReason)
	}
	c.pay(failed.OrderID, "")
	waitOrder(t, c, failed.OrderID, booking.StatusConfirmed)
	if n := app.Provider.Charges(failed.OrderID); n != 1 {
		t.Errorf("charges: got %d, want 1 (the 5xx took nothing)", n)
	}
	app.settle(t)
}

// TestMoneyLostWebhook: a success whose webhook never comes is found by reconciliation,
// once it has waited RECONCILE_AFTER, and confirms the order; the webhook arriving
// after all changes nothing.
func TestMoneyLostWebhook(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t, func(o *appOptions) {
		o.Env = map[string]string{"RECONCILE_AFTER": "90m", "IDEMPOTENCY_TTL": "2h"}
	})
	if cfg := app.Booking.Buyer.Config(); cfg.ReconcileAfter != 90*time.Minute || cfg.IdempotencyTTL != 2*time.Hour {
		t.Fatalf("booking runs with %s and %s, want RECONCILE_AFTER and IDEMPOTENCY_TTL: 90m and 2h", cfg.ReconcileAfter, cfg.IdempotencyTTL)
	}
	c := app.newClient(t)
	co := app.checkout(c, c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 2)...).HoldID)
	c.payAs(co.OrderID, cardOK, "none", nil)
	if o := c.order(co.OrderID); o.Status != booking.StatusPending || o.StatusReason != booking.ReasonPaymentProcessing {
		t.Errorf("order: got %s (%s), want pending (payment_processing)", o.Status, o.StatusReason)
	}
	// An hour without word is not yet RECONCILE_AFTER: no lookup.
	if _, err := app.Pool.Exec(context.Background(), `UPDATE payments SET updated_at = now() - interval '1 hour' WHERE order_id = $1`, co.OrderID); err != nil {
		t.Fatal(err)
	}
	if res, err := app.Booking.Worker.Reconcile(context.Background()); err != nil || res.Looked != 0 {
		t.Fatalf("reconcile before RECONCILE_AFTER: got %+v, %v, want nothing looked up", res, err)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM payments WHERE order_id = $1 AND updated_at < now() - interval '59 minutes'`, co.OrderID); n != 1 {
		t.Fatalf("the payment was touched: got %d old payments, want 1", n)
	}
	app.reconcile(t, co.OrderID)
	if o := c.order(co.OrderID); o.Status != booking.StatusConfirmed || len(o.Tickets) != 2 {
		t.Fatalf("after reconciliation: got %s with %d tickets, want confirmed with 2", o.Status, len(o.Tickets))
	}
	pid, _ := paymentOf(t, app.Pool, co.OrderID)
	ev := app.Provider.Event(pid)
	if got := deliver(t, app.URL, ev); got != string(booking.OutcomeIgnored) {
		t.Errorf("the webhook after the lookup: got %q, want ignored", got)
	}
	if o := c.order(co.OrderID); o.Status != booking.StatusConfirmed || len(o.Refunds) != 0 {
		t.Errorf("order: got %s with refunds %+v, want confirmed without", o.Status, o.Refunds)
	}
	app.settle(t)
}

// TestMoneyPayAgainAfterFailure: a declined card and a payment that fails after it was
// taken (the failure by webhook) both free the order's claim: the buyer pays again
// while the hold lives.
func TestMoneyPayAgainAfterFailure(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)

	declined := app.checkout(c, c.hold(app.EventID, seats[0]).HoldID)
	if st, _, code := c.payAs(declined.OrderID, cardDeclined, "", nil); st != http.StatusPaymentRequired || code != "card_declined" {
		t.Fatalf("declined card: got %d %s, want 402 card_declined", st, code)
	}
	c.pay(declined.OrderID, "")
	waitOrder(t, c, declined.OrderID, booking.StatusConfirmed)

	async := app.checkout(c, c.hold(app.EventID, seats[1]).HoldID)
	if st, ans, _ := c.payAs(async.OrderID, cardFailLater, "", nil); st != http.StatusAccepted || ans.Status != booking.PayProcessing {
		t.Fatalf("card that fails later: got %d %+v, want 202 processing", st, ans)
	}
	waitOrderWhere(t, c, async.OrderID, "the failure", func(o web.OrderJSON) bool { return o.StatusReason == booking.ReasonPaymentFailed })
	if note := c.orderNote(async.OrderID); !strings.Contains(note, "did not go through") {
		t.Errorf("order page: got %q, want it to say the payment did not go through", note)
	}
	c.pay(async.OrderID, "")
	waitOrder(t, c, async.OrderID, booking.StatusConfirmed)
	for _, id := range []int64{declined.OrderID, async.OrderID} {
		if n := app.Provider.Charges(id); n != 2 {
			t.Errorf("order %d: got %d charges, want 2 (the failed one and the one that sold)", id, n)
		}
	}
	app.settle(t)
}

// TestMoneyFreeOrder: an order of price 0 is confirmed at checkout, with its tickets
// and its confirmation queued once, and no charge.
func TestMoneyFreeOrder(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c := app.newClient(t)
	seat := firstSeats(t, app.Pool, app.EventID, 1)
	if _, err := app.Pool.Exec(context.Background(), `UPDATE seats SET price_cents = 0 WHERE event_id = $1 AND id = $2`, app.EventID, seat[0]); err != nil {
		t.Fatal(err)
	}
	co := app.checkout(c, c.hold(app.EventID, seat...).HoldID)
	if co.Status != booking.StatusConfirmed || co.AmountCents != 0 {
		t.Fatalf("checkout: got %s for %d cents, want confirmed for 0", co.Status, co.AmountCents)
	}
	if o := c.order(co.OrderID); len(o.Tickets) != 1 {
		t.Errorf("tickets: got %d, want 1", len(o.Tickets))
	}
	if st, _, code := c.payAs(co.OrderID, cardOK, "", nil); st != http.StatusConflict || code != "order_not_pending" {
		t.Errorf("paying a free order: got %d %s, want 409 order_not_pending", st, code)
	}
	if n := app.Provider.Charges(co.OrderID); n != 0 {
		t.Errorf("charges: got %d, want none", n)
	}
	if n := app.jobCount(t, jobs.OrderConfirmedEmail{}.Kind(), co.OrderID); n != 1 {
		t.Errorf("confirmations queued: got %d, want 1", n)
	}
	app.settle(t)
}

// TestMoneyExpiredOrder: reconciliation ends an order whose hold lapsed unpaid as
// expired (API and page say so); a payment that turns up for it afterwards is refunded
// and the order ends refunded, saying why.
func TestMoneyExpiredOrder(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c := app.newClient(t)
	h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	co := app.checkout(c, h.HoldID)
	lapse(t, app.Pool, h.HoldID)
	app.reconcile(t)
	if o := c.order(co.OrderID); o.Status != booking.StatusExpired {
		t.Fatalf("order: got %s, want expired", o.Status)
	}
	if note := c.orderNote(co.OrderID); !strings.Contains(note, "Nothing has been charged") {
		t.Errorf("order page: got %q, want it to say nothing was charged", note)
	}
	if st, _, code := c.payAs(co.OrderID, cardOK, "", nil); st != http.StatusConflict || code != "order_not_pending" {
		t.Errorf("paying an expired order: got %d %s, want 409 order_not_pending", st, code)
	}
	if _, err := app.Provider.Charge(context.Background(), booking.ChargeRequest{
		Key: "elsewhere_" + rand.Text(), OrderID: co.OrderID, EventID: app.EventID, AmountCents: int64(co.AmountCents), Method: cardOK,
	}); err != nil {
		t.Fatal(err)
	}
	o := waitOrder(t, c, co.OrderID, booking.StatusRefunded)
	if o.StatusReason != booking.ReasonOrderExpired {
		t.Errorf("order: got reason %q, want order_expired", o.StatusReason)
	}
	if note := c.orderNote(co.OrderID); !strings.Contains(note, "after this order had expired") {
		t.Errorf("order page: got %q, want it to say the payment came after the order expired", note)
	}
	app.settle(t)
}
