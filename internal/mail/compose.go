package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/a-h/templ"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/orderlink"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/qrimage"
	"boxoffice/views"
)

// Site is what the emails need to know about the site that sends them.
type Site struct {
	// BaseURL is the site's public address (BASE_URL): links in the emails start with
	// it, and its host names the emails' Message-IDs.
	BaseURL string
	// MaxPerBuyer is the per-buyer limit, for wording a refund that it caused.
	MaxPerBuyer int
	// Links signs the orders' access links, which open an order on any device. Nil,
	// the emails link to the order page as it is, which opens only in the browser that
	// bought.
	Links *orderlink.Signer
	// Money writes the amounts (SHOP_LOCALE); the zero value is euros the English way.
	Money money.Shop
}

// qrPixels is the side of a ticket's QR code image: shown at 180 CSS pixels, sharp on
// screens of twice the density.
const qrPixels = 360

// Confirmation is the email that confirms a paid order: its seats or places and a
// ticket for each, with the ticket's QR code as an attached image (a phone shows it at
// the door without going online) and the code in writing.
func Confirmation(r booking.Receipt, s Site) (Message, error) {
	o, ev := r.Order, r.Event
	if o.Status != booking.StatusConfirmed {
		return Message{}, fmt.Errorf("order %d is %s: only a confirmed order has tickets to send", o.ID, o.Status)
	}
	if len(o.Tickets) == 0 {
		return Message{}, fmt.Errorf("order %d is confirmed but has no tickets", o.ID)
	}
	host := hostOf(s.BaseURL)
	lines, _ := ordertext.ChargeLines(s.Money, o.Seats, o.GA, r.Charges)
	m := views.MailConfirmation{
		Subject:  fmt.Sprintf("Your tickets for %s (order %d)", ev.Name, o.ID),
		Heading:  "Your tickets for " + ev.Name,
		Intro:    "Your payment is confirmed. Here are your tickets: show each one's QR code at the door.",
		Number:   "Order " + strconv.FormatInt(o.ID, 10),
		Event:    ordertext.OrderEvent(ev),
		Lines:    lines,
		Total:    s.Money.Format(o.AmountCents),
		OrderURL: s.orderURL(r, ""),
		PDFURL:   s.orderURL(r, "/tickets.pdf"), CalendarURL: s.orderURL(r, "/event.ics"),
	}
	var inline []Inline
	for i, t := range o.Tickets {
		png, err := qrimage.PNG(t.Code, qrPixels)
		if err != nil {
			return Message{}, fmt.Errorf("QR code of ticket %d: %w", t.ID, err)
		}
		cid := fmt.Sprintf("ticket-%d.order-%d@%s", t.ID, o.ID, host)
		inline = append(inline, Inline{
			ContentID: cid, Name: fmt.Sprintf("ticket-%d.png", i+1), ContentType: "image/png", Data: png,
		})
		mt := views.MailTicket{
			Label: ordertext.TicketLabel(i, len(o.Tickets)),
			Code:  t.Code, QRSrc: "cid:" + cid,
		}
		mt.Place, mt.QRName = ordertext.TicketPlace(o, t)
		m.Tickets = append(m.Tickets, mt)
	}
	html, err := render(views.ConfirmationMail(m))
	if err != nil {
		return Message{}, err
	}
	return Message{
		To: o.Email, Subject: m.Subject, ID: messageID(o.ID, "confirmation", host), OrderID: o.ID,
		Text: confirmationText(m), HTML: html, Inline: inline,
	}, nil
}

// Refund is the email that says an order's payment was refunded (or is being), and
// why in plain words. A confirmed order refunded a further payment: its tickets stay.
func Refund(r booking.Receipt, s Site) (Message, error) {
	o, ev := r.Order, r.Event
	heading, message := refundWords(o, s.MaxPerBuyer, s.Money)
	return refundMessage(r, s, fmt.Sprintf("Refund for order %d: %s", o.ID, ev.Name), heading, message, "refund")
}

// ErrNoSuchRefund: the order has no refund of that id.
var ErrNoSuchRefund = errors.New("the order has no such refund")

// PaymentRefund is the email about one refund of an order that stands, or that was
// over before the payment came: a further payment given back while the order keeps
// its tickets (or its own payment), told on its own because the order's own refund
// email (Refund) is for an order that sold nothing. Its Message-ID names the refund:
// one email per refund.
func PaymentRefund(r booking.Receipt, refundID int64, s Site) (Message, error) {
	o, ev := r.Order, r.Event
	i := slices.IndexFunc(o.Refunds, func(f booking.OrderRefund) bool { return f.ID == refundID })
	if i < 0 {
		return Message{}, fmt.Errorf("order %d, refund %d: %w", o.ID, refundID, ErrNoSuchRefund)
	}
	heading, message := paymentRefundWords(o, o.Refunds[i], s.MaxPerBuyer, s.Money)
	return refundMessage(r, s, fmt.Sprintf("Refund of a further payment for order %d: %s", o.ID, ev.Name),
		heading, message, "refund-"+strconv.FormatInt(refundID, 10))
}

// refundMessage is a refund email about the receipt's order saying heading and
// message, its Message-ID of the kind given.
func refundMessage(r booking.Receipt, s Site, subject, heading, message, kind string) (Message, error) {
	o := r.Order
	lines, _ := ordertext.ChargeLines(s.Money, o.Seats, o.GA, r.Charges)
	m := views.MailRefund{
		Subject:  subject,
		Heading:  heading,
		Message:  message,
		Number:   "Order " + strconv.FormatInt(o.ID, 10),
		Event:    ordertext.OrderEvent(r.Event),
		Lines:    lines,
		Total:    s.Money.Format(o.AmountCents),
		OrderURL: s.orderURL(r, ""),
	}
	html, err := render(views.RefundMail(m))
	if err != nil {
		return Message{}, err
	}
	return Message{
		To: o.Email, Subject: m.Subject, ID: messageID(o.ID, kind, hostOf(s.BaseURL)), OrderID: o.ID,
		Text: refundText(m), HTML: html,
	}, nil
}

// paymentRefundWords says where one refund of a further payment stands and why.
func paymentRefundWords(o booking.Order, refund booking.OrderRefund, maxPerBuyer int, m money.Shop) (heading, message string) {
	amount := m.Format(refund.AmountCents)
	heading = "A further payment has been refunded"
	switch o.Status {
	case booking.StatusConfirmed:
		heading = "A second payment has been refunded"
		message = "Your order was already paid, so a further payment of " + amount + " for it has been refunded in full. " +
			"Nothing else changes: your order stands and your tickets are still valid."
	case booking.StatusPending:
		message = ordertext.RefundCause(refund.Reason, maxPerBuyer) + ", so that payment of " + amount +
			" has been refunded in full. Your order stands, with the payment you made first."
	default:
		message = ordertext.RefundCause(refund.Reason, maxPerBuyer) + ", so that payment of " + amount +
			" has been refunded in full."
	}
	if refund.Done {
		message += " It may take a few days to show on your statement."
	}
	return heading, message
}

// refundWords says where the refund stands and why. A confirmed order had a further
// payment given back: its tickets stay.
func refundWords(o booking.Order, maxPerBuyer int, m money.Shop) (heading, message string) {
	cents := 0
	for _, r := range o.Refunds {
		cents += r.AmountCents
	}
	if cents == 0 {
		cents = o.AmountCents
	}
	amount := m.Format(cents)
	switch o.Status {
	case booking.StatusConfirmed:
		return "A second payment has been refunded",
			"Your order was already paid, so a further payment of " + amount + " for it has been refunded in full. Your tickets are still valid."
	case booking.StatusRefundPending:
		return "Your payment will be refunded",
			ordertext.RefundCause(o.StatusReason, maxPerBuyer) + ", so your payment of " + amount + " will be refunded in full."
	}
	return "Your payment has been refunded",
		ordertext.RefundCause(o.StatusReason, maxPerBuyer) + ", so your payment of " + amount +
			" has been refunded in full. It may take a few days to show on your statement."
}

// messageID names one kind of email about one order, the same every time it is made.
func messageID(orderID int64, kind, host string) string {
	return fmt.Sprintf("order-%d.%s@%s", orderID, kind, host)
}

// orderURL is the address of the receipt's order page (suffix "") or of one of its
// files ("/tickets.pdf"), with the order's access link when the site signs them.
func (s Site) orderURL(r booking.Receipt, suffix string) string {
	if s.Links == nil {
		return s.BaseURL + "/orders/" + strconv.FormatInt(r.Order.ID, 10) + suffix
	}
	return s.BaseURL + s.Links.Path(orderlink.Link{OrderID: r.Order.ID, Version: r.LinkVersion}, suffix)
}

// hostOf is BASE_URL's host name, "localhost" if it has none.
func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "localhost"
}

// render writes an email's HTML part; rendering reads nothing but its view model.
func render(c templ.Component) (string, error) {
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		return "", fmt.Errorf("render email: %w", err)
	}
	return b.String(), nil
}
