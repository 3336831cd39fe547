package booking

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
)

// refundRow is a refund as the database has it.
type refundRow struct {
	id         int64
	state, key string
	providerID string
	attempt    int
}

// refunds returns the order's refunds, oldest first.
func (f fixture) refunds(t *testing.T, orderID int64) []refundRow {
	t.Helper()
	rows, err := f.pool.Query(t.Context(), `
		SELECT id, state::text, idempotency_key, coalesce(provider_refund_id, ''), attempt
		FROM refunds WHERE order_id = $1 ORDER BY id`, orderID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []refundRow
	for rows.Next() {
		var r refundRow
		if err := rows.Scan(&r.id, &r.state, &r.key, &r.providerID, &r.attempt); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// paidID is the provider's id of the payment that paidOrder's order keeps: paid's.
const paidID = "pi_evt_a"

// paidOrder is an order of n seats of row A, paid and confirmed, in a fixture whose
// reconciliation looks up whatever has not settled, however fresh.
func paidOrder(t *testing.T, n int) (moneyFixture, Order) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ReconcileAfter = time.Nanosecond
	f := newMoneyFixture(t, confirmSpec(), cfg)
	o := f.checkout(t, f.hold(t, "a", f.rowSeats(t, "Floor", "A")[:n]...), "a")
	if got := f.pay(t, o, "evt_a"); got != OutcomeConfirmed {
		t.Fatalf("pay: got %q, want confirmed", got)
	}
	return f, o
}

// TestReconcileLooksUpEachRefund: a staff refund of one ticket, done, then of a
// second, which the provider keeps pending. The payment's refunded total covers the
// second refund's amount (the first accounts for it), and reconciliation used to mark
// the second succeeded on that total; looked up by its own id it stays pending until
// the provider settles it.
func TestReconcileLooksUpEachRefund(t *testing.T) {
	t.Parallel()
	f, o := paidOrder(t, 3)
	tickets := f.validTickets(t, o.ID)
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[:1], Kind: KindRefund}); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	f.provider.refundNext(fakeRefundPending)
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, TicketIDs: tickets[1:2], Kind: KindRefund}); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	rs := f.refunds(t, o.ID)
	if len(rs) != 2 || rs[0].state != "succeeded" || rs[1].state != "pending" || rs[1].providerID == "" {
		t.Fatalf("refunds: got %+v, want the first succeeded and the second pending at the provider", rs)
	}
	if st, err := f.provider.LookUp(t.Context(), PaymentRef{PaymentID: paidID}); err != nil || st.RefundedCents < 5000 {
		t.Fatalf("the payment's refunded total: got %+v, %v; want it to cover the second refund (the case at stake)", st, err)
	}

	res, err := f.svc.Worker.Reconcile(t.Context())
	if err != nil || res.Looked != 1 {
		t.Fatalf("reconcile: got %+v, %v; want the pending refund looked up", res, err)
	}
	if rs := f.refunds(t, o.ID); rs[1].state != "pending" {
		t.Fatalf("the second refund after reconciliation: got %s, want pending (the provider has not paid it)", rs[1].state)
	}
	if n := f.jobs.Queued(t, bookingtest.JobPaymentRefunded, rs[1].id); n != 0 {
		t.Errorf("emails for the pending refund: got %d, want 0", n)
	}

	f.provider.settleRefund(t, rs[1].providerID, RefundSucceeded, o) // its webhook is lost
	if _, err := f.svc.Worker.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rs := f.refunds(t, o.ID); rs[1].state != "succeeded" {
		t.Errorf("the second refund once the provider paid it: got %s, want succeeded", rs[1].state)
	}
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// idText is the order id in decimal.
func (o Order) idText() string { return strconv.FormatInt(o.ID, 10) }

// TestRefundFailedAfterSuccessIsMadeAgain: a whole refund succeeds, the order ends
// refunded, and then the provider reports the refund failed (its webhook). The refund
// is reopened under a new key with an error logged naming the order and the refund, the
// order and the payment are under way again, and the retry pays the buyer back: one
// refund at the provider that did not fail, of the whole amount.
func TestRefundFailedAfterSuccessIsMadeAgain(t *testing.T) {
	t.Parallel()
	f, o := paidOrder(t, 2)
	const reopened = "refund failed at the provider, made again under a new key"
	f.log.expect(reopened)
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund}); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	first := f.refunds(t, o.ID)[0]
	if st, _ := f.orderStatus(t, o.ID); st != StatusRefunded || first.state != "succeeded" {
		t.Fatalf("after the refund: order %s, refund %+v; want refunded and succeeded", st, first)
	}

	failed := f.provider.settleRefund(t, first.providerID, RefundFailed, o)
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", failed); err != nil || got != OutcomeFailed {
		t.Fatalf("the failure: got %q, %v; want failed", got, err)
	}
	again := f.refunds(t, o.ID)[0]
	if again.state != "due" || again.attempt != 2 || again.key == first.key || again.providerID != "" {
		t.Errorf("the refund after the failure: got %+v, want due again, attempt 2, under a new key", again)
	}
	if st, _ := f.orderStatus(t, o.ID); st != StatusRefundPending {
		t.Errorf("the order after the failure: got %s, want refund_pending", st)
	}
	if n := f.count(t, `SELECT count(*) FROM payments WHERE order_id = $1 AND state = 'succeeded'`, o.ID); n != 1 {
		t.Errorf("payments kept after the failure: got %d, want the one, no longer refunded", n)
	}
	wantLog := "order=" + o.idText() + " refund=" + strconv.FormatInt(first.id, 10)
	if lines := f.log.logged(reopened); len(lines) != 1 || !strings.Contains(lines[0], wantLog) {
		t.Errorf("error log: got %q, want one line with %q", lines, wantLog)
	}
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", failed); err != nil || got != OutcomeDuplicate {
		t.Errorf("the failure again: got %q, %v; want duplicate", got, err)
	}

	f.drain(t)
	if st, _ := f.orderStatus(t, o.ID); st != StatusRefunded {
		t.Errorf("the order after the retry: got %s, want refunded", st)
	}
	if n, cents := f.provider.refundsOf(paidID); n != 1 || cents != int64(o.AmountCents) {
		t.Errorf("paid back at the provider: got %d refunds of %d cents, want 1 of %d", n, cents, o.AmountCents)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestRefundFailedOnLookupIsMadeAgain: a refund the provider keeps pending and then
// fails, with no webhook, is found failed by reconciliation's lookup and made again;
// after maxRefundAttempts failures it stays failed, logged for a person, and the order
// stays refund_pending.
func TestRefundFailedOnLookupIsMadeAgain(t *testing.T) {
	t.Parallel()
	f, o := paidOrder(t, 1)
	const reopened = "refund failed at the provider, made again under a new key"
	const givenUp = "refund failed at the provider again, not made again: the buyer must be paid back by hand"
	f.log.expect(reopened)
	f.log.expect(givenUp)
	f.provider.refundNext(fakeRefundPending, fakeRefundPending, fakeRefundPending)
	if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund}); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= maxRefundAttempts; attempt++ {
		f.drain(t)
		r := f.refunds(t, o.ID)[0]
		if r.state != "pending" || r.attempt != attempt {
			t.Fatalf("attempt %d: got %+v, want pending at the provider", attempt, r)
		}
		f.provider.settleRefund(t, r.providerID, RefundFailed, o) // no webhook
		if res, err := f.svc.Worker.Reconcile(t.Context()); err != nil || res.Refunds != 1 {
			t.Fatalf("attempt %d: reconcile got %+v, %v; want the refund settled by its lookup", attempt, res, err)
		}
	}
	r := f.refunds(t, o.ID)[0]
	if r.state != "failed" || r.attempt != maxRefundAttempts {
		t.Errorf("after %d failures: got %+v, want failed", maxRefundAttempts, r)
	}
	if st, _ := f.orderStatus(t, o.ID); st != StatusRefundPending {
		t.Errorf("the order: got %s, want refund_pending", st)
	}
	if n, m := len(f.log.logged(reopened)), len(f.log.logged(givenUp)); n != maxRefundAttempts-1 || m != 1 {
		t.Errorf("error logs: got %d made again and %d given up, want %d and 1", n, m, maxRefundAttempts-1)
	}
}

// TestRefundRetryPastKeyWindow: the provider makes a refund but its answer is lost,
// and the job's retry comes after the provider has forgotten the key. With the
// window shortened to nothing the retry looks the refund up by its key, finds it and
// records it: one refund. Negative control: with a window the retry is inside (by
// booking's clock; the provider forgot sooner), it asks again under the forgotten key
// and the provider makes a second refund, which the count catches.
func TestRefundRetryPastKeyWindow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		window  time.Duration
		refunds int
	}{
		{"looked up past the window", 0, 1},
		{"negative control: asked again", 24 * time.Hour, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.RefundKeyWindow = tc.window
			f := newMoneyFixture(t, confirmSpec(), cfg)
			o := f.checkout(t, f.hold(t, "a", f.rowSeats(t, "Floor", "A")[0]), "a")
			if got := f.pay(t, o, "evt_a"); got != OutcomeConfirmed {
				t.Fatalf("pay: got %q, want confirmed", got)
			}
			f.provider.refundNext(fakeRefundLost)
			if _, err := f.svc.Desk.StaffRefund(t.Context(), StaffRefundRequest{OrderID: o.ID, Whole: true, Kind: KindRefund}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.jobs.Drain(t.Context()); err != nil {
				t.Fatal(err)
			}
			if fs := f.jobs.Failures(); len(fs) != 1 {
				t.Fatalf("the refund's first run: got failures %q, want the lost answer", fs)
			}
			f.provider.forgetKeys()
			f.drain2(t)
			r := f.refunds(t, o.ID)[0]
			if n, _ := f.provider.refundsOf(paidID); n != tc.refunds {
				t.Errorf("refunds at the provider: got %d, want %d", n, tc.refunds)
			}
			if r.state != "succeeded" {
				t.Errorf("the refund: got %+v, want succeeded", r)
			}
		})
	}
}

// drain2 runs the jobs again after a failure the test caused, and fails the test on
// any new failure.
func (f moneyFixture) drain2(t *testing.T) {
	t.Helper()
	before := len(f.jobs.Failures())
	if _, err := f.jobs.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if fs := f.jobs.Failures(); len(fs) > before {
		t.Fatalf("jobs failed: %v", fs[before:])
	}
}
