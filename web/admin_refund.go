package web

import (
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/views"
)

// Staff refunds and voids at the desk, in two steps: the order's form asks for one
// (chosen tickets, or the whole order by its own button) and gets a page that shows
// what it will do — the tickets, the money and how it goes back — with one confirm
// button; only the confirmation changes anything. The confirmation page carries a key
// of its own, so that a confirmation submitted twice ends the tickets once.

// maxTicketsPerForm bounds the tickets one refund form may name: an order has at most
// the per-buyer limit of them, and a form naming thousands is not a person's.
const maxTicketsPerForm = 200

// refundNotices say, after a refund, how its money went back (by the ?how= of the
// redirect).
var refundNotices = map[string]string{
	booking.PayCash:        "Refunded in cash: count the amount out of the till and hand it to the buyer. The till report has it under your name.",
	booking.PayCardPresent: "Refunded to the card at the desk: give the amount back on the card terminal to the card that paid. The till report has it under your name.",
	booking.MethodCard:     "Refunded: the seats are back on sale and the money is on its way back to the buyer's card.",
	"":                     "Refunded: the seats are back on sale; nothing was paid for them.",
}

// methodWords says how the money of a refund goes back, for the confirmation page.
var methodWords = map[string]string{
	booking.PayCash:        "Cash: count it out of the till and hand it to the buyer; it is recorded as a cash refund by you, now.",
	booking.PayCardPresent: "Card at the desk: give it back on the card terminal to the card that paid; it is recorded as a card refund by you, now.",
	booking.MethodCard:     "Card: the payment provider gives it back to the card that paid (it may take a few days to show).",
	"":                     "No money goes back.",
}

// refundForm reads a refund or void form of order id: its kind, its tickets, whole.
func refundForm(c echo.Context, id int64) (booking.StaffRefundRequest, url.Values, error) {
	form, err := c.FormParams()
	if err != nil {
		return booking.StaffRefundRequest{}, nil, badRequest("invalid_form", "The form could not be read; reload the page and try again.")
	}
	req := booking.StaffRefundRequest{OrderID: id, Kind: booking.RefundKind(form.Get("kind")), Whole: form.Get("whole") == "1",
		By: booking.Actor{StaffID: currentStaff(c).ID, Address: c.RealIP()}}
	if len(form["ticket"]) > maxTicketsPerForm {
		return req, form, invalidForm("Too many tickets chosen at once.")
	}
	for _, v := range form["ticket"] {
		t, err := booking.ParseID(v)
		if err != nil {
			return req, form, invalidForm("The tickets chosen are not tickets of this order; reload the page.")
		}
		req.TicketIDs = append(req.TicketIDs, t)
	}
	return req, form, nil
}

// invalidForm is a refund form's fault, shown on the order's page.
func invalidForm(msg string) error {
	return &booking.InvalidError{Kind: booking.ErrInvalidStaffRefund, Reason: msg}
}

// refundOrder shows what the refund or void the order's form asks for will do, with
// the button that confirms it. It changes nothing.
func (s *server) refundOrder(c echo.Context) error {
	id, err := adminOrderID(c)
	if err != nil {
		return err
	}
	req, _, err := refundForm(c, id)
	if err != nil {
		return s.refundError(c, id, err)
	}
	p, err := s.Desk.PreviewStaffRefund(c.Request().Context(), req)
	if err != nil {
		return s.refundError(c, id, err)
	}
	ids := strconv.FormatInt(id, 10)
	m := views.RefundConfirm{AdminPage: adminPage(c, "Confirm: order "+ids), OrderID: id, OrderURL: "/admin/orders/" + ids,
		Action: "/admin/orders/" + ids + "/refund/confirm", Kind: string(p.Kind), Whole: p.Whole,
		Amount: s.Money.Format(p.AmountCents), Method: methodWords[p.Method], Key: rand.Text()}
	for _, t := range p.Tickets {
		m.Tickets = append(m.Tickets, views.AdminTicket{ID: t.ID, Code: t.Code, Place: t.Seat, Price: s.Money.Format(t.PriceCents)})
	}
	what := strconv.Itoa(len(p.Tickets)) + " ticket(s)"
	if p.Whole {
		what = "the whole order (" + what + ")"
	}
	if p.Kind == booking.KindVoid {
		m.Heading, m.Button = "Void "+what+" of order "+ids, "Void "+what+", no money back"
	} else {
		m.Heading, m.Button = "Refund "+what+" of order "+ids, "Refund "+m.Amount
	}
	return render(c, http.StatusOK, "no-store", views.RefundConfirmPage(m))
}

// confirmRefund does the refund or void its confirmation page showed: exactly the
// tickets it listed, once per page (its key).
func (s *server) confirmRefund(c echo.Context) error {
	id, err := adminOrderID(c)
	if err != nil {
		return err
	}
	req, form, err := refundForm(c, id)
	if err != nil {
		return s.refundError(c, id, err)
	}
	req.Key, req.Whole = form.Get("key"), false
	if req.Key == "" {
		return s.refundError(c, id, invalidForm("This confirmation has no key; start again from the order."))
	}
	res, err := s.Desk.StaffRefund(c.Request().Context(), req)
	if err != nil {
		return s.refundError(c, id, err)
	}
	to := "/admin/orders/" + strconv.FormatInt(id, 10) + "?done=" + string(req.Kind)
	if req.Kind == booking.KindRefund {
		to += "&how=" + url.QueryEscape(res.Method)
	}
	return seeOther(c, to)
}

// refundError shows the order again with what stopped a refund or void, under a 4xx
// (nothing changed); an error it does not know goes to the error handler.
func (s *server) refundError(c echo.Context, id int64, err error) error {
	var unavailable *booking.TicketsUnavailableError
	var bad *booking.InvalidError
	switch {
	case errors.Is(err, booking.ErrOrderNotFound):
		return errAdminOrderNotFound
	case errors.As(err, &bad):
		return s.orderFormError(c, id, http.StatusBadRequest, "Nothing was changed: "+bad.Reason+".")
	case errors.As(err, &unavailable):
		return s.orderFormError(c, id, http.StatusConflict,
			"Nothing was changed: some of the chosen tickets were refunded, voided or used at the door already, or are not this order's.")
	case errors.Is(err, booking.ErrOrderNotConfirmed):
		return s.orderFormError(c, id, http.StatusConflict, "Nothing was changed: only a confirmed order's tickets can be refunded or voided.")
	case errors.Is(err, booking.ErrNoPaymentToRefund):
		return s.orderFormError(c, id, http.StatusConflict,
			"Nothing was changed: this order has no payment that can be given back here (a free order, or one paid elsewhere). Void the tickets instead.")
	case errors.Is(err, booking.ErrRefundTooLarge):
		return s.orderFormError(c, id, http.StatusConflict, "Nothing was changed: that would give back more than the payment took.")
	case errors.Is(err, booking.ErrRefundKeyUsed):
		return s.orderFormError(c, id, http.StatusConflict, "Nothing was changed: this confirmation was used for another refund or void; start again from the order.")
	}
	return err
}
