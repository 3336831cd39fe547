package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking/bookingtest"
)

// moneyApp is the program with a job queue that runs refunds (and counts emails) after
// the transactions that queue them commit: bookingtest.Jobs, standing in for River in
// these tests so that they exercise booking's contract alone.
type moneyApp struct {
	*testApp
	jobs *bookingtest.Jobs
}

// newMoneyApp starts the program and its test job queue.
func newMoneyApp(t *testing.T, opts ...func(*appOptions)) *moneyApp {
	t.Helper()
	app := newTestApp(t, opts...)
	jobs := bookingtest.NewJobs(t, app.Pool, bookingtest.Workers{Refund: app.Booking.RunRefund})
	app.Booking.SetJobs(jobs) // before any request of the test
	jobs.Start(t)             // stops before the program closes: cleanups run last-in first-out
	return &moneyApp{testApp: app, jobs: jobs}
}

// settle waits for the refunds to be done, then checks every invariant of the demo
// event, of seats and of money, and that no job failed for good.
func (a *moneyApp) settle(t *testing.T) {
	t.Helper()
	bookingtest.SettleMoney(t, a.Pool, a.EventID, 15*time.Second)
	for _, f := range a.jobs.Failures() {
		if strings.Contains(f, "no payment provider") {
			t.Errorf("job failed: %s", f)
		}
	}
}

// reconcile runs one reconciliation pass, as the periodic job does, after making the
// order's payments and refunds look old enough to be looked up (test setup: the
// program's own ReconcileAfter is minutes).
func (a *moneyApp) reconcile(t *testing.T, orderIDs ...int64) {
	t.Helper()
	ctx := context.Background()
	for _, id := range orderIDs {
		for _, q := range []string{
			`UPDATE payments SET updated_at = now() - interval '1 hour' WHERE order_id = $1`,
			`UPDATE refunds SET updated_at = now() - interval '1 hour' WHERE order_id = $1`,
		} {
			if _, err := a.Pool.Exec(ctx, q, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := a.Booking.Reconcile(ctx); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
}

// paymentOf returns the provider's id and the idempotency key of the order's latest
// charge attempt.
func paymentOf(t *testing.T, pool *pgxpool.Pool, orderID int64) (providerID, key string) {
	t.Helper()
	var pid *string
	err := pool.QueryRow(context.Background(),
		`SELECT provider_payment_id, idempotency_key FROM payments WHERE order_id = $1 ORDER BY id DESC LIMIT 1`,
		orderID).Scan(&pid, &key)
	if err != nil {
		t.Fatalf("payment of order %d: %v", orderID, err)
	}
	if pid != nil {
		providerID = *pid
	}
	return providerID, key
}

// payAs pays an order with card, simulating delivery, and returns the status and the
// answer (or the error code).
func (c *client) payAs(orderID int64, card, delivery string, header http.Header) (int, payAnswerJSON, string) {
	c.t.Helper()
	st, raw, _, err := c.send(context.Background(), "POST", "/api/v1/orders/"+itoa(orderID)+"/pay",
		map[string]string{"card": card, "delivery": delivery}, header)
	if err != nil {
		c.t.Fatal(err)
	}
	var ans payAnswerJSON
	if st >= 400 {
		e, perr := parseError(raw)
		if perr != nil {
			c.t.Fatalf("pay order %d: %v", orderID, perr)
		}
		return st, ans, e.Error
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		c.t.Fatalf("pay order %d: answer %d is not JSON: %q", orderID, st, raw)
	}
	return st, ans, ""
}

// order reads an order through the API.
func (c *client) order(id int64) orderJSON {
	c.t.Helper()
	var o orderJSON
	if st := c.do("GET", "/api/v1/orders/"+itoa(id), nil, &o); st != http.StatusOK {
		c.t.Fatalf("order %d: got status %d, want 200", id, st)
	}
	return o
}

// orderNote is the text of the order page's status, as the buyer reads it.
func (c *client) orderNote(id int64) string {
	c.t.Helper()
	p := c.page(orderURL(id), false)
	if p.status != http.StatusOK {
		c.t.Fatalf("order page %d: got status %d, want 200", id, p.status)
	}
	return strings.Join(strings.Fields(p.doc.Find(".order-note").Text()), " ")
}

// soldToBuyer counts the seats sold to a buyer's orders on an event, and the seats
// their live holds keep.
func soldAndHeld(t *testing.T, pool *pgxpool.Pool, eventID int64, orderIDs []int64, holdIDs []string) (sold, held int) {
	t.Helper()
	sold = count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND order_id = ANY($2)`, eventID, orderIDs)
	for _, h := range holdIDs {
		held += count(t, pool, `SELECT count(*) FROM seats s JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
			WHERE s.event_id = $1 AND h.event_id || '-' || h.id = $2 AND s.hold_expires_at > now() AND s.sold_at IS NULL`, eventID, h)
	}
	return sold, held
}

// waitOrderWhere polls the order until cond holds, with a deadline.
func waitOrderWhere(t *testing.T, c *client, id int64, what string, cond func(orderJSON) bool) orderJSON {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		o := c.order(id)
		if cond(o) {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %d: waiting for %s, got %+v", id, what, o)
		}
		time.Sleep(20 * time.Millisecond) // polling, as a client does: webhooks and jobs are asynchronous
	}
}

// refundsDone reports whether an order has n refunds, all done.
func refundsDone(n int) func(orderJSON) bool {
	return func(o orderJSON) bool {
		if len(o.Refunds) != n {
			return false
		}
		for _, r := range o.Refunds {
			if r.Status != "refunded" {
				return false
			}
		}
		return true
	}
}

const (
	cardOK        = "4242 4242 4242 4242"
	cardDeclined  = "4000 0000 0000 0002"
	cardFailLater = "4000 0000 0000 0341"
)
