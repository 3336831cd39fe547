package mail

import (
	"fmt"
	"strings"

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
		"HTML show them with the tickets. Your order page shows them too, on any device (keep the "+
		"link to yourself: it opens your tickets):\n%s\n", m.OrderURL)
	fmt.Fprintf(&b, "\nTickets as PDF:\n%s\n\nAdd to your calendar:\n%s\n", m.PDFURL, m.CalendarURL)
	return b.String()
}

func refundText(m views.MailRefund) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n\n", m.Heading, m.Message)
	writeOrder(&b, m.Number, m.Event, m.Lines, m.Total)
	fmt.Fprintf(&b, "\nYour order page:\n%s\n", m.OrderURL)
	return b.String()
}

func writeOrder(b *strings.Builder, number string, ev views.OrderEvent, lines []views.OrderLine, total string) {
	fmt.Fprintf(b, "%s\n%s\n%s\n\n%s\n", ev.Name, ev.When, ev.Venue, number)
	for _, l := range lines {
		fmt.Fprintf(b, "  %s  %s\n", l.Label, l.Price)
	}
	fmt.Fprintf(b, "  Total  %s\n", total)
}
