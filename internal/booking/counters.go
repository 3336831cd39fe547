package booking

import (
	"errors"

	"boxoffice/internal/db"
)

// Counters hears what the service decided, after it committed: the figures behind
// /metrics (internal/metrics implements it). They are counted here, where holds and
// confirmations are decided, not guessed from HTTP statuses, so that confirmations by
// webhook, by reconciliation and at a free checkout count alike, and a replayed
// webhook (which decides nothing new) counts nothing.
type Counters interface {
	// HoldCreated: a hold of seats or places committed.
	HoldCreated()
	// HoldConflict: a hold refused because its seats were taken, or not enough seats or
	// places were left (409 seat_unavailable, sold_out).
	HoldConflict()
	// OrderConfirmed: an order was sold, with its tickets issued.
	OrderConfirmed(tickets int)
	// Refunded: the provider confirmed a refund.
	Refunded()
}

// BestAvailableCounts says how best available has gone since the service started:
// holds whose seats came from the seat map the process keeps (the rest the search in
// the database found), and choices from the map that someone else had taken (the map
// was behind on them). /metrics reads them at each scrape.
func (s *Maps) BestAvailableCounts() (fromMap, mapMisses int64) {
	return s.bestFromMap.Load(), s.bestMapMisses.Load()
}

// isConflict says whether a hold was refused for want of seats, as the API's 409s:
// taken, being taken by others (busy: ErrContended), or not enough left.
func isConflict(err error) bool {
	var taken *SeatsUnavailableError
	return errors.As(err, &taken) || errors.Is(err, ErrSoldOut) || errors.Is(err, ErrContended)
}

// countPayment counts what a committed payment event did.
func (s *store) countPayment(outcome PaymentOutcome, o db.Order) {
	switch {
	case s.counters == nil:
	case outcome == OutcomeConfirmed:
		s.countConfirmed(o)
	case outcome == OutcomeRefunded:
		s.counters.Refunded()
	}
}

// countConfirmed counts a committed sale of o: sell issues one ticket per seat and
// per general-admission place, or nothing at all.
func (s *store) countConfirmed(o db.Order) {
	if s.counters != nil {
		s.counters.OrderConfirmed(len(o.SeatIds) + int(o.GaQuantity))
	}
}
