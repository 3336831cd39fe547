package web_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"boxoffice/internal/booking"
)

// euroFirst is an amount written the English way, symbol first ("€95", "€12.50"):
// what a buyer page of a German shop must not show.
var euroFirst = regexp.MustCompile(`€\s?\d`)

// TestShopLocaleBuyerPages: with SHOP_LOCALE=de every price a buyer sees is written
// the German way ("95 €", "95,00 €"), as the admin pages and emails write it: the
// event page, the seat page's map labels, legend and basket, and the order page.
func TestShopLocaleBuyerPages(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(o *appOptions) { o.Env = map[string]string{"SHOP_LOCALE": "de"} })
	c := app.newClient(t)

	ev := c.page("/events/demo-night", false)
	germanOnly(t, "event page", ev.body, "95\u00a0€", "25\u00a0€")

	seat := firstSeats(t, app.Pool, app.EventID, 1)[0]
	// The htmx answer to the hold form draws the seat and the basket out of band.
	held := c.postForm("/events/demo-night/holds", url.Values{"_csrf": {c.csrf}, "seat": {itoa(seat)}}, true)
	germanOnly(t, "hold answer", held.body, "95\u00a0€")
	if label := held.doc.Find(`#seat-`+itoa(seat)+` input`).AttrOr("aria-label", ""); label != "Stalls, row A, seat 1, 95\u00a0€, held by you" {
		t.Errorf("hold answer: the seat's name %q, want %q", label, "Stalls, row A, seat 1, 95\u00a0€, held by you")
	}

	seats := c.page("/events/demo-night/seats", false)
	germanOnly(t, "seat page", seats.body, "95\u00a0€")
	if label := seats.doc.Find(`#seat-`+itoa(seat)+` input`).AttrOr("aria-label", ""); label != "Stalls, row A, seat 1, 95\u00a0€, held by you" {
		t.Errorf("seat page: the held seat's name %q, want %q", label, "Stalls, row A, seat 1, 95\u00a0€, held by you")
	}
	if total := seats.doc.Find(".total strong").First().Text(); total != "95\u00a0€" {
		t.Errorf("seat page: basket total %q, want %q", total, "95\u00a0€")
	}
	holdID := seats.doc.Find(".basket[data-hold]").AttrOr("data-hold", "")

	co := c.checkout(holdID)
	c.pay(co.OrderID, "")
	waitOrder(t, c, co.OrderID, booking.StatusConfirmed)
	order := c.page("/orders/"+itoa(co.OrderID), false)
	germanOnly(t, "order page", order.body, "95,00\u00a0€")
}

// germanOnly fails unless body has each of want and no amount with the symbol first.
func germanOnly(t *testing.T, what, body string, want ...string) {
	t.Helper()
	body = strings.ReplaceAll(body, "&nbsp;", "\u00a0") // goquery writes the page back escaped
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s: no %q in it", what, w)
		}
	}
	if m := euroFirst.FindAllString(body, 5); len(m) > 0 {
		t.Errorf("%s: amounts written the English way: %q", what, m)
	}
}
