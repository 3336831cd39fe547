package web

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/ical"
	"boxoffice/internal/money"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/pricing"
	"boxoffice/internal/ticketpdf"
)

// An order's files: its tickets as PDF and its event as a calendar entry, for the
// session that bought it or the holder of its access link, like its page.

// The files' addresses, after the order's.
const (
	pdfSuffix = "/tickets.pdf"
	icsSuffix = "/event.ics"
)

// pdfPerAddress bounds the PDFs drawn per client address (IPv6 per /64): a PDF takes
// some 50 ms of a core, and a link in the wrong hands must not turn into a way to
// keep the server busy. A buyer downloads a few.
var pdfPerAddress = redis_rate.Limit{Rate: 30, Burst: 30, Period: time.Minute}

// errNoTickets answers a file of an order that has no valid tickets.
var errNoTickets = &apiError{Status: http.StatusConflict, Code: "no_tickets",
	Message: "This order has no valid tickets: only a paid order's tickets can be printed or added to a calendar."}

// orderWithTickets is the order the path names as the request may see it, with its
// event, provided it has valid tickets.
func (s *server) orderWithTickets(c echo.Context) (booking.Order, booking.Event, orderAccess, error) {
	id, err := orderIDParam(c)
	if err != nil {
		return booking.Order{}, booking.Event{}, orderAccess{}, err
	}
	o, acc, err := s.orderFor(c, id, s.pageBuyerOf)
	if err != nil {
		return booking.Order{}, booking.Event{}, orderAccess{}, err
	}
	if o.Status != booking.StatusConfirmed || len(o.Tickets) == 0 {
		return booking.Order{}, booking.Event{}, orderAccess{}, errNoTickets
	}
	ev, err := s.eventByID(c.Request().Context(), o.EventID)
	return o, ev, acc, err
}

// ticketsPDF is the order's tickets as a PDF, one to a page.
func (s *server) ticketsPDF(c echo.Context) error {
	o, ev, _, err := s.orderWithTickets(c)
	if err != nil {
		return err
	}
	if s.limiter != nil {
		if wait, ok := s.limiter.allow(c.Request().Context(), "pdf:"+s.clientNet(c), pdfPerAddress); !ok {
			return &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited", RetryAfter: wait,
				Message: "Too many PDFs were asked for from your network in the last minute; wait a moment and try again."}
		}
	}
	charges, err := s.Buyer.OrderCharges(c.Request().Context(), o)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := ticketpdf.Write(&buf, ticketDocument(o, ev, ticketTypes(s.Money, o, charges))); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`inline; filename="tickets-order-%d.pdf"`, o.ID))
	return c.Blob(http.StatusOK, "application/pdf", buf.Bytes())
}

// ticketDocument words an order's tickets for the PDF, its time through the one
// function that will take the venue's zone.
// types are the tickets' types and prices by ticket id (ticketTypes).
func ticketDocument(o booking.Order, ev booking.Event, types map[int64]string) ticketpdf.Document {
	d := ticketpdf.Document{
		Event: ev.Name, Venue: ev.Venue, When: ordertext.When(ev),
		Order: "Order " + strconv.FormatInt(o.ID, 10),
	}
	for i, t := range o.Tickets {
		place, _ := ordertext.TicketPlace(o, t)
		d.Tickets = append(d.Tickets, ticketpdf.Ticket{Label: ordertext.TicketLabel(i, len(o.Tickets)), Code: t.Code, Place: place, Type: types[t.ID]})
	}
	return d
}

// eventICS is the order's event as a calendar entry, pointing at the order's access
// link.
func (s *server) eventICS(c echo.Context) error {
	o, ev, acc, err := s.orderWithTickets(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	link, err := s.orderLinkURL(ctx, o, acc, "")
	if err != nil {
		return err
	}
	var places []string
	for _, t := range o.Tickets {
		place, _ := ordertext.TicketPlace(o, t)
		var words []string
		for _, f := range place {
			words = append(words, f.Label+" "+f.Value)
		}
		places = append(places, strings.Join(words, ", "))
	}
	e := ical.Event{
		UID:   fmt.Sprintf("order-%d.event-%d@%s", o.ID, ev.ID, s.orderLinks.host()),
		Stamp: time.Now(), Start: ev.StartsAt, Summary: ev.Name, Location: ev.Venue, URL: link,
		Description: fmt.Sprintf("Order %d: %s.\nYour tickets: %s", o.ID, strings.Join(places, "; "), link),
	}
	var buf bytes.Buffer
	if err := ical.Write(&buf, e); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="event-order-%d.ics"`, o.ID))
	return c.Blob(http.StatusOK, ical.ContentType, buf.Bytes())
}

// ticketTypes words each ticket's type and what it cost ("Child, €14.25": its line's
// total, the per-ticket fees in, any discount off), by ticket id, from the order's
// charges: a seat's ticket by its seat's line, a standing ticket by the lines of its
// tier in order. An order made before orders were itemised has none.
func ticketTypes(m money.Shop, o booking.Order, ch booking.Charges) map[int64]string {
	out := map[int64]string{}
	bySeat := map[int64]pricing.LineQuote{}
	byTier := map[int64][]pricing.LineQuote{}
	for _, l := range ch.Quote.Lines {
		if l.SeatID != 0 {
			bySeat[l.SeatID] = l
		} else {
			byTier[l.GATierID] = append(byTier[l.GATierID], l)
		}
	}
	for _, t := range o.Tickets {
		l, ok := bySeat[t.SeatID]
		if t.SeatID == 0 {
			if ls := byTier[t.GATierID]; len(ls) > 0 {
				l, ok, byTier[t.GATierID] = ls[0], true, ls[1:]
			}
		}
		if ok {
			out[t.ID] = l.TypeName + ", " + m.Format(int(l.Total))
		}
	}
	return out
}
