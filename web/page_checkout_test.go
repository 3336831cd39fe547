package web_test

import (
	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/zone"
	"boxoffice/web"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// pageAnswer is a page as a browser without JavaScript gets it.
type pageAnswer struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

// browser is c's session (cookies) as a browser without JavaScript: it sends forms,
// not JSON, and does not follow redirects, so that a test sees them.
func (c *client) browser() *http.Client {
	b := *c.http
	b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &b
}

// page GETs a page; htmx says whether to ask as htmx does (HX-Request).
func (c *client) page(path string, htmx bool) pageAnswer {
	c.t.Helper()
	return c.pageRequest("GET", path, nil, htmx)
}

// postForm POSTs a form as the browser does: the CSRF token is a form field, not a
// header.
func (c *client) postForm(path string, form url.Values, htmx bool) pageAnswer {
	c.t.Helper()
	return c.pageRequest("POST", path, form, htmx)
}

func (c *client) pageRequest(method, path string, form url.Values, htmx bool) pageAnswer {
	c.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := c.browser().Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading answer: %v", method, path, err)
	}
	html, _ := doc.Html()
	return pageAnswer{status: resp.StatusCode, header: resp.Header, body: html, doc: doc}
}

// checkPersonal checks that an answer about one buyer may be stored by no one.
func checkPersonal(t *testing.T, what string, a pageAnswer) {
	t.Helper()
	if cc := a.header.Get("Cache-Control"); cc != "private, no-store" {
		t.Errorf("%s: got Cache-Control %q, want private, no-store", what, cc)
	}
}

// checkWhole checks that an answer is a whole page, or a fragment without the frame.
func checkWhole(t *testing.T, what string, a pageAnswer, whole bool) {
	t.Helper()
	if got := a.doc.Find("header.site").Length() > 0; got != whole {
		t.Errorf("%s: whole page (site header) is %v, want %v", what, got, whole)
	}
	if !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
		t.Errorf("%s: got Content-Type %q, want text/html", what, a.header.Get("Content-Type"))
	}
}

// checkoutForm reads the checkout form of a page: its action and the hidden CSRF field.
func checkoutFormOf(t *testing.T, a pageAnswer) (action string, form url.Values) {
	t.Helper()
	f := a.doc.Find("form.checkout-form")
	action, _ = f.Attr("action")
	token, _ := f.Find(`input[type=hidden][name="_csrf"]`).Attr("value")
	if f.Length() != 1 || action == "" || token == "" {
		t.Fatalf("checkout form: got %d forms, action %q, token %q; want one with both", f.Length(), action, token)
	}
	// A free hold's form has no card field (TestCheckoutFreePage says so).
	if f.Find(`input[name=email]`).Length() != 1 {
		t.Fatalf("checkout form lacks the email field")
	}
	return action, url.Values{"_csrf": {token}}
}

// TestCheckoutPage shows a hold's checkout: its seats, total, expiry for the countdown
// script and the form, personal and never stored.
func TestCheckoutPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	h := c.hold(app.EventID, seats...)

	a := c.page("/holds/"+h.HoldID+"/checkout", false)
	if a.status != http.StatusOK {
		t.Fatalf("checkout page: got status %d, want 200: %s", a.status, truncate([]byte(a.body)))
	}
	checkPersonal(t, "checkout page", a)
	checkWhole(t, "checkout page", a, true)
	action, _ := checkoutFormOf(t, a)
	if want := "/holds/" + h.HoldID + "/checkout"; action != want {
		t.Errorf("form action: got %q, want %q", action, want)
	}
	if n := a.doc.Find("form.checkout-form input[name=card]").Length(); n != 1 {
		t.Errorf("card fields: got %d, want 1 for a hold that costs money", n)
	}
	exp, _ := a.doc.Find(".hold-expiry .countdown").Attr("data-expires-at")
	if got, err := time.Parse(time.RFC3339, exp); err != nil || !got.Equal(h.ExpiresAt.Truncate(time.Second)) {
		t.Errorf("data-expires-at: got %q, want %s", exp, h.ExpiresAt.Format(time.RFC3339))
	}
	if txt, want := a.doc.Find(".hold-expiry time").Text(), zone.Clock(h.ExpiresAt, zone.Of("Europe/Berlin")); !strings.Contains(txt, want) {
		t.Errorf("expiry for people without JavaScript: got %q, want the time %s", txt, want)
	}
	if n := a.doc.Find("table.order-lines tbody tr").Length(); n != 2 {
		t.Errorf("lines: got %d, want 2 (one per seat)", n)
	}
	total := money.Shop{}.Format(h.Seats[0].PriceCents + h.Seats[1].PriceCents)
	if got := a.doc.Find("table.order-lines tfoot .price").Text(); got != total {
		t.Errorf("total: got %q, want %q", got, total)
	}

	frag := c.page("/holds/"+h.HoldID+"/checkout", true)
	if frag.status != http.StatusOK || frag.doc.Find("form.checkout-form").Length() != 1 {
		t.Fatalf("checkout fragment: got status %d, want 200 with the form", frag.status)
	}
	checkWhole(t, "checkout fragment", frag, false)
	checkPersonal(t, "checkout fragment", frag)
}

// TestCheckoutDeclined: a declined card brings the form back with the reason (402) and
// the same order stays payable; paying it again is the same order, not a second one.
func TestCheckoutDeclined(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	action, form := checkoutFormOf(t, c.page("/holds/"+h.HoldID+"/checkout", false))

	form.Set("email", "ada@example.com")
	form.Set("card", "4000 0000 0000 0002")
	a := c.postForm(action, form, false)
	if a.status != http.StatusPaymentRequired {
		t.Fatalf("declined card: got status %d, want 402: %s", a.status, truncate([]byte(a.body)))
	}
	checkPersonal(t, "declined card", a)
	if msg := a.doc.Find("#checkout-message").Text(); !strings.Contains(msg, "declined") {
		t.Errorf("declined card: got message %q, want one that says declined", msg)
	}
	if v, _ := a.doc.Find("input[name=email]").Attr("value"); v != "ada@example.com" {
		t.Errorf("declined card: email field got %q, want what was typed", v)
	}
	if v, ok := a.doc.Find("input[name=card]").Attr("value"); ok && v != "" {
		t.Errorf("declined card: the card number came back in the page: %q", v)
	}
	if inv, _ := a.doc.Find("input[name=card]").Attr("aria-invalid"); inv != "true" {
		t.Errorf("declined card: card field aria-invalid %q, want true", inv)
	}
	var first int64
	if err := app.Pool.QueryRow(t.Context(), `SELECT id FROM orders WHERE status = 'pending'`).Scan(&first); err != nil {
		t.Fatalf("order after a decline: %v (want one pending order)", err)
	}

	// This time as htmx would send it: told where to go rather than redirected, since
	// htmx would follow a redirect itself and place the order page inside the form.
	form.Set("card", "4242 4242 4242 4242")
	a = c.postForm(action, form, true)
	if a.status != http.StatusNoContent || a.header.Get("HX-Redirect") != web.OrderURL(first) {
		t.Fatalf("second try: got %d to %q, want 204 with HX-Redirect %s", a.status, a.header.Get("HX-Redirect"), web.OrderURL(first))
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM orders`); n != 1 {
		t.Errorf("orders after two tries: got %d, want 1", n)
	}
	waitOrder(t, c, first, "confirmed")
}

// TestCheckoutBadInput: a form with a missing or malformed field comes back with the
// reason (400) and changes nothing, for a whole page and for htmx.
func TestCheckoutBadInput(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	action, token := checkoutFormOf(t, c.page("/holds/"+h.HoldID+"/checkout", false))
	before := saleState(t, app.Pool)
	for _, tc := range []struct {
		name, email, card, field, says string
	}{
		{"no email", "", "4242 4242 4242 4242", "email", "Enter the email"},
		{"not an email", "ada", "4242 4242 4242 4242", "email", "does not look right"},
		{"email with a name", "Ada <ada@example.com>", "4242 4242 4242 4242", "email", "does not look right"},
		{"no card", "ada@example.com", "", "card", "Enter a card number"},
		{"letters for a card", "ada@example.com", "4242 abcd", "card", "not valid"},
		{"short card", "ada@example.com", "4242", "card", "not valid"},
	} {
		for _, htmx := range []bool{false, true} {
			form := url.Values{"_csrf": token["_csrf"], "email": {tc.email}, "card": {tc.card}}
			a := c.postForm(action, form, htmx)
			what := tc.name
			if htmx {
				what += " (htmx)"
			}
			if a.status != http.StatusBadRequest {
				t.Errorf("%s: got status %d, want 400", what, a.status)
				continue
			}
			checkPersonal(t, what, a)
			checkWhole(t, what, a, !htmx)
			if msg := a.doc.Find("#checkout-message").Text(); !strings.Contains(msg, tc.says) {
				t.Errorf("%s: got message %q, want it to say %q", what, msg, tc.says)
			}
			if inv, _ := a.doc.Find("input[name=" + tc.field + "]").Attr("aria-invalid"); inv != "true" {
				t.Errorf("%s: %s field aria-invalid %q, want true", what, tc.field, inv)
			}
		}
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("bad input changed the sale state: %v", d)
	}
}

// TestCheckoutExpiredHold: the checkout of a lapsed hold is 410 with the way back to the
// event's seat map, as a page and as an htmx fragment, and posting it changes nothing.
func TestCheckoutExpiredHold(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	lapse(t, app.Pool, h.HoldID)
	ev, err := app.Booking.Buyer.Event(t.Context(), app.EventID)
	if err != nil {
		t.Fatal(err)
	}
	seatsURL := "/events/" + ev.Slug + "/seats"
	before := saleState(t, app.Pool)

	for _, htmx := range []bool{false, true} {
		a := c.page("/holds/"+h.HoldID+"/checkout", htmx)
		if a.status != http.StatusGone {
			t.Fatalf("lapsed hold (htmx %v): got status %d, want 410", htmx, a.status)
		}
		checkPersonal(t, "lapsed hold", a)
		checkWhole(t, "lapsed hold", a, !htmx)
		if a.doc.Find(`a[href="`+seatsURL+`"]`).Length() != 1 {
			t.Errorf("lapsed hold (htmx %v): no link to %s in %s", htmx, seatsURL, truncate([]byte(a.body)))
		}
		if !strings.Contains(a.body, "back on sale") {
			t.Errorf("lapsed hold (htmx %v): the page does not say the seats are back on sale", htmx)
		}
	}
	form := url.Values{"_csrf": {c.csrf}, "email": {"ada@example.com"}, "card": {"4242 4242 4242 4242"}}
	if a := c.postForm("/holds/"+h.HoldID+"/checkout", form, false); a.status != http.StatusGone {
		t.Errorf("paying a lapsed hold: got status %d, want 410", a.status)
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("paying a lapsed hold changed the sale state: %v", d)
	}
}

// TestCheckoutCSRF: a form without its token is refused in words for people, not in
// the API's.
func TestCheckoutCSRF(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	before := saleState(t, app.Pool)
	form := url.Values{"email": {"ada@example.com"}, "card": {"4242 4242 4242 4242"}}
	a := c.postForm("/holds/"+h.HoldID+"/checkout", form, false)
	if a.status != http.StatusForbidden {
		t.Fatalf("form without a token: got status %d, want 403", a.status)
	}
	checkWhole(t, "form without a token", a, true)
	if txt := a.doc.Find("main").Text(); !strings.Contains(txt, "reload the page") || strings.Contains(txt, "X-CSRF-Token") {
		t.Errorf("form without a token: got %q, want words for people", strings.TrimSpace(txt))
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("a refused form changed the sale state: %v", d)
	}
}

// TestCheckoutFreePage: a hold that costs nothing is checked out through the page with
// an email alone: no card field, and the form leads straight to the confirmed order.
func TestCheckoutFreePage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	seat := firstSeats(t, app.Pool, app.EventID, 1)
	if _, err := app.Pool.Exec(context.Background(), `UPDATE seats SET price_cents = 0 WHERE event_id = $1 AND id = $2`, app.EventID, seat[0]); err != nil {
		t.Fatal(err)
	}
	h := c.hold(app.EventID, seat...)
	page := c.page("/holds/"+h.HoldID+"/checkout", false)
	if n := page.doc.Find(`input[name="card"]`).Length(); n != 0 {
		t.Errorf("free checkout page: got %d card fields, want none", n)
	}
	action, form := checkoutFormOf(t, page)
	form.Set("email", "ada@example.com")
	a := c.postForm(action, form, false)
	loc := a.header.Get("Location")
	if a.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/orders/") {
		t.Fatalf("free checkout: got %d to %q, want 303 to /orders/…: %s", a.status, loc, truncate([]byte(a.body)))
	}
	orderID, err := strconv.ParseInt(strings.TrimPrefix(loc, "/orders/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if o := waitOrder(t, c, orderID, booking.StatusConfirmed); o.AmountCents != 0 || len(o.Tickets) != 1 {
		t.Errorf("free order: got %d cents and %d tickets, want 0 and 1", o.AmountCents, len(o.Tickets))
	}
}
