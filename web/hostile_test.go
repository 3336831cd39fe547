package web_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
)

// hostileCase is one request that must be refused with a 4xx and change nothing.
type hostileCase struct {
	name         string
	c            *client // who sends it
	method, path string
	body         any // as client.send takes it; nil sends no body
	header       http.Header
	status       int
	code         string
	free         []int64                         // demo seats that must stay available
	check        func(t *testing.T, e errorBody) // more to check in the answer
}

// TestHostileInputs sends requests that are malformed, oversized, forged or aimed at
// someone else's hold or order. Each must get the fitting 4xx with a JSON error, never
// a 5xx, and must leave every row a sale can change as it was.
func TestHostileInputs(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, noRateLimit) // one session sends them all, as fast as it can
	ev := "/api/v1/events/" + itoa(app.EventID)
	seats := firstSeats(t, app.Pool, app.EventID, 40)
	other := smallEvent(t, app.Pool, "other-night")
	otherSeats := firstSeats(t, app.Pool, other, 3)
	otherTier := int64(count(t, app.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, other))

	// a holds seats 0-1, has a pending order for 2-3, a confirmed one for 4-5 and a
	// lapsed hold on 6-7; b is another buyer. Seats from 10 on are untouched.
	a, b := app.newClient(t), app.newClient(t)
	held := a.hold(app.EventID, seats[0], seats[1])
	pending := a.checkout(a.hold(app.EventID, seats[2], seats[3]).HoldID)
	sold := a.hold(app.EventID, seats[4], seats[5])
	confirmed := a.checkout(sold.HoldID)
	a.pay(confirmed.OrderID, "")
	waitOrder(t, a, confirmed.OrderID, booking.StatusConfirmed)
	lapsed := a.hold(app.EventID, seats[6], seats[7])
	lapse(t, app.Pool, lapsed.HoldID)
	noToken := &client{t: t, http: a.http, base: a.base}                    // a's cookies, no token
	foreign := &client{t: t, http: a.http, base: a.base, csrf: b.csrf}      // a's cookies, b's token
	forged := &client{t: t, http: a.http, base: a.base, csrf: "x" + a.csrf} // a's cookies, a made-up token

	free := seats[10]
	one := map[string]any{"seatIds": []int64{free}}
	tooMany := make([]int64, 10_000)
	for i := range tooMany {
		tooMany[i] = seats[0] + int64(i)
	}
	huge := bytes.Repeat([]byte(" "), 10<<20)
	copy(huge[len(huge)-20:], `{"seatIds":[1]}`)
	deep := strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)
	jsonType := func(v string) http.Header { return http.Header{"Content-Type": {v}} }
	wantUnknown := func(ids ...int64) func(*testing.T, errorBody) {
		return func(t *testing.T, e errorBody) {
			if !slices.Equal(e.UnknownSeatIDs, ids) {
				t.Errorf("unknownSeatIds: got %v, want %v", e.UnknownSeatIDs, ids)
			}
		}
	}

	cases := []hostileCase{
		// Event ids in the path.
		{name: "event id not a number", c: a, method: "POST", path: "/api/v1/events/abc/holds", body: one, status: 400, code: "invalid_id", free: []int64{free}},
		{name: "event id negative", c: a, method: "POST", path: "/api/v1/events/-1/holds", body: one, status: 400, code: "invalid_id"},
		{name: "event id zero", c: a, method: "POST", path: "/api/v1/events/0/holds", body: one, status: 400, code: "invalid_id"},
		{name: "event id above int64", c: a, method: "POST", path: "/api/v1/events/9223372036854775808/holds", body: one, status: 400, code: "invalid_id"},
		{name: "event id of 25 digits", c: a, method: "POST", path: "/api/v1/events/1000000000000000000000000/holds", body: one, status: 400, code: "invalid_id"},
		{name: "event id with sign", c: a, method: "POST", path: "/api/v1/events/+1/holds", body: one, status: 400, code: "invalid_id"},
		{name: "event id max int64, unknown", c: a, method: "POST", path: "/api/v1/events/9223372036854775807/holds", body: one, status: 404, code: "event_not_found", free: []int64{free}},
		{name: "unknown event, best available", c: a, method: "POST", path: "/api/v1/events/9223372036854775807/holds", body: map[string]any{"quantity": 2}, status: 404, code: "event_not_found"},
		{name: "unknown event seat map", c: a, method: "GET", path: "/api/v1/events/9223372036854775807/seatmap", status: 404, code: "event_not_found"},
		{name: "unknown event queue", c: a, method: "GET", path: "/api/v1/events/9223372036854775807/queue", status: 404, code: "event_not_found"},
		{name: "seat map id not a number", c: a, method: "GET", path: "/api/v1/events/1e3/seatmap", status: 400, code: "invalid_id"},
		{name: "unknown event seat statuses", c: a, method: "GET", path: "/api/v1/events/9223372036854775807/seatmap/statuses", status: 404, code: "event_not_found"},
		{name: "unknown event seat layout", c: a, method: "GET", path: "/api/v1/events/9223372036854775807/seatmap/layout?v=x", status: 404, code: "event_not_found"},
		{name: "seat layout id not a number", c: a, method: "GET", path: "/api/v1/events/x/seatmap/layout", status: 400, code: "invalid_id"},

		// Seat ids.
		{name: "duplicate seat ids", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{free, free}}, status: 400, code: "duplicate_seat", free: []int64{free}},
		{name: "seats of another event", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": otherSeats}, status: 422, code: "unknown_seat", check: wantUnknown(otherSeats...)},
		{name: "a free seat and one of another event", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{free, otherSeats[0]}}, status: 422, code: "unknown_seat", free: []int64{free}, check: wantUnknown(otherSeats[0])},
		{name: "this event's seat under another event", c: a, method: "POST", path: "/api/v1/events/" + itoa(other) + "/holds", body: one, status: 422, code: "unknown_seat", free: []int64{free}, check: wantUnknown(free)},
		{name: "seat id that exists nowhere", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{free, 9_000_000_000}}, status: 422, code: "unknown_seat", free: []int64{free}, check: wantUnknown(9_000_000_000)},
		{name: "10,000 seat ids", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": tooMany}, status: 400, code: "too_many_seats", free: seats[10:20]},
		{name: "11 seats", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": seats[10:21]}, status: 400, code: "too_many_seats", free: seats[10:21]},
		{name: "empty seatIds", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": []}`, status: 400, code: "invalid_seat_ids"},
		{name: "null seatIds", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": null}`, status: 400, code: "invalid_request"},
		{name: "seat id 0", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{free, 0}}, status: 400, code: "invalid_seat_ids", free: []int64{free}},
		{name: "seat id negative", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{free, -free}}, status: 400, code: "invalid_seat_ids", free: []int64{free}},
		{name: "seat id a string", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": ["` + itoa(free) + `"]}`, status: 400, code: "invalid_json", free: []int64{free}},
		{name: "seat id a float", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [` + itoa(free) + `.5]}`, status: 400, code: "invalid_json", free: []int64{free}},
		{name: "seat id beyond int64", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [1e30]}`, status: 400, code: "invalid_json"},
		{name: "seatIds an object", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": {"0": 1}}`, status: 400, code: "invalid_json"},

		// Bodies.
		{name: "empty body", c: a, method: "POST", path: ev + "/holds", body: "", status: 400, code: "empty_body"},
		{name: "10 MB body", c: a, method: "POST", path: ev + "/holds", body: huge, status: 413, code: "body_too_large"},
		{name: "10 MB body, chunked", c: a, method: "POST", path: ev + "/holds", body: io.MultiReader(bytes.NewReader(huge)), status: 413, code: "body_too_large"},
		{name: "10 MB webhook", c: b, method: "POST", path: "/api/v1/payments/webhook", body: huge, status: 413, code: "body_too_large"},
		{name: "nesting 20,000 deep", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": ` + deep + `}`, status: 400, code: "invalid_json"},
		{name: "text/plain", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [` + itoa(free) + `]}`, header: jsonType("text/plain"), status: 415, code: "unsupported_media_type", free: []int64{free}},
		{name: "form encoded", c: a, method: "POST", path: ev + "/holds", body: "seatIds=" + itoa(free), header: jsonType("application/x-www-form-urlencoded"), status: 415, code: "unsupported_media_type", free: []int64{free}},
		{name: "no content type", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [` + itoa(free) + `]}`, header: jsonType(""), status: 415, code: "unsupported_media_type", free: []int64{free}},
		{name: "malformed JSON", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [` + itoa(free) + `,`, status: 400, code: "invalid_json", free: []int64{free}},
		{name: "trailing garbage", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [` + itoa(free) + `]} garbage`, status: 400, code: "invalid_json", free: []int64{free}},
		{name: "two objects", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [` + itoa(free) + `]}{"seatIds": [` + itoa(free) + `]}`, status: 400, code: "invalid_json", free: []int64{free}},
		{name: "array body", c: a, method: "POST", path: ev + "/holds", body: `[` + itoa(free) + `]`, status: 400, code: "invalid_json", free: []int64{free}},
		{name: "unknown field", c: a, method: "POST", path: ev + "/holds", body: `{"seatIds": [` + itoa(free) + `], "amountCents": 1}`, status: 400, code: "unknown_field", free: []int64{free}},

		// CSRF.
		{name: "missing CSRF token", c: noToken, method: "POST", path: ev + "/holds", body: one, status: 403, code: "csrf_failed", free: []int64{free}},
		{name: "another session's CSRF token", c: foreign, method: "POST", path: ev + "/holds", body: one, status: 403, code: "csrf_failed", free: []int64{free}},
		{name: "made-up CSRF token", c: forged, method: "DELETE", path: "/api/v1/holds/" + held.HoldID, status: 403, code: "csrf_failed"},
		{name: "cross-site browser POST", c: a, method: "POST", path: ev + "/holds", body: one, header: http.Header{"Sec-Fetch-Site": {"cross-site"}}, status: 403, code: "csrf_failed", free: []int64{free}},

		// Someone else's hold or order.
		{name: "another session's hold: get", c: b, method: "GET", path: "/api/v1/holds/" + held.HoldID, status: 404, code: "hold_not_found"},
		{name: "another session's hold: release", c: b, method: "DELETE", path: "/api/v1/holds/" + held.HoldID, status: 404, code: "hold_not_found"},
		{name: "another session's hold: checkout", c: b, method: "POST", path: "/api/v1/holds/" + held.HoldID + "/checkout", body: map[string]string{"email": "eve@example.com"}, status: 404, code: "hold_not_found"},
		{name: "hold id under another event", c: a, method: "GET", path: "/api/v1/holds/" + itoa(other) + strings.TrimPrefix(held.HoldID, itoa(app.EventID)), status: 404, code: "hold_not_found"},
		{name: "another session's order: get", c: b, method: "GET", path: "/api/v1/orders/" + itoa(pending.OrderID), status: 404, code: "order_not_found"},
		{name: "another session's order: pay", c: b, method: "POST", path: "/api/v1/orders/" + itoa(pending.OrderID) + "/pay", body: map[string]string{"card": "4242 4242 4242 4242"}, status: 404, code: "order_not_found"},
		{name: "unknown order", c: a, method: "GET", path: "/api/v1/orders/9223372036854775807", status: 404, code: "order_not_found"},

		// Holds and orders in the wrong state.
		{name: "checkout of a lapsed hold", c: a, method: "POST", path: "/api/v1/holds/" + lapsed.HoldID + "/checkout", body: map[string]string{"email": "ada@example.com"}, status: 410, code: "hold_expired"},
		{name: "get a lapsed hold", c: a, method: "GET", path: "/api/v1/holds/" + lapsed.HoldID, status: 410, code: "hold_expired"},
		{name: "release a sold hold", c: a, method: "DELETE", path: "/api/v1/holds/" + sold.HoldID, status: 409, code: "order_not_pending"},
		{name: "pay a confirmed order", c: a, method: "POST", path: "/api/v1/orders/" + itoa(confirmed.OrderID) + "/pay", body: map[string]string{"card": "4242 4242 4242 4242"}, status: 409, code: "order_not_pending"},

		// Text fields.
		{name: "NUL in email", c: a, method: "POST", path: "/api/v1/holds/" + held.HoldID + "/checkout", body: map[string]string{"email": "ada\x00@example.com"}, status: 400, code: "invalid_email"},
		{name: "invalid email", c: a, method: "POST", path: "/api/v1/holds/" + held.HoldID + "/checkout", body: map[string]string{"email": "not an address"}, status: 400, code: "invalid_email"},
		{name: "email with a display name", c: a, method: "POST", path: "/api/v1/holds/" + held.HoldID + "/checkout", body: map[string]string{"email": "Ada <ada@example.com>"}, status: 400, code: "invalid_email"},
		{name: "email of 300 characters", c: a, method: "POST", path: "/api/v1/holds/" + held.HoldID + "/checkout", body: map[string]string{"email": strings.Repeat("a", 288) + "@example.com"}, status: 400, code: "invalid_email"},
		{name: "unknown field in checkout", c: a, method: "POST", path: "/api/v1/holds/" + held.HoldID + "/checkout", body: map[string]string{"email": "ada@example.com", "amountCents": "0"}, status: 400, code: "unknown_field"},
		{name: "NUL in section", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"quantity": 2, "section": "Stalls\x00"}, status: 400, code: "invalid_section"},
		{name: "section of 101 characters", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"quantity": 2, "section": strings.Repeat("s", 101)}, status: 400, code: "invalid_section"},
		{name: "gaTierId 0", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"gaTierId": 0, "quantity": 2}, status: 400, code: "invalid_ga_tier"},

		// Quantities and general admission.
		{name: "unknown GA tier", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"gaTierId": 9_000_000_000, "quantity": 2}, status: 404, code: "ga_tier_not_found"},
		{name: "GA tier of another event", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"gaTierId": otherTier, "quantity": 2}, status: 404, code: "ga_tier_not_found"},
		{name: "GA tier without quantity", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"gaTierId": otherTier}, status: 400, code: "invalid_quantity"},
		{name: "quantity 0", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"quantity": 0}, status: 400, code: "invalid_quantity"},
		{name: "quantity 11", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"quantity": 11}, status: 400, code: "invalid_quantity"},
		{name: "quantity -1", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"quantity": -1}, status: 400, code: "invalid_quantity"},
		{name: "quantity above int64", c: a, method: "POST", path: ev + "/holds", body: `{"quantity": 99999999999999999999}`, status: 400, code: "invalid_json"},
		{name: "seatIds and quantity", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{free}, "quantity": 1}, status: 400, code: "invalid_request", free: []int64{free}},
		{name: "nothing asked", c: a, method: "POST", path: ev + "/holds", body: `{}`, status: 400, code: "invalid_request"},

		// Seats someone has, and the per-buyer limit (a has 6 of its 10).
		{name: "a seat another buyer holds", c: b, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{free, seats[1]}}, status: 409, code: "seat_unavailable", free: []int64{free}, check: func(t *testing.T, e errorBody) {
			if !slices.Equal(e.ConflictingSeatIDs, []int64{seats[1]}) {
				t.Errorf("conflictingSeatIds: got %v, want [%d]", e.ConflictingSeatIDs, seats[1])
			}
		}},
		{name: "a seat sold to another buyer", c: b, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": []int64{seats[4]}}, status: 409, code: "seat_unavailable"},
		{name: "past the per-buyer limit", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"seatIds": seats[10:15]}, status: 409, code: "limit_exceeded", free: seats[10:15]},
		{name: "past the limit, best available", c: a, method: "POST", path: ev + "/holds", body: map[string]any{"quantity": 5}, status: 409, code: "limit_exceeded"},

		// Methods and routes.
		{name: "PUT on holds", c: a, method: "PUT", path: ev + "/holds", body: one, status: 405, code: "method_not_allowed", free: []int64{free}},
		{name: "GET on the webhook", c: a, method: "GET", path: "/api/v1/payments/webhook", status: 405, code: "method_not_allowed"},
		{name: "PATCH on a hold", c: a, method: "PATCH", path: "/api/v1/holds/" + held.HoldID, body: `{}`, status: 405, code: "method_not_allowed"},
		{name: "unknown route", c: a, method: "GET", path: "/api/v1/tickets", status: 404, code: "not_found"},

		// Hold and order ids.
		{name: "hold id abc", c: a, method: "GET", path: "/api/v1/holds/abc", status: 400, code: "invalid_id"},
		{name: "hold id 1-", c: a, method: "DELETE", path: "/api/v1/holds/1-", status: 400, code: "invalid_id"},
		{name: "hold id -1-2", c: a, method: "POST", path: "/api/v1/holds/-1-2/checkout", body: map[string]string{"email": "ada@example.com"}, status: 400, code: "invalid_id"},
		{name: "hold id 1-2-3", c: a, method: "GET", path: "/api/v1/holds/1-2-3", status: 400, code: "invalid_id"},
		{name: "hold id 0-1", c: a, method: "GET", path: "/api/v1/holds/0-1", status: 400, code: "invalid_id"},
		{name: "order id not a number", c: a, method: "GET", path: "/api/v1/orders/abc", status: 400, code: "invalid_id"},

		// Payment.
		{name: "invalid card", c: a, method: "POST", path: "/api/v1/orders/" + itoa(pending.OrderID) + "/pay", body: map[string]string{"card": "1234 5678 9012 3456"}, status: 400, code: "invalid_card"},
		{name: "card a number", c: a, method: "POST", path: "/api/v1/orders/" + itoa(pending.OrderID) + "/pay", body: `{"card": 4242424242424242}`, status: 400, code: "invalid_json"},
		{name: "unknown delivery mode", c: a, method: "POST", path: "/api/v1/orders/" + itoa(pending.OrderID) + "/pay", body: map[string]string{"card": "4242 4242 4242 4242", "delivery": "never"}, status: 400, code: "invalid_delivery"},
		{name: "unsigned webhook", c: b, method: "POST", path: "/api/v1/payments/webhook", body: `{"id": "evt_1", "type": "payment_intent.succeeded"}`, status: 400, code: "invalid_signature"},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := saleState(t, app.Pool)
			st, raw, hdr, err := tc.c.send(context.Background(), tc.method, tc.path, tc.body, tc.header)
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.status {
				t.Errorf("got status %d, want %d; answer %s", st, tc.status, truncate(raw))
			}
			if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("got Content-Type %q, want application/json", ct)
			}
			e, err := parseError(raw)
			if err != nil {
				t.Error(err)
			} else if e.Error != tc.code {
				t.Errorf("got error %q (%s), want %q", e.Error, e.Message, tc.code)
			}
			if tc.check != nil {
				tc.check(t, e)
			}
			if changed := stateDiff(before, saleState(t, app.Pool)); len(changed) > 0 {
				t.Errorf("the request changed the sale: %v", changed)
			}
			for _, id := range tc.free {
				if !seatFree(t, app.Pool, app.EventID, id) {
					t.Errorf("seat %d: got taken, want still available", id)
				}
			}
		})
	}

	// Whatever was refused, the buyer's own things still work.
	if st := a.do("GET", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusOK {
		t.Errorf("a's own hold after the attacks: got status %d, want 200", st)
	}
	if st := a.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Errorf("a releasing its own hold: got status %d, want 204", st)
	}
	bookingtest.Check(t, app.Pool, app.EventID)
	bookingtest.Check(t, app.Pool, other)
}
