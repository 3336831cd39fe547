// Package ordertext says booking's values in words for people: counts, seats, an
// order's lines, a ticket's place, why a payment was refunded. The pages (web) and the
// emails (internal/mail) both word orders, and an email must say what the order page
// it links to says; views may not import booking, so the wording lives here, once.
//
// It imports booking, money, views and zone only, never web or the generated
// queries. Amounts are written by money.
package ordertext

import (
	"fmt"
	"strconv"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// Thousands writes a whole number with thousands separators: 12,345.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// When says when an event starts, on its venue's clocks: "Thu 31 Dec 2026, 20:00 CET".
func When(ev booking.Event) string {
	return zone.When(ev.StartsAt, ev.Zone)
}

// SeatLabel names a seat: "Stalls, row F, seat 12".
func SeatLabel(st booking.Seat) string {
	return booking.SeatName(st.Section, st.Row, st.Number)
}

// OrderEvent names the event a hold or order is for.
func OrderEvent(ev booking.Event) views.OrderEvent {
	return views.OrderEvent{Name: ev.Name, When: When(ev), Venue: ev.Venue}
}

// OrderLines prices seats and places line by line, written as m writes amounts, and
// in total (in cents).
func OrderLines(m money.Shop, seats []booking.Seat, ga *booking.GAPlaces) ([]views.OrderLine, int) {
	var lines []views.OrderLine
	total := 0
	for _, st := range seats {
		lines = append(lines, views.OrderLine{Label: SeatLabel(st), Price: m.Format(st.PriceCents)})
		total += st.PriceCents
	}
	if ga != nil {
		cents := ga.PriceCents * ga.Quantity
		lines = append(lines, views.OrderLine{
			Label: fmt.Sprintf("%s (general admission) × %d", ga.TierName, ga.Quantity), Price: m.Format(cents),
		})
		total += cents
	}
	return lines, total
}

// TicketPlace says where ticket t of order o admits to, field by field, and names its
// QR code for people who cannot see it.
func TicketPlace(o booking.Order, t booking.Ticket) (place []views.TicketField, qrName string) {
	if t.SeatID != 0 {
		for _, st := range o.Seats {
			if st.ID == t.SeatID {
				return []views.TicketField{
					{Label: "Section", Value: st.Section},
					{Label: "Row", Value: st.Row},
					{Label: "Seat", Value: strconv.Itoa(st.Number)},
				}, "QR code of the ticket for " + SeatLabel(st)
			}
		}
	}
	tier := "General admission"
	if o.GA != nil && o.GA.TierID == t.GATierID {
		tier = o.GA.TierName + " (general admission)"
	}
	return []views.TicketField{{Label: "Admission", Value: tier}}, "QR code of the ticket for " + tier
}

// TicketLabel numbers a ticket within its order: "Ticket 2 of 3".
func TicketLabel(i, n int) string { return fmt.Sprintf("Ticket %d of %d", i+1, n) }

// RefundCause says in plain words why a paid order sold nothing, from the reason
// booking records on the order (booking.Reason*).
func RefundCause(reason string, maxPerBuyer int) string {
	switch reason {
	case booking.ReasonSeatsUnavailable:
		return "Your hold ran out before the payment completed and the seats were sold to someone else"
	case booking.ReasonSoldOut:
		return "Your hold ran out before the payment completed and the places were sold to someone else"
	case booking.ReasonBuyerLimit:
		return fmt.Sprintf("Buying these seats would have taken you past the limit of %d tickets per buyer for this event", maxPerBuyer)
	case booking.ReasonPresaleQuota:
		return "The presale's places for your access code were all taken before the payment completed"
	case booking.ReasonAmountMismatch:
		return "The amount paid did not match the order's total, so nothing was sold"
	case booking.ReasonOrderExpired, booking.ReasonHoldLapsed:
		return "Your payment arrived after this order had expired and its seats were back on sale"
	case booking.ReasonOrderClosed:
		return "Your payment arrived after this order had closed"
	case booking.ReasonOtherPayment:
		return "A second payment was made for this order while the first was still being processed"
	case booking.ReasonAlreadyPaid:
		return "Your order was already paid"
	case booking.ReasonStaffRefund:
		return "The box office refunded your tickets"
	case booking.ReasonVoided:
		return "The box office cancelled your tickets"
	}
	return "We could not complete this sale"
}
