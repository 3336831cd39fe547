package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"boxoffice/internal/booking"
)

// TestHoldRefusalsSayBookingsWords: a malformed hold is judged by booking alone. For
// each, the API answers 400 with the code and the words Buyer.CheckHold gives the same
// request (asked of the service directly), and the seat page's form says the same
// words; nothing is held.
func TestHoldRefusalsSayBookingsWords(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, noRateLimit)
	c := app.newClient(t)
	b := app.newBrowser(t)
	_, token := b.page("/events/demo-night/seats")
	seats := firstSeats(t, app.Pool, app.EventID, 11)
	s := seats[0]
	tier := int64(count(t, app.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, app.EventID))
	ids := func(n []int64) []string {
		out := make([]string, len(n))
		for i, id := range n {
			out[i] = itoa(id)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		req  booking.HoldRequest
		body any        // the API's request
		form url.Values // the seat page's form; nil: no form can ask it
	}{
		{"a seat twice", booking.HoldRequest{SeatIDs: []int64{s, s}}, map[string]any{"seatIds": []int64{s, s}}, url.Values{"seat": ids([]int64{s, s})}},
		{"eleven seats", booking.HoldRequest{SeatIDs: seats}, map[string]any{"seatIds": seats}, url.Values{"seat": ids(seats)}},
		{"no seat in the list", booking.HoldRequest{SeatIDs: []int64{}}, `{"seatIds": []}`, nil},
		{"seat id 0", booking.HoldRequest{SeatIDs: []int64{s, 0}}, map[string]any{"seatIds": []int64{s, 0}}, nil},
		{"seats and a section", booking.HoldRequest{SeatIDs: []int64{s}, Section: "Stalls"}, map[string]any{"seatIds": []int64{s}, "section": "Stalls"}, nil},
		{"quantity 0", booking.HoldRequest{Quantity: 0}, map[string]any{"quantity": 0}, url.Values{"quantity": {"0"}}},
		{"quantity 11", booking.HoldRequest{Quantity: 11}, map[string]any{"quantity": 11}, url.Values{"quantity": {"11"}}},
		{"NUL in the section", booking.HoldRequest{Quantity: 2, Section: "a\x00b"}, map[string]any{"quantity": 2, "section": "a\x00b"}, url.Values{"quantity": {"2"}, "section": {"a\x00b"}}},
		{"section of 101 characters", booking.HoldRequest{Quantity: 2, Section: strings.Repeat("s", 101)}, map[string]any{"quantity": 2, "section": strings.Repeat("s", 101)}, url.Values{"quantity": {"2"}, "section": {strings.Repeat("s", 101)}}},
		{"places without a number", booking.HoldRequest{GATierID: tier}, map[string]any{"gaTierId": tier}, nil},
		{"11 places", booking.HoldRequest{GATierID: tier, Quantity: 11}, map[string]any{"gaTierId": tier, "quantity": 11}, url.Values{"ga_tier": {itoa(tier)}, "ga_quantity": {"11"}}},
		{"places together", booking.HoldRequest{GATierID: tier, Quantity: 2, Together: true}, map[string]any{"gaTierId": tier, "quantity": 2, "together": true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inv *booking.InvalidError
			if err := app.Booking.Buyer.CheckHold(tc.req); !errors.As(err, &inv) {
				t.Fatalf("booking: got %v, want an *InvalidError (the case is not one booking refuses)", err)
			}
			words := strings.ToUpper(inv.Reason[:1]) + inv.Reason[1:] + "."
			before := saleState(t, app.Pool)

			st, raw, _, err := c.send(context.Background(), "POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if e, err := parseError(raw); err != nil || st != http.StatusBadRequest || e.Error != inv.Code || e.Message != words {
				t.Errorf("API: got %d %s %q (%v), want 400 %s %q", st, e.Error, e.Message, err, inv.Code, words)
			}
			if tc.form != nil {
				tc.form.Set("_csrf", token)
				st, body, _ := b.do("POST", "/events/demo-night/holds", tc.form, htmx)
				if msg := strings.TrimSpace(parseHTML(t, body).Find(".msg.error").Text()); st != http.StatusBadRequest || msg != words {
					t.Errorf("seat page: got %d %q, want 400 %q", st, msg, words)
				}
			}
			if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
				t.Errorf("a refused hold changed %v", d)
			}
		})
	}
}
