package web_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/payment"
	"boxoffice/web"
)

// paidEvent is the provider's success (or failure) event for an order, as the test
// provider would send it.
func paidEvent(eventID int64, co web.CheckoutAnswerJSON, typ string) payment.Event {
	return payment.Event{
		ID: "evt_" + rand.Text(), Type: typ, PaymentID: "pi_" + rand.Text(),
		OrderID: co.OrderID, EventID: eventID, AmountCents: int64(co.AmountCents),
		Created: time.Unix(time.Now().Unix(), 0).UTC(),
	}
}

// webhook POSTs a body with a signature header (none if sig is empty) to the webhook,
// as the provider does: no session, no CSRF token.
func webhook(ctx context.Context, base string, body []byte, sig string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/payments/webhook", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set(payment.SignatureHeader, sig)
	}
	resp, err := webhookClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// webhookClient is the provider's side: no cookies.
var webhookClient = &http.Client{Timeout: 30 * time.Second}

// deliver sends a signed event and returns the outcome the server reports.
func deliver(t *testing.T, base string, ev payment.Event) string {
	t.Helper()
	body, err := payment.Payload(ev)
	if err != nil {
		t.Fatal(err)
	}
	st, raw, err := webhook(context.Background(), base, body, payment.Sign(body, testSecret, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	var ans web.WebhookAnswerJSON
	if st != http.StatusOK || json.Unmarshal(raw, &ans) != nil || !ans.Received {
		t.Fatalf("webhook %s: got %d %s, want 200 and received", ev.ID, st, truncate(raw))
	}
	return ans.Outcome
}

// checkSoldOnce checks that an order is confirmed with one valid ticket per seat, each
// seat sold to it, and that the provider events recorded for it are exactly want.
func checkSoldOnce(t *testing.T, pool *pgxpool.Pool, orderID int64, seats, events int) {
	t.Helper()
	var status string
	if err := pool.QueryRow(context.Background(), `SELECT status FROM orders WHERE id = $1`, orderID).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != booking.StatusConfirmed {
		t.Errorf("order %d: got status %q, want confirmed", orderID, status)
	}
	if n := count(t, pool, `SELECT count(*) FROM tickets WHERE order_id = $1 AND voided_at IS NULL`, orderID); n != seats {
		t.Errorf("order %d: got %d valid tickets, want %d", orderID, n, seats)
	}
	if n := count(t, pool, `SELECT count(*) FROM tickets WHERE order_id = $1`, orderID); n != seats {
		t.Errorf("order %d: got %d tickets issued in all, want %d", orderID, n, seats)
	}
	if n := count(t, pool, `SELECT count(*) FROM seats WHERE order_id = $1 AND sold_at IS NOT NULL`, orderID); n != seats {
		t.Errorf("order %d: got %d seats sold to it, want %d", orderID, n, seats)
	}
	if n := count(t, pool, `SELECT count(*) FROM payment_events WHERE order_id = $1`, orderID); n != events {
		t.Errorf("order %d: got %d provider events recorded, want %d", orderID, n, events)
	}
}

// TestWebhookConfirmsOnce replays one success five times in a row and sends twenty
// copies of another at once: each order is confirmed exactly once, every other copy is
// a duplicate, and a failure arriving after the success changes nothing.
func TestWebhookConfirmsOnce(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	seats := firstSeats(t, app.Pool, app.EventID, 4)
	c := app.newClient(t)
	first := c.checkout(c.hold(app.EventID, seats[0], seats[1]).HoldID)
	second := c.checkout(c.hold(app.EventID, seats[2], seats[3]).HoldID)

	ev := paidEvent(app.EventID, first, payment.EventSucceeded)
	for i := range 5 {
		want := "duplicate"
		if i == 0 {
			want = "confirmed"
		}
		if got := deliver(t, app.URL, ev); got != want {
			t.Errorf("delivery %d of the same event: got outcome %q, want %q", i+1, got, want)
		}
	}
	checkSoldOnce(t, app.Pool, first.OrderID, 2, 1)

	ev2 := paidEvent(app.EventID, second, payment.EventSucceeded)
	body, err := payment.Payload(ev2)
	if err != nil {
		t.Fatal(err)
	}
	sig := payment.Sign(body, testSecret, time.Now())
	outcomes := make([]string, 20)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range outcomes {
		wg.Go(func() {
			<-start
			st, raw, err := webhook(context.Background(), app.URL, body, sig)
			var ans web.WebhookAnswerJSON
			if err != nil || st != http.StatusOK || json.Unmarshal(raw, &ans) != nil {
				outcomes[i] = "failed: " + http.StatusText(st) + " " + truncate(raw)
				return
			}
			outcomes[i] = ans.Outcome
		})
	}
	close(start)
	wg.Wait()
	tally := map[string]int{}
	for _, o := range outcomes {
		tally[o]++
	}
	if tally["confirmed"] != 1 || tally["duplicate"] != 19 {
		t.Errorf("20 concurrent copies: got outcomes %v, want 1 confirmed and 19 duplicate", tally)
	}
	checkSoldOnce(t, app.Pool, second.OrderID, 2, 1)

	// A failure that arrives after the success, as a stale event with its own id, is
	// recorded and ignored: the order never goes back.
	failed := paidEvent(app.EventID, first, payment.EventFailed)
	failed.Created = ev.Created.Add(-time.Second)
	if got := deliver(t, app.URL, failed); got != "ignored" {
		t.Errorf("failure after success: got outcome %q, want ignored", got)
	}
	checkSoldOnce(t, app.Pool, first.OrderID, 2, 2)
	var o web.OrderJSON
	if st := c.do("GET", "/api/v1/orders/"+itoa(first.OrderID), nil, &o); st != http.StatusOK || o.Status != booking.StatusConfirmed || len(o.Tickets) != 2 {
		t.Errorf("order after a late failure: got %d %q with %d tickets, want 200 confirmed with 2", st, o.Status, len(o.Tickets))
	}
	bookingtest.Check(t, app.Pool, app.EventID)
}

// TestWebhookRefusesForgeries sends events the provider did not sign as they are: each
// is a 400 invalid_signature, and the order stays pending with nothing recorded.
func TestWebhookRefusesForgeries(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	c := app.newClient(t)
	co := c.checkout(c.hold(app.EventID, seats...).HoldID)
	ev := paidEvent(app.EventID, co, payment.EventSucceeded)
	body, err := payment.Payload(ev)
	if err != nil {
		t.Fatal(err)
	}
	cheaper := ev
	cheaper.AmountCents = 1
	altered, err := payment.Payload(cheaper)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	cases := []struct {
		name string
		body []byte
		sig  string
	}{
		{"bad signature", body, "t=" + itoa(now.Unix()) + ",v1=" + "5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"},
		{"stale signature", body, payment.Sign(body, testSecret, now.Add(-6*time.Minute))},
		{"altered payload", altered, payment.Sign(body, testSecret, now)},
		{"missing header", body, ""},
		{"wrong secret", body, payment.Sign(body, "whsec_someone_else", now)},
		{"garbled header", body, "v1"},
		{"signed garbage", []byte(`{"id": "evt_x"`), payment.Sign([]byte(`{"id": "evt_x"`), testSecret, now)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := saleState(t, app.Pool)
			st, raw, err := webhook(context.Background(), app.URL, tc.body, tc.sig)
			if err != nil {
				t.Fatal(err)
			}
			e, perr := parseError(raw)
			if st != http.StatusBadRequest || perr != nil || e.Error != "invalid_signature" {
				t.Errorf("got %d %s, want 400 invalid_signature", st, truncate(raw))
			}
			if changed := stateDiff(before, saleState(t, app.Pool)); len(changed) > 0 {
				t.Errorf("a forged event changed the sale: %v", changed)
			}
		})
	}
	var o web.OrderJSON
	if st := c.do("GET", "/api/v1/orders/"+itoa(co.OrderID), nil, &o); st != http.StatusOK || o.Status != booking.StatusPending {
		t.Errorf("order after forgeries: got %d %q, want 200 pending", st, o.Status)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM payment_events`); n != 0 {
		t.Errorf("got %d provider events recorded, want none", n)
	}
	// The genuine event still works afterwards.
	if got := deliver(t, app.URL, ev); got != "confirmed" {
		t.Errorf("genuine event after forgeries: got outcome %q, want confirmed", got)
	}
	checkSoldOnce(t, app.Pool, co.OrderID, 2, 1)
	bookingtest.Check(t, app.Pool, app.EventID)
}

// TestProviderDeliveries pays through the built-in provider with each of its awkward
// delivery modes: the same event twice at once, a stale failure after the success, and
// a late delivery. Each order is confirmed exactly once.
func TestProviderDeliveries(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	seats := firstSeats(t, app.Pool, app.EventID, 6)
	c := app.newClient(t)
	modes := []struct {
		delivery string
		events   int // provider events recorded once every delivery is over
	}{{"twice", 1}, {"out_of_order", 2}, {"late", 1}}
	orders := make([]int64, len(modes))
	for i, m := range modes {
		co := c.checkout(c.hold(app.EventID, seats[2*i], seats[2*i+1]).HoldID)
		orders[i] = co.OrderID
		c.pay(co.OrderID, m.delivery)
	}
	for i, m := range modes {
		o := waitOrder(t, c, orders[i], booking.StatusConfirmed)
		if len(o.Tickets) != 2 {
			t.Errorf("%s: got %d tickets, want 2", m.delivery, len(o.Tickets))
		}
	}
	// Close waits for every delivery in flight, so what follows sees their end state.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := app.Provider.Close(ctx); err != nil {
		t.Fatalf("provider close: %v", err)
	}
	for i, m := range modes {
		t.Run(m.delivery, func(t *testing.T) {
			checkSoldOnce(t, app.Pool, orders[i], 2, m.events)
			var o web.OrderJSON
			if st := c.do("GET", "/api/v1/orders/"+itoa(orders[i]), nil, &o); st != http.StatusOK || o.Status != booking.StatusConfirmed || len(o.Tickets) != 2 {
				t.Errorf("got %d %q with %d tickets, want 200 confirmed with 2", st, o.Status, len(o.Tickets))
			}
		})
	}
	bookingtest.Check(t, app.Pool, app.EventID)
}
