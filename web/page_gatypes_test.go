package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestGATypesPage: a basket's standing places offer a count per ticket type on the
// seat page, a plain form that works without the script; setting one Child of three
// places prices them so (two Adults, one Child), and more Children than places is
// refused, saying why, with nothing changed.
func TestGATypesPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	e := newPricedEvent(t, app.Pool, "priced-ga")
	if _, err := app.Pool.Exec(t.Context(), `INSERT INTO ticket_type_prices (event_id, type_id, ga_tier_id, price_cents) VALUES ($1, $2, $3, 500)`,
		e.id, e.child, e.gaTier); err != nil {
		t.Fatal(err)
	}
	b := app.newBrowser(t)
	seatsPath := "/events/priced-ga/seats"
	_, token := b.page(seatsPath)
	if st, _, _ := b.do("POST", "/events/priced-ga/holds", url.Values{"_csrf": {token}, "ga_tier": {itoa(e.gaTier)}, "ga_quantity": {"3"}}, nil); st != http.StatusSeeOther {
		t.Fatalf("hold places: got %d, want 303", st)
	}
	doc, token := b.page(seatsPath)
	form := doc.Find("#hold-panel form.ga-types")
	action, _ := form.Attr("action")
	method, _ := form.Attr("method")
	child := form.Find(`input[name="type_` + itoa(e.child) + `"]`)
	if form.Length() != 1 || method != "post" || child.Length() != 1 || form.Find(`input[name="type_`+itoa(e.adult)+`"]`).Length() != 1 {
		t.Fatalf("standing places' type form: got %d forms (method %q), want one posting a count for Adult and Child", form.Length(), method)
	}
	if v, _ := child.Attr("value"); v != "0" {
		t.Errorf("Child count before: got %q, want 0", v)
	}

	if st, _, _ := b.do("POST", action, url.Values{"_csrf": {token}, "type_" + itoa(e.child): {"1"}, "type_" + itoa(e.adult): {""}}, nil); st != http.StatusSeeOther {
		t.Fatalf("set one Child: got %d, want 303", st)
	}
	doc, token = b.page(seatsPath)
	// Adult 8.00 and Child 5.00 on the standing tier, + 1.75 fees each, + 2.00 an order.
	if got := strings.TrimSpace(doc.Find("#hold-panel .total strong").Text()); got != "€28.25" {
		t.Errorf("total: got %q, want €28.25 (2 × 9.75 + 6.75 + 2.00)", got)
	}
	if v, _ := doc.Find(`#hold-panel form.ga-types input[name="type_` + itoa(e.child) + `"]`).Attr("value"); v != "1" {
		t.Errorf("Child count after: got %q, want 1", v)
	}
	if !strings.Contains(doc.Find("#hold-panel .basket-lines").Text(), "Child") {
		t.Errorf("the basket's lines do not name the Child place")
	}

	st, body, _ := b.do("POST", action, url.Values{"_csrf": {token}, "type_" + itoa(e.child): {"4"}}, nil)
	if st != http.StatusBadRequest || !strings.Contains(string(body), "3 standing places") {
		t.Errorf("four Children of three places: got %d, want 400 saying the basket has 3", st)
	}
	if n := count(t, app.Pool, `SELECT sum(quantity) FROM hold_ga_types WHERE event_id = $1 AND type_id = $2`, e.id, e.child); n != 1 {
		t.Errorf("Child places kept: got %d, want 1 (the refused form changed nothing)", n)
	}
}
