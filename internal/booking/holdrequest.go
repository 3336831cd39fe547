package booking

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// MaxHoldSeats bounds the seats one hold request names, whatever the per-buyer limit:
// a bound on one request's work.
const MaxHoldSeats = 100

// MaxSectionName bounds the section a best-available request names, in bytes.
const MaxSectionName = 100

// ErrInvalidHold: a hold request that no buyer could be given, whatever the seats'
// state: its seats, quantity, section or tier cannot be, or it mixes the kinds of hold.
// Every such error is an *InvalidError whose Code and Reason say what is wrong.
var ErrInvalidHold = errors.New("invalid hold request")

// CheckHold says what is wrong with what a hold request asks for, or nil: the one
// place a hold request is validated. Hold checks it again before anything else; a
// handler calls it first, to refuse a malformed request before it spends a proof of
// work or a rate limit on it. It needs neither the buyer nor the database.
//
// Of the per-buyer limit it checks only that one request asks for no more than the
// limit (Config.MaxPerBuyer), which no buyer can ever be given: the database refuses
// that too, but this answer costs no round trip and names the request's fault. What the
// buyer already holds or owns is counted by the statement that holds (buyer_places,
// in hold_seats and HoldCreate), the only authority on the rest of the limit.
func (s *Buyer) CheckHold(req HoldRequest) error { return s.checkHold(req) }

// checkHold is CheckHold, for Hold itself.
func (s *store) checkHold(req HoldRequest) error { return req.check(s.cfg.MaxPerBuyer) }

// check is CheckHold with the per-buyer limit given.
func (r HoldRequest) check(limit int) error {
	switch {
	case r.SeatIDs != nil:
		if r.Quantity != 0 || r.Section != "" || r.PriceCents != nil || r.Together || r.GATierID != 0 {
			return invalidHold("invalid_request", "ask for seats by their ids alone: quantity, section, price and together are for best available, a tier for standing places")
		}
		return checkSeatIDs(r.SeatIDs, min(limit, MaxHoldSeats))
	case r.GATierID != 0:
		switch {
		case r.GATierID < 0:
			return invalidHold("invalid_ga_tier", "that is not a standing tier of this event")
		case r.Section != "" || r.PriceCents != nil || r.Together:
			return invalidHold("invalid_request", "section, price and together do not apply to standing places")
		case r.Quantity < 1 || r.Quantity > limit:
			return invalidHold("invalid_quantity", "choose from 1 to %d places", limit)
		}
		return nil
	}
	if r.Quantity < 1 || r.Quantity > limit {
		return invalidHold("invalid_quantity", "choose from 1 to %d seats", limit)
	}
	if p := r.PriceCents; p != nil && (*p < 0 || *p > math.MaxInt32) {
		return invalidHold("invalid_price", "a price is a whole number of cents from 0 up")
	}
	return checkSection(r.Section)
}

// priceRange is the prices best available may choose from, in cents: the one asked
// for, or any.
func (r HoldRequest) priceRange() (lo, hi int32) {
	if r.PriceCents == nil {
		return 0, math.MaxInt32
	}
	return int32(*r.PriceCents), int32(*r.PriceCents)
}

// priceKey is the price asked for, or -1 for any.
func (r HoldRequest) priceKey() int {
	if r.PriceCents == nil {
		return -1
	}
	return *r.PriceCents
}

// checkSeatIDs: at least one seat and at most most, each a positive id, none twice.
func checkSeatIDs(ids []int64, most int) error {
	switch {
	case len(ids) == 0:
		return invalidHold("invalid_seat_ids", "choose at least one seat")
	case len(ids) > most:
		return invalidHold("too_many_seats", "you can hold at most %d seats at once", most)
	}
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if id <= 0 {
			return invalidHold("invalid_seat_ids", "seat ids are positive whole numbers")
		}
		if seen[id] {
			return invalidHold("duplicate_seat", "seat %d is asked for twice", id)
		}
		seen[id] = true
	}
	return nil
}

// checkSection: a section's name (empty: any section) is plain text of at most
// MaxSectionName bytes.
func checkSection(name string) error {
	switch {
	case len(name) > MaxSectionName:
		return invalidHold("invalid_section", "the section's name is longer than %d characters", MaxSectionName)
	case !utf8.ValidString(name) || strings.ContainsRune(name, 0):
		return invalidHold("invalid_section", "the section's name contains characters that are not allowed")
	}
	return nil
}

func invalidHold(code, format string, args ...any) error {
	return &InvalidError{Kind: ErrInvalidHold, Code: code, Reason: fmt.Sprintf(format, args...)}
}
