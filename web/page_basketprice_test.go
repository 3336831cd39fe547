package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBasketPricingPage: without the script, the basket panel shows each line's type
// as a select offering only the online types (no desk-only Companion) with their
// all-in prices, changes a type and enters a voucher by form posts, shows the fees,
// the tax included, the discount and the total, names a broken rule, and checkout
// refuses that basket with a 4xx page and no order.
func TestBasketPricingPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	e := newPricedEvent(t, app.Pool, "priced-page")
	b := app.newBrowser(t)
	seatsPath := "/events/priced-page/seats"
	_, token := b.page(seatsPath)
	form := url.Values{"_csrf": {token}, "seat": {itoa(e.seats[0]), itoa(e.seats[1])}}
	if st, _, _ := b.do("POST", "/events/priced-page/holds", form, nil); st != http.StatusSeeOther {
		t.Fatalf("hold: got %d, want 303", st)
	}
	doc, token := b.page(seatsPath)
	panel := doc.Find("#hold-panel")
	sel := panel.Find(`form.line-type select[name="type"]`)
	if sel.Length() != 2 {
		t.Fatalf("type selects: got %d, want 2", sel.Length())
	}
	opts := sel.First().Find("option")
	if opts.Length() != 2 || !strings.Contains(opts.Eq(0).Text(), "Adult €21.75") || !strings.Contains(opts.Eq(1).Text(), "Child €14.25") {
		t.Errorf("options: got %q, want Adult €21.75 and Child €14.25 only", opts.Text())
	}
	if got := strings.TrimSpace(panel.Find(".total strong").Text()); got != "€45.50" {
		t.Errorf("total: got %q, want €45.50 (2 × 21.75 + 2.00 per order)", got)
	}
	if got := panel.Find(".order-fee").Text(); got != "€2" {
		t.Errorf("order fee: got %q, want €2", got)
	}
	// 21.75 / 6 = 3.625, half to even 3.62, twice; 2.00 / 6 = 0.333: 0.33.
	if got := panel.Find(".tax").Text(); got != "incl. €7.57 VAT" {
		t.Errorf("tax: got %q, want incl. €7.57 VAT", got)
	}

	action, _ := sel.Eq(1).Closest("form").Attr("action")
	if st, _, _ := b.do("POST", action, url.Values{"_csrf": {token}, "type": {itoa(e.child)}}, nil); st != http.StatusSeeOther {
		t.Fatalf("set Child: got %d, want 303", st)
	}
	voucher, _ := panel.Find("form.voucher").Attr("action")
	if st, body, _ := b.do("POST", voucher, url.Values{"_csrf": {token}, "code": {"nope"}}, nil); st != http.StatusNotFound || !strings.Contains(string(body), "no voucher with that code") {
		t.Errorf("unknown voucher: got %d, want 404 saying so", st)
	}
	if st, _, _ := b.do("POST", voucher, url.Values{"_csrf": {token}, "code": {"TENADULT"}}, nil); st != http.StatusSeeOther {
		t.Fatalf("voucher: got %d, want 303", st)
	}
	doc, token = b.page(seatsPath)
	panel = doc.Find("#hold-panel")
	// Adult 21.75 - 2.00 + Child 14.25 + 2.00 per order = 36.00.
	if got := strings.TrimSpace(panel.Find(".total strong").Text()); got != "€36" {
		t.Errorf("total with Child and the voucher: got %q, want €36", got)
	}
	if got := panel.Find(".discount").Text(); got != "−€2" {
		t.Errorf("discount: got %q, want −€2", got)
	}

	// Both Child: no adult in the order.
	action, _ = panel.Find(`form.line-type`).First().Attr("action")
	b.do("POST", action, url.Values{"_csrf": {token}, "type": {itoa(e.child)}}, nil)
	doc, token = b.page(seatsPath)
	if p := doc.Find("#hold-panel .problem").Text(); !strings.Contains(p, "needs an adult") {
		t.Errorf("problem shown: got %q, want the needs-an-adult rule", p)
	}
	co, _ := doc.Find("#hold-panel a.checkout").Attr("href")
	st, body, _ := b.do("POST", co, url.Values{"_csrf": {token}, "email": {"ada@example.com"}, "card": {"4242 4242 4242 4242"}}, nil)
	if st != http.StatusUnprocessableEntity || !strings.Contains(string(body), "needs an adult") {
		t.Errorf("checkout of a basket breaking a rule: got %d, want 422 naming it", st)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM orders WHERE event_id = $1`, e.id); n != 0 {
		t.Errorf("orders: got %d, want none", n)
	}
}

// TestEventPageAllInPrices: the event page and the seat map's key give the first
// price all in (the cheapest type with the per-ticket fees) and the per-order fee
// beside it; an event without fees keeps its plain prices.
func TestEventPageAllInPrices(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	newPricedEvent(t, app.Pool, "priced-event")
	b := app.newBrowser(t)
	_, body, _ := b.do("GET", "/events/priced-event", nil, nil)
	// The cheapest type on the seats is Child 12.50 (Companion is desk-only); the GA
	// tier has Adult 8.00; each + 1.75 fees.
	for _, want := range []string{"€14.25 incl. fees + €2 per order", "€9.75 incl. fees + €2 per order"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("event page: no %q", want)
		}
	}
	doc, _ := b.page("/events/priced-event/seats")
	if got := doc.Find(".legend-list li").First().Text(); !strings.Contains(got, "€14.25 incl. fees + €2 per order") {
		t.Errorf("key: got %q, want the all-in price", got)
	}
	_, plain, _ := b.do("GET", "/events/demo-night", nil, nil)
	if strings.Contains(string(plain), "incl. fees") || strings.Contains(string(plain), "per order") {
		t.Errorf("an event without fees shows fees")
	}
}
