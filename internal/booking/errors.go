package booking

import (
	"errors"
	"fmt"
	"time"

	"boxoffice/internal/dberr"
)

// Errors a caller can act on. Anything else is a bug.
var (
	ErrEventNotFound   = errors.New("event not found")
	ErrHoldNotFound    = errors.New("hold not found")
	ErrOrderNotFound   = errors.New("order not found")
	ErrGATierNotFound  = errors.New("general admission tier not found")
	ErrHoldExpired     = errors.New("hold expired")
	ErrSoldOut         = errors.New("sold out")
	ErrOrderNotPending = errors.New("order is not awaiting payment")
	ErrNoPayments      = errors.New("no payment provider configured")
	// ErrPaymentInProgress means a payment for the order is already under way.
	ErrPaymentInProgress = errors.New("a payment for this order is already under way")
	// ErrContended means best available kept finding its choices taken by quicker
	// buyers; seats may remain, and asking again may succeed.
	ErrContended = errors.New("seats are being taken faster than they can be offered")
	// ErrUnavailable means the database could not be reached or gave up for a moment;
	// the same request may succeed shortly.
	ErrUnavailable = dberr.ErrUnavailable
	// ErrNotOnSale means the event's sale has not opened yet. Every such error is a
	// *NotOnSaleError, which says when it opens.
	ErrNotOnSale = errors.New("not on sale yet")
	// ErrSalesClosed means the event's sale is over (by default at the event's start):
	// nothing more is held, checked out or paid for. Payments already under way are
	// still confirmed.
	ErrSalesClosed = errors.New("sales have closed")
	// ErrPresaleQuota means the presale the buyer's access code opens has not the
	// places asked for left: its quota is held or sold.
	ErrPresaleQuota = errors.New("the presale's places are all taken")
)

// NotOnSaleError says that the event's sale opens at OnsaleAt; errors.Is(err,
// ErrNotOnSale) holds for it.
type NotOnSaleError struct{ OnsaleAt time.Time }

func (e *NotOnSaleError) Error() string {
	return "not on sale until " + e.OnsaleAt.UTC().Format(time.RFC3339)
}

// Is makes every NotOnSaleError an ErrNotOnSale.
func (e *NotOnSaleError) Is(target error) bool { return target == ErrNotOnSale }

// SeatsUnavailableError says which of the asked-for seats someone else holds or owns.
type SeatsUnavailableError struct{ SeatIDs []int64 }

func (e *SeatsUnavailableError) Error() string {
	return fmt.Sprintf("%d seat(s) unavailable", len(e.SeatIDs))
}

// UnknownSeatsError names seat ids that are not seats of the event.
type UnknownSeatsError struct{ SeatIDs []int64 }

func (e *UnknownSeatsError) Error() string {
	return fmt.Sprintf("%d seat(s) not in this event", len(e.SeatIDs))
}

// LimitError says a buyer would pass the per-event limit.
type LimitError struct {
	Limit int // the most a buyer may hold or own
	Held  int // what the buyer holds or owns now
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("at most %d seats per buyer; %d already held or bought", e.Limit, e.Held)
}

// ClientLimitError says the client network the hold came from would pass its limit
// of seats and places held at once on the event.
type ClientLimitError struct {
	Limit int // the most one network may hold at once
	Held  int // what it holds now
	// NextFree is when the first of its holds lapses, unless bought or released before.
	NextFree time.Time
}

func (e *ClientLimitError) Error() string {
	return fmt.Sprintf("at most %d seats held at once from one network; %d held", e.Limit, e.Held)
}

// translate maps database outages to ErrUnavailable; see dberr.Translate.
func translate(err error) error { return dberr.Translate(err) }

// InvalidError says what is wrong with a request, in words for the person who sent
// it; it unwraps to its kind (ErrInvalidHold, ErrInvalidSale, ErrInvalidStaffHold).
type InvalidError struct {
	Kind error
	// Code names the fault for programs ("too_many_seats"); empty: "invalid_request".
	Code   string
	Reason string // a sentence without its full stop: "a seat is named twice"
}

func (e *InvalidError) Error() string { return e.Kind.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, e.Kind) true.
func (e *InvalidError) Unwrap() error { return e.Kind }

func invalid(kind error, format string, args ...any) error {
	return &InvalidError{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}
