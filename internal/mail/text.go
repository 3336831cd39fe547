package mail

import (
	"fmt"
	"strings"

	"boxoffice/internal/booking"
	"boxoffice/views"
)

// The plain text parts, written from the same view models as the HTML parts so that
// both say the same. Plain text needs no escaping, which is why it is not a templ
// component (templ escapes for HTML).

func confirmationText(m views.MailConfirmation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n\n", m.Heading, m.Intro)
	writeOrder(&b, m.Number, m.Event, m.Lines, m.Total)
	for _, t := range m.Tickets {
		fmt.Fprintf(&b, "\n%s\n", t.Label)
		for _, f := range t.Place {
			fmt.Fprintf(&b, "  %s: %s\n", f.Label, f.Value)
		}
		fmt.Fprintf(&b, "  Code: %s\n", t.Code)
	}
	fmt.Fprintf(&b, "\nEach ticket's QR code is in this email as a picture; mail programs that show "+
		"HTML show them with the tickets. Your order page shows them too, in the browser you bought "+
		"the tickets with:\n%s\n", m.OrderURL)
	return b.String()
}

func refundText(m views.MailRefund) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n\n", m.Heading, m.Message)
	writeOrder(&b, m.Number, m.Event, m.Lines, m.Total)
	fmt.Fprintf(&b, "\nYour order page, in the browser you ordered with:\n%s\n", m.OrderURL)
	return b.String()
}

func writeOrder(b *strings.Builder, number string, ev views.OrderEvent, lines []views.OrderLine, total string) {
	fmt.Fprintf(b, "%s\n%s\n%s\n\n%s\n", ev.Name, ev.When, ev.Venue, number)
	for _, l := range lines {
		fmt.Fprintf(b, "  %s  %s\n", l.Label, l.Price)
	}
	fmt.Fprintf(b, "  Total  %s\n", total)
}

// The wording of orders, as the pages word them (web/page_checkout.go): an email and
// the order page it links to say the same things the same way.

func orderLines(seats []booking.Seat, ga *booking.GAPlaces) []views.OrderLine {
	var lines []views.OrderLine
	for _, st := range seats {
		lines = append(lines, views.OrderLine{Label: seatLabel(st), Price: euros(st.PriceCents)})
	}
	if ga != nil {
		lines = append(lines, views.OrderLine{
			Label: fmt.Sprintf("%s (general admission) × %d", ga.TierName, ga.Quantity), Price: euros(ga.PriceCents * ga.Quantity),
		})
	}
	return lines
}

func seatLabel(st booking.Seat) string {
	return fmt.Sprintf("%s, row %s, seat %d", st.Section, st.Row, st.Number)
}

func orderEvent(ev booking.Event) views.OrderEvent {
	return views.OrderEvent{Name: ev.Name, When: ev.StartsAt.UTC().Format("Mon 2 Jan 2006, 15:04 MST"), Venue: ev.Venue}
}

// euros formats an amount in euro cents as people write it: €1,234.50.
func euros(cents int) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s€%s.%02d", sign, thousands(cents/100), cents%100)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
