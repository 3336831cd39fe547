package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/audittext"
	"boxoffice/internal/booking"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// The box office's orders: search by email, order number or ticket code;
// one order with its tickets, payments, refunds and history; refund or void some or
// all of its tickets; send its confirmation again.

// ordersPerPage is how many orders a page of the list or of a search shows.
const ordersPerPage = 50

// errAdminOrderNotFound answers an order number that names no order.
var errAdminOrderNotFound = &apiError{Status: http.StatusNotFound, Code: "order_not_found", Message: "No order has this number."}

// adminTime is how the admin pages show a moment of an event: on the clocks of its
// venue's zone loc, as the event pages do.
func adminTime(t time.Time, loc *time.Location) string { return zone.Short(t, loc) }

// searchOrders is the order search, with each event's exports below it.
func (s *server) searchOrders(c echo.Context) error {
	ctx := c.Request().Context()
	m := views.OrderSearch{AdminPage: adminPage(c, "Orders"), Query: c.QueryParam("q")}
	status := http.StatusOK
	var before int64
	if v := c.QueryParam("before"); v != "" {
		id, err := booking.ParseID(v)
		if err != nil {
			m.Error, status = "That page of results does not exist; search again.", http.StatusBadRequest
		}
		before = id
	}
	switch {
	case status != http.StatusOK:
	case len(m.Query) > booking.MaxSearchQuery:
		m.Error, status = "Search for an email, an order number or a ticket code: that is too long to be one.", http.StatusBadRequest
	default:
		// Nothing typed lists the newest orders.
		res, err := s.Desk.SearchOrders(ctx, m.Query, before, ordersPerPage)
		if err != nil {
			return err
		}
		m.Searched = strings.TrimSpace(m.Query) != ""
		for _, o := range res.Orders {
			m.Results = append(m.Results, views.OrderHit{ID: o.ID, URL: "/admin/orders/" + strconv.FormatInt(o.ID, 10),
				Event: o.EventName, Email: o.Email, Status: audittext.Status(o.Status), Total: s.Money.Format(o.AmountCents),
				Tickets: o.ValidTickets, Created: adminTime(o.CreatedAt, o.Zone)})
		}
		if res.Next != 0 {
			next := url.Values{"before": {strconv.FormatInt(res.Next, 10)}}
			if m.Searched {
				next.Set("q", m.Query)
			}
			m.NextURL = "/admin/orders?" + next.Encode()
		}
	}
	events, err := s.Desk.Events(ctx)
	if err != nil {
		return err
	}
	for _, e := range events {
		base := "/admin/events/" + strconv.FormatInt(e.ID, 10)
		m.Exports = append(m.Exports, views.EventExport{Name: e.Name, OrdersURL: base + "/orders.csv", CheckinsURL: base + "/checkins.csv"})
	}
	return render(c, status, "no-store", views.OrderSearchPage(m))
}

// adminOrderID is the order the path names; an id that cannot name one names none.
func adminOrderID(c echo.Context) (int64, error) {
	id, err := booking.ParseID(c.Param("id"))
	if err != nil {
		return 0, errAdminOrderNotFound
	}
	return id, nil
}

// showAdminOrder is one order. ?done= says what was just done to it (after a
// redirect from a form).
func (s *server) showAdminOrder(c echo.Context) error {
	id, err := adminOrderID(c)
	if err != nil {
		return err
	}
	m, err := s.adminOrderModel(c, id)
	if err != nil {
		return err
	}
	switch c.QueryParam("done") {
	case "refund":
		m.Notice = refundNotices[c.QueryParam("how")] // admin_refund.go
	case "void":
		m.Notice = "Voided: the seats are back on sale; no money goes back."
	case "resend":
		m.Notice = "The confirmation is on its way to " + m.Email + " again."
	default:
		m.Notice = linkNotices[c.QueryParam("done")] // admin_links.go
	}
	return render(c, http.StatusOK, "no-store", views.AdminOrderPage(m))
}

func (s *server) adminOrderModel(c echo.Context, id int64) (views.AdminOrder, error) {
	o, err := s.Desk.OrderAdmin(c.Request().Context(), id)
	if errors.Is(err, booking.ErrOrderNotFound) {
		return views.AdminOrder{}, errAdminOrderNotFound
	} else if err != nil {
		return views.AdminOrder{}, err
	}
	ids := strconv.FormatInt(id, 10)
	m := views.AdminOrder{
		AdminPage: adminPage(c, "Order "+ids), ID: id, Event: o.EventName, Email: o.Order.Email,
		Status: audittext.Status(o.Order.Status), Reason: audittext.Reason(o.Order.StatusReason), Total: s.Money.Format(o.Order.AmountCents),
		Created: adminTime(o.CreatedAt, o.Zone), CanChange: o.Order.Status == booking.StatusConfirmed,
		Action: "/admin/orders/" + ids + "/refund", Resend: "/admin/orders/" + ids + "/resend",
	}
	if o.Confirmed != nil {
		m.Confirmed = adminTime(*o.Confirmed, o.Zone)
	}
	if err = s.adminCharges(c.Request().Context(), o.Order, &m); err != nil {
		return views.AdminOrder{}, err
	}
	if m.LinkVersion, err = s.Desk.OrderLinkVersion(c.Request().Context(), id); err != nil {
		return views.AdminOrder{}, err
	}
	m.LinkAction = "/admin/orders/" + ids + "/links/revoke"
	m.LinkResend = o.Order.Status == booking.StatusConfirmed || o.Order.Status == booking.StatusRefundPending || o.Order.Status == booking.StatusRefunded
	for _, t := range o.Tickets {
		v := views.AdminTicket{ID: t.ID, Code: t.Code, Place: t.Seat, Price: s.Money.Format(t.PriceCents), State: "valid"}
		switch {
		case t.VoidedAt != nil && t.VoidReason == "refund":
			v.State = "refunded " + adminTime(*t.VoidedAt, o.Zone)
		case t.VoidedAt != nil:
			v.State = "voided " + adminTime(*t.VoidedAt, o.Zone)
		case t.CheckedInAt != nil:
			v.State = "checked in " + adminTime(*t.CheckedInAt, o.Zone) + " at gate " + t.Gate
		default:
			v.Usable = true
		}
		m.Tickets = append(m.Tickets, v)
	}
	for _, p := range o.Payments {
		m.Payments = append(m.Payments, views.AdminPayment{Provider: p.Provider, Ref: p.ProviderPaymentID,
			Amount: s.Money.Format(p.AmountCents), State: audittext.Status(p.State), At: adminTime(p.CreatedAt, o.Zone)})
	}
	for _, r := range o.Refunds {
		reason := audittext.Reason(r.Reason)
		if r.ByStaff && r.Reason != booking.ReasonStaffRefund {
			reason += " (staff)"
		}
		m.Refunds = append(m.Refunds, views.AdminRefund{Amount: s.Money.Format(r.AmountCents), Reason: reason,
			State: audittext.Status(r.State), At: adminTime(r.CreatedAt, o.Zone)})
	}
	w := s.words(o.Zone)
	for _, h := range o.History {
		sentence, changes := auditView(w, audittext.Entry{Action: h.Action, Who: h.StaffName, At: h.At, Before: h.Before, After: h.After})
		m.History = append(m.History, views.AdminHistory{Sentence: sentence, Changes: changes})
	}
	return m, nil
}

// resendConfirmation sends a confirmed order's confirmation again.
func (s *server) resendConfirmation(c echo.Context) error {
	id, err := adminOrderID(c)
	if err != nil {
		return err
	}
	err = s.Desk.ResendConfirmation(c.Request().Context(), id, booking.Actor{StaffID: currentStaff(c).ID, Address: c.RealIP()})
	switch {
	case errors.Is(err, booking.ErrOrderNotFound):
		return errAdminOrderNotFound
	case errors.Is(err, booking.ErrOrderNotConfirmed):
		return s.orderFormError(c, id, http.StatusConflict, "Only a confirmed order has a confirmation to send.")
	case errors.Is(err, booking.ErrNoJobs):
		return &apiError{Status: http.StatusServiceUnavailable, Code: "email_unavailable", Message: "Email cannot be sent from here right now."}
	case err != nil:
		return err
	}
	return seeOther(c, "/admin/orders/"+strconv.FormatInt(id, 10)+"?done=resend")
}

// orderFormError shows the order again with what was wrong, under status.
func (s *server) orderFormError(c echo.Context, id int64, status int, msg string) error {
	m, err := s.adminOrderModel(c, id)
	if err != nil {
		return err
	}
	m.Error = msg
	return render(c, status, "no-store", views.AdminOrderPage(m))
}
