package payment

import (
	"errors"
	"strings"

	"boxoffice/internal/booking"
)

// ErrDeclined is returned by Charge for the test card 4000 0000 0000 0002. It is
// booking.ErrCardDeclined: nothing was charged.
var ErrDeclined = booking.ErrCardDeclined

// ErrInvalidCard is returned by Charge for anything that is not one of the
// test cards: non-digits once spaces are removed, a wrong length, a failing
// Luhn check digit, or a valid but unknown number. It is booking.ErrInvalidCard.
var ErrInvalidCard = booking.ErrInvalidCard

// Stripe's test card numbers the test provider understands.
const (
	cardSucceeds  = "4242424242424242"
	cardDeclined  = "4000000000000002"
	cardFailLater = "4000000000000341" // taken, then fails: an asynchronous failure
)

// errFailsLater is cardOutcome's verdict on cardFailLater.
var errFailsLater = errors.New("card fails after the charge is taken")

// cardOutcome reports what charging card does: nil for success, ErrDeclined,
// errFailsLater or ErrInvalidCard. The checks run in the order a real acquirer applies them,
// so a typo is reported as invalid rather than as declined.
func cardOutcome(card string) error {
	number := strings.ReplaceAll(card, " ", "")
	if len(number) != len(cardSucceeds) || !luhn(number) {
		return ErrInvalidCard
	}
	switch number {
	case cardSucceeds:
		return nil
	case cardDeclined:
		return ErrDeclined
	case cardFailLater:
		return errFailsLater
	default:
		return ErrInvalidCard
	}
}

// luhn reports whether number is all digits and its check digit is right.
func luhn(number string) bool {
	sum := 0
	double := false
	for i := len(number) - 1; i >= 0; i-- {
		c := number[i]
		if c < '0' || c > '9' {
			return false
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return len(number) > 0 && sum%10 == 0
}
