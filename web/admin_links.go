package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
)

// The box office revokes an order's access links (booking.Desk.RevokeOrderLinks): every
// link sent before stops working at once, and, if staff choose, the buyer is sent a
// link that works.

// linkNotices say what was just done to the order's links, by ?done=.
var linkNotices = map[string]string{
	"link":      "The order's links are revoked: none sent so far opens it. The buyer still sees it in the browser they bought with.",
	"link_sent": "The order's links are revoked, and a new link is on its way to the buyer.",
}

// revokeOrderLinks revokes the order's links, and sends a new one when the form's
// resend is "1".
func (s *server) revokeOrderLinks(c echo.Context) error {
	id, err := adminOrderID(c)
	if err != nil {
		return err
	}
	resend := c.FormValue("resend") == "1"
	_, err = s.Desk.RevokeOrderLinks(c.Request().Context(), id, resend, booking.Actor{StaffID: currentStaff(c).ID, Address: c.RealIP()})
	switch {
	case errors.Is(err, booking.ErrOrderNotFound):
		return errAdminOrderNotFound
	case errors.Is(err, booking.ErrNoLinkToSend):
		return s.orderFormError(c, id, http.StatusConflict, "Nothing was changed: this order was never paid, so it has no link to send.")
	case errors.Is(err, booking.ErrNoJobs):
		return &apiError{Status: http.StatusServiceUnavailable, Code: "email_unavailable", Message: "Email cannot be sent from here right now."}
	case err != nil:
		return err
	}
	done := "link"
	if resend {
		done = "link_sent"
	}
	return seeOther(c, "/admin/orders/"+strconv.FormatInt(id, 10)+"?done="+done)
}
