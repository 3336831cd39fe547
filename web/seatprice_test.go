package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"boxoffice/web"
)

// TestSeatLabelAllIn: a seat's label (its tooltip and what a screen reader says) gives
// the price all in, the figure the map's key gives (the cheapest type with the
// per-ticket fees, "from" as there is a choice of types), on the page, in the hold
// answer's seats and in what the live stream sends; the standing form gives its tier's
// all-in price; an event without types or fees keeps its plain price.
func TestSeatLabelAllIn(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	e := newPricedEvent(t, app.Pool, "priced-label")
	const want = "Stalls, row A, seat 1, from €14.25 incl. fees"
	b := app.newBrowser(t)
	doc, token := b.page("/events/priced-label/seats")
	seat := doc.Find(`#seat-form input[name="seat"][value="` + itoa(e.seats[0]) + `"]`)
	if label, _ := seat.Attr("aria-label"); !strings.HasPrefix(label, want+",") {
		t.Errorf("page: got label %q, want it to begin %q", label, want)
	}
	if key := doc.Find(".legend-list li").First().Text(); !strings.Contains(key, "€14.25 incl. fees") {
		t.Errorf("key: got %q, want the same €14.25 incl. fees", key)
	}
	// The standing tier sells Adult only (8.00 + 1.75), as the event page says.
	if ga := doc.Find("form.ga").Text(); !strings.Contains(ga, "€9.75 incl. fees each") {
		t.Errorf("standing form: got %q, want €9.75 incl. fees each", ga)
	}
	_, body, _ := b.do("POST", "/events/priced-label/holds", url.Values{"_csrf": {token}, "seat": {itoa(e.seats[0])}}, http.Header{"HX-Request": {"true"}})
	if !strings.Contains(string(body), want+", held by you") {
		t.Errorf("hold answer: no %q in %s", want+", held by you", truncate(body))
	}

	s, err := web.NewServer(app.App.WebDeps())
	if err != nil {
		t.Fatal(err)
	}
	frag, err := s.SeatFragments(t.Context(), e.id, []int64{e.seats[1]}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(frag), "Stalls, row A, seat 2, from €14.25 incl. fees") {
		t.Errorf("stream fragment: got %s, want the all-in price", truncate(frag))
	}
	plain := firstSeats(t, app.Pool, app.EventID, 1)
	if frag, err = s.SeatFragments(t.Context(), app.EventID, plain, false); err != nil || strings.Contains(string(frag), "incl. fees") || strings.Contains(string(frag), "from ") {
		t.Errorf("an event without types or fees: got %s (%v), want its plain price", truncate(frag), err)
	}
}
