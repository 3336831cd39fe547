package web_test

import (
	"boxoffice/internal/staff"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// presaleCode makes an access code on event with a presale window (the SQL of its
// start and end) and a quota (0: none).
func presaleCode(t *testing.T, app *testApp, event int64, code, window string, quota int, paused bool) {
	t.Helper()
	if _, err := app.Pool.Exec(t.Context(), `INSERT INTO access_codes (event_id, code, presale_starts_at, presale_ends_at, quota, paused)
		VALUES ($1, $2, `+window+`, nullif($3::int, 0), $4)`, event, code, quota, paused); err != nil {
		t.Fatal(err)
	}
}

const (
	presaleNow  = `now() - interval '10 minutes', now() + interval '50 minutes'`
	presalePast = `now() - interval '50 minutes', now() - interval '10 minutes'`
)

// TestPresaleAPI: before the onsale a buyer who entered the event's access code holds,
// checks out and pays with the test card, and the order is confirmed; a buyer without
// it is told not_on_sale. Paused, ended, unknown and other events' codes are refused.
func TestPresaleAPI(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	setWindow(t, app.Pool, app.EventID, windowBefore)
	other := count(t, app.Pool, `INSERT INTO events (venue_id, slug, name, starts_at, onsale_at, published)
		SELECT venue_id, slug || '-other', name, starts_at, onsale_at, published FROM events WHERE id = $1 RETURNING id`, app.EventID)
	presaleCode(t, app, app.EventID, "MEMBERS", presaleNow, 4, false)
	presaleCode(t, app, app.EventID, "PAUSED", presaleNow, 0, true)
	presaleCode(t, app, app.EventID, "OVER", presalePast, 0, false)
	presaleCode(t, app, int64(other), "ELSEWHERE", presaleNow, 0, false)
	seats := firstSeats(t, app.Pool, app.EventID, 3)
	codePath := "/api/v1/events/" + itoa(app.EventID) + "/access-code"
	holdPath := "/api/v1/events/" + itoa(app.EventID) + "/holds"

	ada, bob := app.newClient(t), app.newClient(t)
	before := saleState(t, app.Pool)
	st, raw, _ := bob.raw("POST", holdPath, map[string]any{"seatIds": seats[2:3]}, nil)
	refusedBy(t, app, "a hold without a code", "not_on_sale", st, raw, before)

	for code, want := range map[string]struct {
		status int
		err    string
	}{
		"NOPE": {422, "access_code_unknown"}, "ELSEWHERE": {422, "access_code_unknown"},
		"PAUSED": {409, "access_code_paused"}, "OVER": {409, "access_code_ended"},
	} {
		st, raw, _ := bob.raw("POST", codePath, map[string]string{"code": code}, nil)
		if e, err := parseError(raw); err != nil || st != want.status || e.Error != want.err {
			t.Errorf("code %s: got %d %s, want %d %s", code, st, truncate(raw), want.status, want.err)
		}
	}
	st, raw, _ = bob.raw("POST", holdPath, map[string]any{"seatIds": seats[2:3]}, nil)
	refusedBy(t, app, "a hold after refused codes", "not_on_sale", st, raw, before)

	var entered struct{ Code string }
	if st := ada.do("POST", codePath, map[string]string{"code": " members "}, &entered); st != http.StatusOK || entered.Code != "MEMBERS" {
		t.Fatalf("entering the code: got %d %+v, want 200 MEMBERS", st, entered)
	}
	h := ada.hold(app.EventID, seats[:2]...)
	co := ada.checkout(h.HoldID)
	ada.pay(co.OrderID, "normal")
	waitOrder(t, ada, co.OrderID, "confirmed")
	if n := count(t, app.Pool, `SELECT count(*) FROM seats s JOIN tickets k ON k.seat_id = s.id
		WHERE s.event_id = $1 AND s.id = ANY($2)`, app.EventID, seats[:2]); n != 2 {
		t.Errorf("got %d tickets for the presale's seats, want 2", n)
	}
	if n := count(t, app.Pool, `SELECT access_code_places($1, (SELECT id FROM access_codes WHERE code = 'MEMBERS'))`, app.EventID); n != 2 {
		t.Errorf("the code's places: got %d, want 2", n)
	}
	// The confirmation counted the places against the code, and staff see it on the order.
	if n := count(t, app.Pool, `SELECT places_used FROM access_codes WHERE code = 'MEMBERS'`); n != 2 {
		t.Errorf("the code's places_used: got %d, want 2", n)
	}
	bo, _ := app.staffClient(t, staff.BoxOffice)
	if p := bo.page("/admin/orders/"+itoa(co.OrderID), false); p.status != http.StatusOK ||
		strings.TrimSpace(p.doc.Find("dd.access-code").Text()) != "MEMBERS, 2 of its places" {
		t.Errorf("the admin order page: status %d, presale code %q; want 200 and %q", p.status, p.doc.Find("dd.access-code").Text(), "MEMBERS, 2 of its places")
	}
	st, raw, _ = ada.raw("POST", holdPath, map[string]any{"seatIds": seats[2:3]}, nil)
	if st != http.StatusCreated {
		t.Errorf("a third place of four: got %d %s, want 201", st, truncate(raw))
	}
}

// TestPresalePages: the event page links to the code page before the onsale; the seat
// form says when the sale opens to a buyer without a code, the code page takes the
// code and says the presale is open, and the same form then holds under the code.
func TestPresalePages(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	setWindow(t, app.Pool, app.EventID, windowBefore)
	presaleCode(t, app, app.EventID, "MEMBERS", presaleNow, 0, false)
	seats := firstSeats(t, app.Pool, app.EventID, 1)
	b := app.newBrowser(t)
	if st, body, _ := b.do("GET", "/events/demo-night", nil, nil); st != http.StatusOK || !strings.Contains(string(body), `href="/events/demo-night/code"`) {
		t.Errorf("event page before the onsale: got %d without a link to the code page", st)
	}
	_, token := b.page("/events/demo-night/seats")
	hold := url.Values{"_csrf": {token}, "seat": {itoa(seats[0])}}
	st, body, _ := b.do("POST", "/events/demo-night/holds", hold, htmx)
	if st != http.StatusConflict || !strings.Contains(string(body), "Tickets go on sale on") {
		t.Fatalf("seat form without a code: got %d, want 409 saying when tickets go on sale: %s", st, truncate(body))
	}
	st, body, _ = b.do("POST", "/events/demo-night/code", url.Values{"_csrf": {token}, "code": {"NOPE"}}, nil)
	if st != http.StatusUnprocessableEntity || !strings.Contains(string(body), "not an access code for this event") {
		t.Errorf("code page, a wrong code: got %d, want 422 saying so: %s", st, truncate(body))
	}
	st, body, _ = b.do("POST", "/events/demo-night/code", url.Values{"_csrf": {token}, "code": {"members"}}, nil)
	if st != http.StatusOK || !strings.Contains(string(body), "Your presale is open now") {
		t.Fatalf("code page: got %d, want 200 saying the presale is open: %s", st, truncate(body))
	}
	if st, body, _ = b.do("POST", "/events/demo-night/holds", hold, htmx); st >= 400 {
		t.Fatalf("seat form with the code: got %d: %s", st, truncate(body))
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM seats s JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
		WHERE s.id = $1 AND h.access_code_id IS NOT NULL`, seats[0]); n != 1 {
		t.Errorf("the seat is not held under the code (%d)", n)
	}
}
