package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/skip2/go-qrcode"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/ordertext"
	"boxoffice/views"
)

// showOrder is the order page: it waits for the payment's confirmation, then shows the
// tickets. htmx polls the same address for the status fragment while the order may
// still change. The session that placed the order sees it, and so does anyone with
// its access link (order_access.go).
func (s *server) showOrder(c echo.Context) error {
	id, err := orderIDParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o, acc, err := s.orderFor(c, id, s.pageBuyerOf)
	if err != nil {
		return err
	}
	ev, err := s.eventByID(ctx, o.EventID)
	if err != nil {
		return err
	}
	m, err := s.orderModel(ctx, c, o, ev, acc)
	if err != nil {
		return err
	}
	return renderPersonal(c, http.StatusOK, views.OrderPage(m), views.OrderStatus(m))
}

// orderModel words where an order stands. Tickets are shown for a confirmed order only:
// a refunded one admits no one. Reached through an access link, the page carries no
// CSRF token and offers nothing that changes the order.
func (s *server) orderModel(ctx context.Context, c echo.Context, o booking.Order, ev booking.Event, acc orderAccess) (views.Order, error) {
	charges, err := s.Buyer.OrderCharges(ctx, o)
	if err != nil {
		return views.Order{}, err
	}
	lines, _ := ordertext.ChargeLines(s.Money, o.Seats, o.GA, charges)
	title := "Order " + strconv.FormatInt(o.ID, 10)
	m := views.Order{
		Page:   buyerPage(c, title),
		Number: title,
		Event:  ordertext.OrderEvent(ev),
		Lines:  lines, Total: s.Money.Format(o.AmountCents), Email: o.Email,
		FindURL: ticketsPath,
	}
	if acc.token != "" {
		m.Page = page(title)
	}
	m.Page.Private = true
	limit := s.Buyer.Config().MaxPerBuyer
	switch o.Status {
	case booking.StatusConfirmed:
		m.Tone, m.Heading = "done", "Your tickets"
		m.Message = "Your payment is confirmed. Show each ticket's QR code at the door, on your phone or printed: print this page for one ticket per sheet."
		m.PDFURL, m.CalendarURL = acc.path(o.ID, pdfSuffix), acc.path(o.ID, icsSuffix)
		if o.Email != "" && acc.buyer != "" {
			// The confirmation waits while an onsale is busy (jobs.Config.EmailWait).
			m.Message += " A copy is on its way to " + o.Email + "; while a sale is busy it can take a few minutes."
		}
		tickets, err := ticketViews(o, ordertext.OrderEvent(ev))
		if err != nil {
			return m, err
		}
		m.Tickets = tickets
		m.Notes = refundNotes(s.Money, o.Refunds)
		if refundsUnderWay(o.Refunds) {
			m.PollURL = acc.path(o.ID, "") // until the extra payment's refund is done
		}
	case booking.StatusRefundPending, booking.StatusRefunded:
		refund := "has been refunded"
		if o.Status == booking.StatusRefundPending {
			refund = "will be refunded"
		}
		m.Tone, m.Heading = "problem", "Your payment "+refund
		m.Message = ordertext.RefundCause(o.StatusReason, limit) + "; your payment " + refund + " in full."
		if o.StatusReason == booking.ReasonVoided {
			voidedWords(s.Money, &m, o, limit)
		}
		m.Next = seatsLink(ev)
	case booking.StatusExpired:
		m.Tone, m.Heading = "problem", "This order was not completed"
		m.Message = "Your hold ran out before the order was paid, so its seats are back on sale. Nothing has been charged."
		m.Next = seatsLink(ev)
	case booking.StatusPending:
		return s.pendingOrder(ctx, m, o, ev, acc)
	default:
		m.Tone, m.Heading = "problem", "This order cannot be used"
		m.Message = "This order is closed. If you paid for it, your payment will be refunded in full."
	}
	return m, nil
}

// pendingOrder words an order not paid yet: a payment under way or being checked (the
// page polls), or none, when the buying session may pay while its hold lasts.
func (s *server) pendingOrder(ctx context.Context, m views.Order, o booking.Order, ev booking.Event, acc orderAccess) (views.Order, error) {
	if o.PaymentUnderWay && o.StatusReason == booking.ReasonPaymentUnknown {
		// The charge's answer was lost: reconciliation asks the provider.
		m.Tone, m.Heading = "waiting", "Your payment is being checked"
		m.Message = "We could not confirm whether your payment went through, so we are checking with the payment " +
			"provider. You will not be charged twice: no other payment for this order can start meanwhile. " +
			"Your tickets, or your refund, will appear here."
		m.PollURL = acc.path(o.ID, "")
		return m, nil
	}
	if o.PaymentUnderWay {
		// Charged: only the provider's word (its webhook, or a lookup) ends this.
		m.Tone, m.Heading = "waiting", "Confirming your payment…"
		m.Message = "Your payment is being confirmed; this usually takes a few seconds. Your tickets will appear here."
		m.PollURL = acc.path(o.ID, "")
		return m, nil
	}
	if acc.buyer == "" { // through a link: paying is for the session that ordered
		m.Tone, m.Heading = "problem", "Not paid yet"
		m.Message = "This order has not been paid yet."
		return m, nil
	}
	return s.unpaidOrder(ctx, m, o, ev, acc.buyer)
}

// unpaidOrder words a pending order that no payment is under way for: it can still be
// paid while its hold lasts, and is over for good once the hold has run out.
func (s *server) unpaidOrder(ctx context.Context, m views.Order, o booking.Order, ev booking.Event, buyer string) (views.Order, error) {
	h, err := s.Buyer.GetHold(ctx, o.HoldID, buyer)
	if errors.Is(err, booking.ErrHoldExpired) {
		m.Tone, m.Heading = "problem", "This order was not completed"
		m.Message = "Your hold ran out before the order was paid, so its seats are back on sale. Nothing has been charged."
		m.Next = seatsLink(ev)
		return m, nil
	} else if err != nil {
		return m, err
	}
	m.Tone, m.Heading = "problem", "Not paid yet"
	m.Message = "This order has not been paid yet. Your seats are held until " + expiryText(h.ExpiresAt, ev.Zone, time.Now()) + "."
	if o.StatusReason == booking.ReasonPaymentFailed {
		m.Message = "Your last payment did not go through and nothing was charged. Your seats are held until " +
			expiryText(h.ExpiresAt, ev.Zone, time.Now()) + "."
	}
	m.Next = views.ActionLink{Href: "/holds/" + o.HoldID.String() + "/checkout", Text: "Pay now"}
	return m, nil
}

// refundNotes word the refunds of a confirmed order: payments beyond the one it kept.
func refundNotes(shop money.Shop, refunds []booking.OrderRefund) []string {
	var out []string
	for _, r := range refunds {
		what := "A second payment of " + shop.Format(r.AmountCents) + " for this order"
		if r.Reason == booking.ReasonStaffRefund {
			// Tickets the box office refunded: part of the payment, not a second one.
			if r.Done {
				out = append(out, "The box office refunded "+shop.Format(r.AmountCents)+" for tickets of this order.")
			} else {
				out = append(out, "The box office is refunding "+shop.Format(r.AmountCents)+" for tickets of this order.")
			}
			continue
		}
		if r.Reason == booking.ReasonOtherPayment {
			what = "A payment of " + shop.Format(r.AmountCents) + " made while another payment of this order was under way"
		}
		if r.Done {
			out = append(out, what+" has been refunded in full.")
		} else {
			out = append(out, what+" is being refunded in full, automatically.")
		}
	}
	return out
}

// voidedWords words an order the box office voided: no money moved with the void (the
// box office settles it in person), and any tickets of it refunded before are noted.
func voidedWords(shop money.Shop, m *views.Order, o booking.Order, limit int) {
	m.Heading = "Your tickets were cancelled"
	m.Message = ordertext.RefundCause(o.StatusReason, limit) + ". Ask the box office about your payment."
	m.Notes = refundNotes(shop, o.Refunds)
}

func refundsUnderWay(refunds []booking.OrderRefund) bool {
	for _, r := range refunds {
		if !r.Done {
			return true
		}
	}
	return false
}

// ticketViews makes the printable tickets of an order: the place each admits to and
// the QR code of its code.
func ticketViews(o booking.Order, ev views.OrderEvent) ([]views.Ticket, error) {
	out := make([]views.Ticket, 0, len(o.Tickets))
	for i, t := range o.Tickets {
		qr, err := qrSVG(t.Code)
		if err != nil {
			return nil, err
		}
		v := views.Ticket{
			Label: ordertext.TicketLabel(i, len(o.Tickets)),
			Code:  t.Code, Event: ev, QR: qr,
		}
		v.Place, v.QRName = ordertext.TicketPlace(o, t)
		out = append(out, v)
	}
	return out, nil
}

// qrSVG draws the QR code of a ticket code as one SVG path, a run of dark modules per
// stroke. High error correction keeps a creased or smudged printout scannable.
func qrSVG(code string) (views.QR, error) {
	q, err := qrcode.New(code, qrcode.High)
	if err != nil {
		return views.QR{}, fmt.Errorf("QR code of a ticket: %w", err)
	}
	bm := q.Bitmap() // with its quiet zone
	var p strings.Builder
	for y, row := range bm {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			fmt.Fprintf(&p, "M%d %dh%dv1h-%dz", start, y, x-start, x-start)
		}
	}
	side := strconv.Itoa(len(bm))
	return views.QR{ViewBox: "0 0 " + side + " " + side, Side: side, Path: p.String()}, nil
}
