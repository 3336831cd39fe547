package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/web"
)

// TestBestFormPriceLevel: the best-available form offers the map's prices. Asked for two
// at 39.00 without JavaScript, it holds the Circle's nearest row at that price (not the
// Balcony's, not the Stalls') and sends the browser to the seat page marking those
// seats and scrolled to the first (the fragment), which says what was found and its
// price. The address marks only the buyer's own seats. With htmx the answer marks the
// found seats out of band and names them in the message for the script.
func TestBestFormPriceLevel(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := app.newBrowser(t)
	doc, token := b.page("/events/demo-night/seats")
	var prices []string
	doc.Find(`form.best select[name=price] option`).Each(func(_ int, o *goquery.Selection) {
		v, _ := o.Attr("value")
		prices = append(prices, v+"="+strings.TrimSpace(o.Text()))
	})
	if got, want := strings.Join(prices, " "), "=any price 9500=€95 6500=€65 3900=€39 2500=€25"; got != want {
		t.Errorf("price choices: got %q, want %q", got, want)
	}

	form := url.Values{"_csrf": {token}, "quantity": {"2"}, "price": {"3900"}, "together": {"on"}}
	st, _, h := b.do("POST", "/events/demo-night/holds", form, nil)
	loc := h.Get("Location")
	m := regexp.MustCompile(`^/events/demo-night/seats\?picked=(\d+)%2C(\d+)#seat-(\d+)$`).FindStringSubmatch(loc)
	if st != http.StatusSeeOther || m == nil || m[3] != m[1] {
		t.Fatalf("POST best 2 at 39.00: got %d to %q, want 303 to the seat page naming the two seats", st, loc)
	}
	var where []string
	rows, err := app.Pool.Query(t.Context(), `SELECT section || ' ' || row_label || number || ' ' || price_cents FROM seats
		WHERE event_id = $1 AND held_by IS NOT NULL ORDER BY number`, app.EventID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		where = append(where, s)
	}
	if got, want := strings.Join(where, ", "), "Circle H18 3900, Circle H19 3900"; got != want {
		t.Errorf("held: got %q, want %q", got, want)
	}

	doc, _ = b.page(strings.SplitN(loc, "#", 2)[0])
	for _, id := range m[1:3] {
		if g := doc.Find("#seat-" + id); !g.HasClass("picked") || !g.HasClass("mine") {
			t.Errorf("seat %s: got class %q, want it marked picked and mine", id, g.AttrOr("class", ""))
		}
	}
	if n := doc.Find(".seat.picked").Length(); n != 2 {
		t.Errorf("seats marked picked: got %d, want 2", n)
	}
	msg := doc.Find("#seat-message p.msg")
	if got, want := msg.Text(), "2 seats found: Circle row H, 18–19, €39 each."; got != want {
		t.Errorf("message: got %q, want %q", got, want)
	}
	if got, want := msg.AttrOr("data-picked", ""), "seat-"+m[1]+" seat-"+m[2]; got != want {
		t.Errorf("data-picked: got %q, want %q", got, want)
	}
	if src := doc.Find(`script[src*="/static/js/picked."]`).Length(); src != 1 {
		t.Errorf("picked.js: got %d script elements, want 1", src)
	}

	// Someone else's address marks nothing of theirs.
	other := app.newBrowser(t)
	doc, _ = other.page("/events/demo-night/seats?picked=" + m[1] + "," + m[2])
	if n := doc.Find(".seat.picked").Length(); n != 0 || strings.Contains(doc.Find("#seat-message").Text(), "found") {
		t.Errorf("another buyer's picked seats: got %d marked and message %q, want none", n, doc.Find("#seat-message").Text())
	}

	// htmx: one seat at 95.00 is the middle of the Stalls' row A.
	form = url.Values{"_csrf": {token}, "quantity": {"1"}, "price": {"9500"}}
	st, body, _ := b.do("POST", "/events/demo-night/holds", form, htmx)
	if st != http.StatusOK {
		t.Fatalf("htmx best 1 at 95.00: got %d: %s", st, truncate(body))
	}
	frag := parseHTML(t, body)
	msg = frag.Find("p.msg")
	if !strings.HasPrefix(msg.Text(), "1 seat found: Stalls row A, 20, €95.") {
		t.Errorf("htmx message: got %q, want 1 seat found: Stalls row A, 20, €95.", msg.Text())
	}
	picked := msg.AttrOr("data-picked", "")
	if g := frag.Find(`svg > g#` + picked + `[hx-swap-oob="true"]`); picked == "" || !g.HasClass("picked") {
		t.Errorf("htmx: got data-picked %q and %q, want the seat out of band marked picked", picked, truncate(body))
	}

	// A price that is not a number is refused before anything is held.
	before := saleState(t, app.Pool)
	if st, _, _ := b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "quantity": {"1"}, "price": {"cheap"}}, nil); st != http.StatusBadRequest {
		t.Errorf("price=cheap: got status %d, want 400", st)
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("price=cheap changed %v", d)
	}
}

// TestAPIBestPriceLevel: the API's best available takes an optional priceCents; without
// it any price, as before. A second call adds to the buyer's basket and answers with it.
func TestAPIBestPriceLevel(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	var h web.HoldJSON
	path := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	if st := c.do("POST", path, map[string]any{"quantity": 2, "priceCents": 2500, "together": true}, &h); st != http.StatusCreated {
		t.Fatalf("best 2 at 25.00: got status %d, want 201", st)
	}
	for _, s := range h.Seats {
		if s.Section != "Balcony" || s.Row != "G" || s.PriceCents != 2500 {
			t.Errorf("best 2 at 25.00: got %+v, want the Balcony's row G at 2500", s)
		}
	}
	first := h.HoldID
	if st := c.do("POST", path, map[string]any{"quantity": 2}, &h); st != http.StatusCreated {
		t.Fatalf("best 2: got status %d, want 201", st)
	}
	// The answer is the buyer's one basket: the Balcony's two and the two added.
	var where []string
	for _, s := range h.Seats {
		where = append(where, s.Section+" "+s.Row)
	}
	slices.Sort(where)
	if got, want := strings.Join(where, ", "), "Balcony G, Balcony G, Stalls A, Stalls A"; h.HoldID != first || got != want {
		t.Errorf("best 2 at any price: got hold %s with %s, want hold %s with %s", h.HoldID, got, first, want)
	}
	var e struct{ Error string }
	if st := c.do("POST", path, map[string]any{"quantity": 2, "priceCents": -5}, &e); st != http.StatusBadRequest || e.Error != "invalid_price" {
		t.Errorf("priceCents -5: got %d %q, want 400 invalid_price", st, e.Error)
	}
}
