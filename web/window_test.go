package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Sales windows are moved by SQL on the database clock; the app's clock never decides.
const (
	windowBefore = `onsale_at = now() + interval '1 hour', sales_close_at = NULL`
	windowOpen   = `onsale_at = now() - interval '1 hour', sales_close_at = NULL`
	windowClosed = `onsale_at = now() - interval '2 hours', sales_close_at = now() - interval '1 minute'`
)

// setWindow moves the event's sales window.
func setWindow(t testing.TB, pool *pgxpool.Pool, eventID int64, set string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `UPDATE events SET `+set+` WHERE id = $1`, eventID); err != nil {
		t.Fatalf("move the sales window (%s): %v", set, err)
	}
}

// refusedBy checks a 409 refusal by the window and that it changed nothing.
func refusedBy(t *testing.T, app *testApp, what, code string, st int, raw []byte, before map[string]string) {
	t.Helper()
	e, err := parseError(raw)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if st != http.StatusConflict || e.Error != code {
		t.Fatalf("%s: got %d %q, want 409 %q", what, st, e.Error, code)
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("%s: the refusal changed %v", what, d)
	}
	if code != "not_on_sale" {
		return
	}
	var at struct {
		OnsaleAt string `json:"onsaleAt"`
	}
	if err := json.Unmarshal(raw, &at); err != nil {
		t.Fatal(err)
	}
	var want time.Time
	if err := app.Pool.QueryRow(context.Background(), `SELECT onsale_at FROM events WHERE id = $1`, app.EventID).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if got, err := time.Parse(time.RFC3339, at.OnsaleAt); err != nil || !got.Equal(want.Truncate(time.Second)) {
		t.Errorf("%s: got onsaleAt %q, want %s", what, at.OnsaleAt, want.UTC().Format(time.RFC3339))
	}
	if !strings.Contains(e.Message, want.UTC().Format("15:04 MST")) {
		t.Errorf("%s: got message %q, want it to say when (%s)", what, e.Message, want.UTC().Format("15:04 MST"))
	}
}

// TestSalesWindowAPIHolds: exact, best-available and GA holds are refused before the
// onsale (409 not_on_sale with onsaleAt) and after the close (409 sales_closed),
// changing nothing; the same request succeeds once the database clock is inside the
// window, with no clock of the app's involved.
func TestSalesWindowAPIHolds(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 4)
	tier := count(t, app.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, app.EventID)
	path := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	bodies := map[string]any{
		"one exact seat":    map[string]any{"seatIds": seats[:1]},
		"two exact seats":   map[string]any{"seatIds": seats[2:4]},
		"best available":    map[string]any{"quantity": 2, "together": true},
		"general admission": map[string]any{"gaTierId": tier, "quantity": 2},
	}
	for name, body := range bodies {
		for _, w := range []struct{ set, code string }{{windowBefore, "not_on_sale"}, {windowClosed, "sales_closed"}} {
			setWindow(t, app.Pool, app.EventID, w.set)
			before := saleState(t, app.Pool)
			st, raw, _ := c.raw("POST", path, body, nil)
			refusedBy(t, app, name, w.code, st, raw, before)
		}
		setWindow(t, app.Pool, app.EventID, windowOpen)
		if st, raw, _ := c.raw("POST", path, body, nil); st != http.StatusCreated {
			t.Errorf("%s inside the window: got %d, want 201: %s", name, st, truncate(raw))
		}
	}
}

// TestSalesWindowAPICheckoutPay: a hold made in time is neither checked out nor paid
// outside the window (409, nothing changed, nothing charged), and is inside it; the
// webhook of a payment taken in time confirms the order even after the close.
func TestSalesWindowAPICheckoutPay(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 2)...)
	windows := []struct{ set, code string }{{windowBefore, "not_on_sale"}, {windowClosed, "sales_closed"}}

	for _, w := range windows {
		setWindow(t, app.Pool, app.EventID, w.set)
		before := saleState(t, app.Pool)
		st, raw, _ := c.raw("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "ada@example.com"}, nil)
		refusedBy(t, app, "checkout "+w.code, w.code, st, raw, before)
	}
	setWindow(t, app.Pool, app.EventID, windowOpen)
	co := c.checkout(h.HoldID)

	card := map[string]string{"card": "4242 4242 4242 4242", "delivery": "normal"}
	for _, w := range windows {
		setWindow(t, app.Pool, app.EventID, w.set)
		before := saleState(t, app.Pool)
		st, raw, _ := c.raw("POST", "/api/v1/orders/"+itoa(co.OrderID)+"/pay", card, nil)
		refusedBy(t, app, "pay "+w.code, w.code, st, raw, before)
	}
	setWindow(t, app.Pool, app.EventID, windowOpen)
	// The payment is claimed in time; its webhook (late delivery) lands after the close.
	c.pay(co.OrderID, "late")
	setWindow(t, app.Pool, app.EventID, windowClosed)
	waitOrder(t, c, co.OrderID, "confirmed")
}

// TestSalesWindowPages: the seat page's hold form and the checkout form say in words
// why nothing happened, with the API's status.
func TestSalesWindowPages(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := app.newBrowser(t)
	_, token := b.page("/events/demo-night/seats")
	seats := firstSeats(t, app.Pool, app.EventID, 2)

	setWindow(t, app.Pool, app.EventID, windowBefore)
	before := saleState(t, app.Pool)
	st, body, _ := b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "seat": {itoa(seats[0])}}, htmx)
	if st != http.StatusConflict || !strings.Contains(string(body), "Tickets go on sale on") {
		t.Errorf("seat form before the onsale: got %d, want 409 saying when tickets go on sale: %s", st, truncate(body))
	}
	setWindow(t, app.Pool, app.EventID, windowClosed)
	st, body, _ = b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "quantity": {"2"}}, nil)
	if st != http.StatusConflict || !strings.Contains(string(body), "Sales for this event have closed") {
		t.Errorf("seat form after the close: got %d, want 409 saying sales have closed: %s", st, truncate(body))
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("refused seat forms changed %v", d)
	}

	setWindow(t, app.Pool, app.EventID, windowOpen)
	c := app.newClient(t)
	h := c.hold(app.EventID, seats[1])
	a := c.page("/holds/"+h.HoldID+"/checkout", false)
	_, form := checkoutFormOf(t, a)
	form.Set("email", "ada@example.com")
	form.Set("card", "4242 4242 4242 4242")
	setWindow(t, app.Pool, app.EventID, windowClosed)
	before = saleState(t, app.Pool)
	for _, viaHTMX := range []bool{false, true} {
		got := c.postForm("/holds/"+h.HoldID+"/checkout", form, viaHTMX)
		if got.status != http.StatusConflict || !strings.Contains(got.body, "Sales for this event have closed") {
			t.Errorf("checkout form after the close (htmx %v): got %d, want 409 saying sales have closed: %s", viaHTMX, got.status, truncate([]byte(got.body)))
		}
		if got.doc.Find("form.checkout-form").Length() != 1 {
			t.Errorf("checkout form after the close (htmx %v): the form is not shown again", viaHTMX)
		}
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("refused checkout forms changed %v", d)
	}
}
