package mail

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"boxoffice/internal/booking"
	"boxoffice/internal/ordertext"
)

// The emails that carry orders' access links and nothing else: a new link after the
// box office revoked the old ones, and the list of an address's orders that "find my
// tickets" sends. Both are plain text, as the verification email is: they have links
// to give, which mail programs make clickable, and no tickets of their own.

// OrderLink is the email that gives the buyer a new link to their order after the box
// office replaced the old one. Its Message-ID names the link's version: one email per
// new link.
func OrderLink(r booking.Receipt, s Site) Message {
	o, ev := r.Order, r.Event
	var b strings.Builder
	fmt.Fprintf(&b, "A new link to your order %d\n\n", o.ID)
	b.WriteString("The box office has replaced the link to your order: the link in the emails we\n")
	b.WriteString("sent before no longer opens it. This one does, on any device; keep it to yourself,\n")
	b.WriteString("as it opens your tickets:\n\n")
	b.WriteString(s.orderURL(r, "") + "\n\n")
	writeOrderLine(&b, r)
	return Message{
		To:      o.Email,
		Subject: fmt.Sprintf("A new link to your order %d: %s", o.ID, ev.Name),
		ID:      messageID(o.ID, "link-"+strconv.Itoa(r.LinkVersion), hostOf(s.BaseURL)),
		OrderID: o.ID,
		Text:    b.String(),
	}
}

// ErrNoOrders: an order list with no order to list.
var ErrNoOrders = errors.New("no orders to list")

// OrderList is the email that "find my tickets" sends: the link of each of the
// address's orders, newest first, in one email to the address of the newest. request
// names the ask, so that each is an email of its own. It says what to do if the reader
// did not ask (someone else typed their address): nothing. The address is kept out of
// the log (Unlogged), as the verification emails' are.
func OrderList(rs []booking.Receipt, request string, s Site) (Message, error) {
	if len(rs) == 0 {
		return Message{}, ErrNoOrders
	}
	var b strings.Builder
	b.WriteString("Your orders\n\n")
	b.WriteString("Someone, we hope you, asked for the links to the orders made with this email\n")
	b.WriteString("address. Each link opens the order's tickets on any device; keep them to yourself.\n\n")
	for _, r := range rs {
		writeOrderLine(&b, r)
		b.WriteString(s.orderURL(r, "") + "\n\n")
	}
	b.WriteString("If you did not ask for this, you need do nothing: the links were sent to you alone.\n")
	return Message{
		To:       rs[0].Order.Email,
		Subject:  "Your orders and tickets",
		ID:       "orders-" + request + "@" + hostOf(s.BaseURL),
		OrderID:  rs[0].Order.ID,
		Text:     b.String(),
		Unlogged: true,
	}, nil
}

// writeOrderLine says which order a link is for: its number, where it stands, and
// the event.
func writeOrderLine(b *strings.Builder, r booking.Receipt) {
	fmt.Fprintf(b, "Order %d (%s): %s\n%s, %s\n", r.Order.ID, statusWords(r.Order), r.Event.Name, ordertext.When(r.Event), r.Event.Venue)
}

// statusWords says in a word or two where an order stands, for a list of orders.
func statusWords(o booking.Order) string {
	switch o.Status {
	case booking.StatusConfirmed:
		return ordertext.Thousands(len(o.Tickets)) + " " + plural(len(o.Tickets), "ticket", "tickets")
	case booking.StatusRefundPending:
		return "being refunded"
	case booking.StatusRefunded:
		if o.StatusReason == booking.ReasonVoided {
			return "cancelled"
		}
		return "refunded"
	}
	return o.Status
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
