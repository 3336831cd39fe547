package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"boxoffice/views"
)

// onwardError is an error with a way onward that the error page offers, such as back
// to the seat map after a hold ran out. It unwraps to the cause, which decides the
// status and the message.
type onwardError struct {
	err  error
	next views.ActionLink
}

func (e *onwardError) Error() string { return e.err.Error() }
func (e *onwardError) Unwrap() error { return e.err }

// isHTMX reports whether htmx sent the request, which then wants a fragment to place
// rather than a whole page.
func isHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true"
}

// varyHTMX tells caches that the answer depends on HX-Request: one address serves a page
// and a fragment.
func varyHTMX(c echo.Context) {
	h := c.Response().Header()
	for _, v := range h.Values("Vary") {
		if strings.Contains(v, "HX-Request") {
			return
		}
	}
	h.Add("Vary", "HX-Request")
}

// pageMessages word, for people at a browser, the errors whose API message speaks to
// programs (headers, parameter names).
var pageMessages = map[string]string{
	"csrf_failed":        "This form has expired or was sent from another site. Go back, reload the page and try again.",
	"invalid_id":         "This address does not look right; check the link you followed.",
	"not_found":          "There is no page at this address.",
	"method_not_allowed": "That cannot be done at this address.",
	"hold_not_found":     "We cannot find this hold. Holds belong to the browser that made them: if you used another browser or cleared your cookies, choose your seats again.",
	"order_not_found":    "We cannot find this order. An order can only be seen from the browser that placed it.",
	"hold_expired":       "Your hold ran out or was released, so its seats are back on sale. Nothing has been charged for it.",
	"body_too_large":     "That form was too large to accept.",
	"internal_error":     "Something went wrong on our side.",
}

// buyerOnlyCodes are the codes whose page wording speaks to a buyer about their own
// session; staffMessages word them for staff.
var (
	buyerOnlyCodes = map[string]bool{"hold_not_found": true, "order_not_found": true, "hold_expired": true}
	staffMessages  = map[string]string{
		"hold_not_found":  "No hold has this number for this event.",
		"order_not_found": "No order has this number.",
		"hold_expired":    "This hold has ended; its seats are back on sale.",
	}
)

// codeHeadings and statusHeadings title the error pages; by code first, then by status.
var (
	codeHeadings = map[string]string{
		"hold_expired":    "Your hold has run out",
		"hold_not_found":  "Hold not found",
		"order_not_found": "Order not found",
		"csrf_failed":     "Please try again",
		"card_declined":   "Card declined",
		"not_on_sale":     "Not on sale yet",
		"sales_closed":    "Sales have closed",
		"proof_required":  "One quick step first",
		"proof_invalid":   "Please try again",
	}
	statusHeadings = map[int]string{
		http.StatusBadRequest:          "Please check what you sent",
		http.StatusPaymentRequired:     "Payment not accepted",
		http.StatusForbidden:           "Not allowed",
		http.StatusNotFound:            "Not found",
		http.StatusMethodNotAllowed:    "Not allowed",
		http.StatusConflict:            "That could not be done",
		http.StatusGone:                "No longer available",
		http.StatusTooManyRequests:     "Please wait your turn",
		http.StatusServiceUnavailable:  "The box office is busy",
		http.StatusUnprocessableEntity: "Please check what you sent",
	}
)

// errorPage answers an error on a page route: the whole page, or a fragment for htmx.
// The API's status decides; the words are for people. A failure on our side shows the
// request id, never its cause.
func (s *server) errorPage(c echo.Context, err error, ae *apiError) error {
	v := views.ErrorView{
		Status: ae.Status, Message: ae.Message,
		Next: views.ActionLink{Href: "/", Text: "Back to what is on sale"},
	}
	staffPage := strings.HasPrefix(c.Request().URL.Path, "/admin")
	if staffPage {
		// Staff are not buyers: a hold or order they cannot find is not one "made from
		// another browser", and the way onward is the box office, not the shop.
		v.Next = views.ActionLink{Href: "/admin", Text: "Back to the box office"}
	}
	if m, ok := pageMessages[ae.Code]; ok && !(staffPage && buyerOnlyCodes[ae.Code]) {
		v.Message = m
	}
	if staffPage && buyerOnlyCodes[ae.Code] {
		v.Message = staffMessages[ae.Code]
	}
	v.Heading = codeHeadings[ae.Code]
	if v.Heading == "" {
		v.Heading = statusHeadings[ae.Status]
	}
	if ae.Status >= 500 && ae.Status != http.StatusServiceUnavailable {
		v.Heading, v.Message = "Sorry", pageMessages["internal_error"]
		v.RequestID = c.Response().Header().Get(echo.HeaderXRequestID)
	}
	if v.Heading == "" {
		v.Heading = "That did not work"
	}
	var oe *onwardError
	if errors.As(err, &oe) {
		v.Next = oe.next
	}
	v.Page = page(v.Heading)
	varyHTMX(c)
	if isHTMX(c) {
		return render(c, ae.Status, "private, no-store", views.ErrorFragment(v))
	}
	return render(c, ae.Status, "private, no-store", views.ErrorPage(v))
}
