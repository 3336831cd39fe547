package web_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/booking"
	"boxoffice/internal/dbtest"
)

// TestMoneyCutBetweenChargeAndRecord cuts PostgreSQL off (the TCP proxy of the outage
// test) right after the provider took a charge and before its answer is recorded, with
// the webhook lost too. The order keeps its claim: paying again is refused, so the
// buyer is charged once, and reconciliation finds the charge by its key and confirms.
//
// Negative control: the same cut for a second order, whose claim the test then deletes
// (what forgetting an unrecorded charge amounts to). Paying again is then accepted and
// the provider holds two charges for the order: the count that the first part checks
// does catch a double charge. The extra money is still given back, since the success
// of the forgotten charge is recorded when it turns up.
func TestMoneyCutBetweenChargeAndRecord(t *testing.T) {
	t.Parallel()
	var proxy *dbtest.Proxy
	app := newMoneyApp(t, func(o *appOptions) {
		o.DBURL = func(t testing.TB, url string) string {
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			proxy = dbtest.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
			return dbtest.ProxiedURL(t, url, proxy)
		}
	})
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	var cut atomic.Bool
	app.Provider.AfterCharge(func(booking.ChargeRequest) {
		if cut.CompareAndSwap(true, false) {
			proxy.Down()
		}
	})
	payCut := func(orderID int64) {
		t.Helper()
		cut.Store(true)
		st, raw, _, err := c.send(context.Background(), "POST", "/api/v1/orders/"+itoa(orderID)+"/pay",
			map[string]string{"card": cardOK, "delivery": "none"}, nil)
		proxy.Up()
		app.Pool.Reset() // the connections the cut broke: the next requests get fresh ones
		if err != nil {
			t.Fatal(err)
		}
		// The charge's answer came back, only its record failed: 202 is the truth; the
		// claim, written before the charge, is what matters.
		if st != http.StatusAccepted {
			t.Fatalf("pay with the database cut after the charge: got %d %s, want 202", st, truncate(raw))
		}
		if n := count(t, app.Pool, `SELECT count(*) FROM payments WHERE order_id = $1 AND provider_payment_id IS NULL AND state = 'pending'`, orderID); n != 1 {
			t.Fatalf("got %d unrecorded claims, want 1: the cut did not fall between charge and record", n)
		}
	}

	co := app.checkout(c, c.hold(app.EventID, seats[0]).HoldID)
	payCut(co.OrderID)
	if st, _, code := c.payAs(co.OrderID, cardOK, "", nil); st != http.StatusConflict || code != "payment_in_progress" {
		t.Errorf("paying again: got %d %s, want 409 payment_in_progress", st, code)
	}
	if o := c.order(co.OrderID); o.Status != booking.StatusPending || o.StatusReason != booking.ReasonPaymentProcessing {
		t.Errorf("order: got %s (%s), want pending (payment_processing)", o.Status, o.StatusReason)
	}
	app.reconcile(t, co.OrderID)
	if o := c.order(co.OrderID); o.Status != booking.StatusConfirmed || len(o.Tickets) != 1 {
		t.Errorf("after reconciliation: got %s with %d tickets, want confirmed with 1", o.Status, len(o.Tickets))
	}
	if n := app.Provider.Charges(co.OrderID); n != 1 {
		t.Errorf("charges: got %d, want 1", n)
	}

	// The negative control.
	ctl := app.checkout(c, c.hold(app.EventID, seats[1]).HoldID)
	payCut(ctl.OrderID)
	_, key := paymentOf(t, app.Pool, ctl.OrderID)
	if _, err := app.Pool.Exec(context.Background(), `DELETE FROM payments WHERE order_id = $1`, ctl.OrderID); err != nil {
		t.Fatal(err)
	}
	c.pay(ctl.OrderID, "")
	waitOrder(t, c, ctl.OrderID, booking.StatusConfirmed)
	if n := app.Provider.Charges(ctl.OrderID); n != 2 {
		t.Fatalf("control: got %d charges, want 2 (the claim forgotten, the order was charged again)", n)
	}
	forgotten, err := app.Provider.LookUp(context.Background(), booking.PaymentRef{Key: key})
	if err != nil || forgotten.State != booking.PaymentSucceeded {
		t.Fatalf("control: the forgotten charge: got %+v, %v, want succeeded", forgotten, err)
	}
	if err := app.Provider.Resend(context.Background(), forgotten.PaymentID); err != nil {
		t.Fatal(err)
	}
	waitOrderWhere(t, c, ctl.OrderID, "the forgotten charge refunded", refundsDone(1))
	app.settle(t)
}
