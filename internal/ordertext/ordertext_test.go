package ordertext

import (
	"strings"
	"testing"

	"boxoffice/internal/booking"
)

// TestRefundCauseWordsEveryReason: every reason booking records on a refunded order has
// words of its own. The order page once lacked three of them and fell back to "We
// could not complete this sale".
func TestRefundCauseWordsEveryReason(t *testing.T) {
	t.Parallel()
	fallback := RefundCause("", 10)
	seen := map[string]string{}
	for _, r := range []string{
		booking.ReasonSeatsUnavailable, booking.ReasonSoldOut, booking.ReasonBuyerLimit,
		booking.ReasonAmountMismatch, booking.ReasonOrderExpired, booking.ReasonHoldLapsed,
		booking.ReasonOrderClosed, booking.ReasonOtherPayment, booking.ReasonAlreadyPaid,
	} {
		got := RefundCause(r, 10)
		if got == fallback {
			t.Errorf("RefundCause(%q): got the fallback %q, want words of its own", r, got)
		}
		seen[r] = got
	}
	if !strings.Contains(seen[booking.ReasonBuyerLimit], "10 tickets") {
		t.Errorf("buyer limit: got %q, want the limit named", seen[booking.ReasonBuyerLimit])
	}
}

func TestTicketPlace(t *testing.T) {
	t.Parallel()
	o := booking.Order{
		Seats: []booking.Seat{{ID: 7, Section: "Stalls", Row: "F", Number: 12}},
		GA:    &booking.GAPlaces{TierID: 3, TierName: "Standing", Quantity: 1},
	}
	place, name := TicketPlace(o, booking.Ticket{SeatID: 7})
	if len(place) != 3 || place[0].Value != "Stalls" || place[1].Value != "F" || place[2].Value != "12" ||
		name != "QR code of the ticket for Stalls, row F, seat 12" {
		t.Errorf("seat ticket: got %+v %q, want section, row and seat", place, name)
	}
	place, name = TicketPlace(o, booking.Ticket{GATierID: 3})
	if len(place) != 1 || place[0].Value != "Standing (general admission)" || !strings.HasSuffix(name, "Standing (general admission)") {
		t.Errorf("GA ticket: got %+v %q, want the tier", place, name)
	}
}
