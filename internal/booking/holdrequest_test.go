package booking

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckHold: each way a hold request can be malformed is refused with its code
// and its reason, and the well-formed ones of each kind pass.
func TestCheckHold(t *testing.T) {
	t.Parallel()
	s := &Buyer{&store{cfg: Config{MaxPerBuyer: 10}}}
	many := make([]int64, 11)
	for i := range many {
		many[i] = int64(i + 1)
	}
	price, zero, negative := 3900, 0, -1
	for _, tc := range []struct {
		name   string
		req    HoldRequest
		code   string // empty: accepted
		reason string
	}{
		{"seats", HoldRequest{SeatIDs: []int64{3, 1, 2}}, "", ""},
		{"ten seats", HoldRequest{SeatIDs: many[:10]}, "", ""},
		{"best available", HoldRequest{Quantity: 10, Section: "Stalls", Together: true}, "", ""},
		{"best available, any section", HoldRequest{Quantity: 1}, "", ""},
		{"standing", HoldRequest{GATierID: 7, Quantity: 10}, "", ""},

		{"empty seat list", HoldRequest{SeatIDs: []int64{}}, "invalid_seat_ids", "choose at least one seat"},
		{"eleven seats", HoldRequest{SeatIDs: many}, "too_many_seats", "you can hold at most 10 seats at once"},
		{"seat id 0", HoldRequest{SeatIDs: []int64{4, 0}}, "invalid_seat_ids", "seat ids are positive whole numbers"},
		{"seat id negative", HoldRequest{SeatIDs: []int64{-4}}, "invalid_seat_ids", "seat ids are positive whole numbers"},
		{"a seat twice", HoldRequest{SeatIDs: []int64{4, 5, 4}}, "duplicate_seat", "seat 4 is asked for twice"},
		{"seats and a quantity", HoldRequest{SeatIDs: []int64{4}, Quantity: 1}, "invalid_request", "ask for seats by their ids alone"},
		{"seats and a section", HoldRequest{SeatIDs: []int64{4}, Section: "Stalls"}, "invalid_request", "ask for seats by their ids alone"},
		{"seats and together", HoldRequest{SeatIDs: []int64{4}, Together: true}, "invalid_request", "ask for seats by their ids alone"},
		{"seats and a tier", HoldRequest{SeatIDs: []int64{4}, GATierID: 7, Quantity: 1}, "invalid_request", "ask for seats by their ids alone"},
		{"nothing", HoldRequest{}, "invalid_quantity", "choose from 1 to 10 seats"},
		{"quantity 0", HoldRequest{Quantity: 0, Together: true}, "invalid_quantity", "choose from 1 to 10 seats"},
		{"quantity 11", HoldRequest{Quantity: 11}, "invalid_quantity", "choose from 1 to 10 seats"},
		{"quantity -1", HoldRequest{Quantity: -1}, "invalid_quantity", "choose from 1 to 10 seats"},
		{"section of 101 bytes", HoldRequest{Quantity: 2, Section: strings.Repeat("s", 101)}, "invalid_section", "the section's name is longer than 100 characters"},
		{"NUL in section", HoldRequest{Quantity: 2, Section: "Stalls\x00"}, "invalid_section", "the section's name contains characters that are not allowed"},
		{"section not UTF-8", HoldRequest{Quantity: 2, Section: "St\xffalls"}, "invalid_section", "the section's name contains characters that are not allowed"},
		{"tier without quantity", HoldRequest{GATierID: 7}, "invalid_quantity", "choose from 1 to 10 places"},
		{"tier, 11 places", HoldRequest{GATierID: 7, Quantity: 11}, "invalid_quantity", "choose from 1 to 10 places"},
		{"tier negative", HoldRequest{GATierID: -7, Quantity: 1}, "invalid_ga_tier", "that is not a standing tier of this event"},
		{"tier and a section", HoldRequest{GATierID: 7, Quantity: 1, Section: "Stalls"}, "invalid_request", "section, price and together do not apply to standing places"},
		{"tier and together", HoldRequest{GATierID: 7, Quantity: 1, Together: true}, "invalid_request", "section, price and together do not apply to standing places"},
		{"tier and a price", HoldRequest{GATierID: 7, Quantity: 1, PriceCents: &price}, "invalid_request", "section, price and together do not apply to standing places"},
		{"seats and a price", HoldRequest{SeatIDs: []int64{4}, PriceCents: &price}, "invalid_request", "ask for seats by their ids alone"},
		{"best available at a price", HoldRequest{Quantity: 2, PriceCents: &price}, "", ""},
		{"best available at a free price", HoldRequest{Quantity: 2, PriceCents: &zero}, "", ""},
		{"a negative price", HoldRequest{Quantity: 2, PriceCents: &negative}, "invalid_price", "a price is a whole number of cents from 0 up"},
	} {
		err := s.CheckHold(tc.req)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: got %v, want it accepted", tc.name, err)
			}
			continue
		}
		var inv *InvalidError
		if !errors.As(err, &inv) || !errors.Is(err, ErrInvalidHold) {
			t.Errorf("%s: got %v, want an *InvalidError of ErrInvalidHold", tc.name, err)
			continue
		}
		if inv.Code != tc.code || !strings.HasPrefix(inv.Reason, tc.reason) {
			t.Errorf("%s: got %s %q, want %s %q", tc.name, inv.Code, inv.Reason, tc.code, tc.reason)
		}
	}
}

// TestCheckHoldBoundsSeats: with a per-buyer limit above MaxHoldSeats, one request
// still names at most MaxHoldSeats seats.
func TestCheckHoldBoundsSeats(t *testing.T) {
	t.Parallel()
	s := &Buyer{&store{cfg: Config{MaxPerBuyer: 500}}}
	ids := make([]int64, MaxHoldSeats+1)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	var inv *InvalidError
	if err := s.CheckHold(HoldRequest{SeatIDs: ids}); !errors.As(err, &inv) || inv.Code != "too_many_seats" {
		t.Errorf("%d seats under a limit of 500: got %v, want too_many_seats", len(ids), err)
	}
	if err := s.CheckHold(HoldRequest{SeatIDs: ids[:MaxHoldSeats]}); err != nil {
		t.Errorf("%d seats under a limit of 500: got %v, want it accepted", MaxHoldSeats, err)
	}
}
