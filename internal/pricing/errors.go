package pricing

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRule is what every rule a basket breaks unwraps to.
var ErrRule = errors.New("pricing rule broken")

// Violations are the rules a basket breaks, each one of the *…Error types below;
// errors.As finds each, and errors.Is(v, ErrRule) holds.
type Violations []error

func (v Violations) Error() string {
	msgs := make([]string, len(v))
	for i, e := range v {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap lets errors.As reach each violation.
func (v Violations) Unwrap() []error { return append([]error{ErrRule}, v...) }

// CapError: more tickets of a type than its cap per order.
type CapError struct {
	Type       string
	Cap, Count int
}

func (e *CapError) Error() string {
	return fmt.Sprintf("at most %d %s tickets per order; the basket has %d", e.Cap, e.Type, e.Count)
}

// NeedsAdultError: a type that needs an adult in an order without one.
type NeedsAdultError struct{ Type string }

func (e *NeedsAdultError) Error() string {
	return fmt.Sprintf("a %s ticket needs an adult ticket in the same order", e.Type)
}

// DeskOnlyError: a type only the box office sells, bought online.
type DeskOnlyError struct{ Type string }

func (e *DeskOnlyError) Error() string {
	return fmt.Sprintf("%s tickets are sold only at the box office", e.Type)
}

// Why a type cannot be sold on a line.
const (
	TypeUnknown    = "is not a ticket type of this event"
	TypePaused     = "is not on sale"
	TypeNeedsCode  = "needs an access code"
	TypeNotAtLevel = "is not offered at this price level"
	TypeNone       = "no ticket type is offered at this price level"
)

// TypeError: a line's type cannot be sold there; Reason is one of the Type… texts.
type TypeError struct {
	Type   string // the type's name, or its id when unknown; empty with TypeNone
	Reason string
}

func (e *TypeError) Error() string {
	if e.Type == "" {
		return e.Reason
	}
	return e.Type + " " + e.Reason
}

// Why a voucher does not apply.
const (
	VoucherPaused     = "is paused"
	VoucherNotYet     = "is not valid yet"
	VoucherExpired    = "has expired"
	VoucherUsedUp     = "has been used as often as it may be"
	VoucherNotForThis = "is not for any ticket in this basket"
)

// VoucherError: the voucher entered cannot be used; Reason is one of the Voucher… texts.
type VoucherError struct {
	Code   string
	Reason string
}

func (e *VoucherError) Error() string { return fmt.Sprintf("voucher %s %s", e.Code, e.Reason) }
