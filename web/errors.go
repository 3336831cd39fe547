package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/payment"
	"boxoffice/internal/pricing"
	"boxoffice/internal/waitroom"
	"boxoffice/internal/zone"
)

// apiError is every error answer: {"error": code, "message": text, ...details}.
type apiError struct {
	Status             int     `json:"-"`
	Code               string  `json:"error"`
	Message            string  `json:"message"`
	ConflictingSeatIDs []int64 `json:"conflictingSeatIds,omitempty"`
	UnknownSeatIDs     []int64 `json:"unknownSeatIds,omitempty"`
	Limit              int     `json:"limit,omitempty"`
	Held               *int    `json:"held,omitempty"`
	// OnsaleAt is when a not_on_sale event's sale opens, RFC 3339 in UTC.
	OnsaleAt string `json:"onsaleAt,omitempty"`
	// Position is a not_admitted caller's place in the waiting room, when known.
	Position *int `json:"position,omitempty"`
	// Lapsed: a not_admitted caller's turn lapsed because nothing was held in time.
	Lapsed bool `json:"lapsed,omitempty"`
	// LimitedBy says which limit refused a 429 rate_limited (addresslimit.go).
	LimitedBy string `json:"limitedBy,omitempty"`
	// RetryAfter, in seconds, overrides the Retry-After of a 503 or adds one to a 429.
	RetryAfter int `json:"-"`
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// statusClientClosed is the status logged for a request whose client went away first.
const statusClientClosed = 499

func badRequest(code, message string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: code, Message: message}
}

// invalidRequest is the 400 of a request booking refused as malformed: its code, and
// its reason as a sentence.
func invalidRequest(e *booking.InvalidError) *apiError {
	code, msg := e.Code, e.Reason
	if code == "" {
		code = "invalid_request"
	}
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:] + "."
	}
	return badRequest(code, msg)
}

// handleError is the one place that turns an error into an answer. Causes of a 5xx are
// logged with the request id and never shown.
func (s *server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
		// The client hung up: nobody reads an answer, and it is no fault of the
		// server's, so not a 500 in the log or the metrics. 499 is nginx's word for it.
		c.Response().Status = statusClientClosed
		return
	}
	ae := s.toAPIError(err)
	if ae.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	} else if ae.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", retryAfter)
	}
	if ae.Status >= 500 {
		s.Log.ErrorContext(c.Request().Context(), "request failed",
			"id", c.Response().Header().Get(echo.HeaderXRequestID), "status", ae.Status, "err", err)
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead:
		werr = c.NoContent(ae.Status)
	case !strings.HasPrefix(c.Request().URL.Path, "/api/"):
		werr = s.errorPage(c, err, ae) // a page, or a fragment for htmx (page_errors.go)
	default:
		werr = c.JSON(ae.Status, ae)
	}
	if werr != nil {
		s.Log.WarnContext(c.Request().Context(), "error answer not written", "err", werr)
	}
}

// zonedError is an error about one event, with the event's time zone: the answer
// writes the times it names (an onsale, a hold that runs out) on the venue's clocks.
type zonedError struct {
	err error
	loc *time.Location
}

func (e *zonedError) Error() string { return e.err.Error() }
func (e *zonedError) Unwrap() error { return e.err }

// inZone is err about an event in the zone loc; nil stays nil.
func inZone(err error, loc *time.Location) error {
	if err == nil {
		return nil
	}
	return &zonedError{err: err, loc: loc}
}

// toAPIError is the answer to err: its own if it is an *apiError, the answer to a
// typed error of booking's, then to a plain error (plainAnswers), then Echo's. Times
// are written in the zone inZone gave err, else in UTC.
func (s *server) toAPIError(err error) *apiError {
	loc := time.UTC
	if z := (*zonedError)(nil); errors.As(err, &z) {
		loc = z.loc
	}
	var ae *apiError
	var unavailable *booking.SeatsUnavailableError
	var unknown *booking.UnknownSeatsError
	var limit *booking.LimitError
	var clientLimit *booking.ClientLimitError
	var notOnSale *booking.NotOnSaleError
	var invalid *booking.InvalidError
	var voucher *pricing.VoucherError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &invalid):
		return invalidRequest(invalid)
	case errors.As(err, &unavailable):
		return &apiError{Status: http.StatusConflict, Code: "seat_unavailable",
			Message: "Some of these seats were just taken; pick others.", ConflictingSeatIDs: unavailable.SeatIDs}
	case errors.As(err, &unknown):
		return &apiError{Status: http.StatusUnprocessableEntity, Code: "unknown_seat",
			Message: "Some of these seats are not seats of this event.", UnknownSeatIDs: unknown.SeatIDs}
	case errors.As(err, &limit):
		held := limit.Held
		return &apiError{Status: http.StatusConflict, Code: "limit_exceeded", Limit: limit.Limit, Held: &held,
			Message: "You can hold or buy at most this many seats for one event."}
	case errors.As(err, &clientLimit):
		return seatsHeldError(clientLimit, loc)
	case errors.As(err, &voucher):
		return &apiError{Status: http.StatusUnprocessableEntity, Code: "voucher_not_usable", Message: sentence(voucher.Error())}
	case errors.Is(err, pricing.ErrRule):
		return &apiError{Status: http.StatusUnprocessableEntity, Code: "pricing_rule", Message: sentence(err.Error())}
	case errors.As(err, &notOnSale):
		return &apiError{Status: http.StatusConflict, Code: "not_on_sale", Message: onsaleText(notOnSale.OnsaleAt, loc),
			OnsaleAt: notOnSale.OnsaleAt.UTC().Format(time.RFC3339)}
	}
	for _, p := range plainAnswers {
		if slices.ContainsFunc(p.errs, func(target error) bool { return errors.Is(err, target) }) {
			answer := p.answer
			return &answer
		}
	}
	if errors.As(err, &he) {
		return fromHTTPError(he)
	}
	return &apiError{Status: http.StatusInternalServerError, Code: "internal_error", Message: "Something went wrong on our side."}
}

// plainAnswers are the answers to the plain (sentinel) errors of booking, payment and
// the waiting room, the first that err is.
var plainAnswers = []struct {
	errs   []error
	answer apiError
}{
	{[]error{booking.ErrEventNotFound}, apiError{Status: http.StatusNotFound, Code: "event_not_found", Message: "No such event."}},
	{[]error{booking.ErrGATierNotFound}, apiError{Status: http.StatusNotFound, Code: "ga_tier_not_found", Message: "No such general-admission tier for this event."}},
	{[]error{booking.ErrHoldNotFound}, apiError{Status: http.StatusNotFound, Code: "hold_not_found", Message: "No such hold in this session."}},
	{[]error{booking.ErrOrderNotFound}, apiError{Status: http.StatusNotFound, Code: "order_not_found", Message: "No such order in this session."}},
	{[]error{booking.ErrHoldExpired}, apiError{Status: http.StatusGone, Code: "hold_expired", Message: "This hold has expired or was released; its seats are back on sale."}},
	{[]error{booking.ErrCheckoutBegun}, apiError{Status: http.StatusConflict, Code: "checkout_begun", Message: "Checkout has begun for this hold, so it can no longer change; what you add now goes into a new basket."}},
	{[]error{booking.ErrVoucherNotFound}, apiError{Status: http.StatusNotFound, Code: "voucher_not_found", Message: "There is no voucher with that code for this event."}},
	{[]error{booking.ErrSeatNotInHold}, apiError{Status: http.StatusNotFound, Code: "seat_not_in_hold", Message: "That seat is not in this hold."}},
	{[]error{booking.ErrOtherTier}, apiError{Status: http.StatusConflict, Code: "one_standing_area", Message: "A basket holds places of one standing area; check out or release those first."}},
	{[]error{booking.ErrPresaleQuota}, apiError{Status: http.StatusConflict, Code: "presale_quota", Message: "The presale's places are all taken."}},
	{[]error{booking.ErrAccessCodeUnknown}, apiError{Status: http.StatusUnprocessableEntity, Code: "access_code_unknown", Message: "That is not an access code for this event; check how it is spelt."}},
	{[]error{booking.ErrAccessCodePaused}, apiError{Status: http.StatusConflict, Code: "access_code_paused", Message: "This access code is paused by the organiser."}},
	{[]error{booking.ErrAccessCodeEnded}, apiError{Status: http.StatusConflict, Code: "access_code_ended", Message: "This access code's presale has ended."}},
	{[]error{booking.ErrSalesClosed}, apiError{Status: http.StatusConflict, Code: "sales_closed", Message: "Sales for this event have closed."}},
	{[]error{booking.ErrSoldOut}, apiError{Status: http.StatusConflict, Code: "sold_out", Message: "Not enough seats or places are available."}},
	{[]error{booking.ErrContended}, apiError{Status: http.StatusConflict, Code: "busy", Message: "Seats are selling very fast right now; ask again."}},
	{[]error{booking.ErrPaymentInProgress}, apiError{Status: http.StatusConflict, Code: "payment_in_progress", Message: "A payment for this order is already under way; wait for its result."}},
	{[]error{booking.ErrOrderNotPending}, apiError{Status: http.StatusConflict, Code: "order_not_pending", Message: "This order is not awaiting payment."}},
	{[]error{booking.ErrCardDeclined}, apiError{Status: http.StatusPaymentRequired, Code: "card_declined", Message: "The card was declined; try another."}},
	{[]error{booking.ErrInvalidCard}, apiError{Status: http.StatusBadRequest, Code: "invalid_card", Message: "That is not a valid card number."}},
	{[]error{booking.ErrNotCharged, booking.ErrNoPayments}, apiError{Status: http.StatusServiceUnavailable, Code: "payments_unavailable",
		Message: "Payments cannot be taken right now and nothing was charged; try again shortly."}},
	{[]error{booking.ErrIdempotencyKeyReused}, apiError{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused",
		Message: "This Idempotency-Key was used for another request; use a new key for a new request."}},
	{[]error{booking.ErrIdempotencyKeyInUse}, apiError{Status: http.StatusConflict, Code: "idempotency_key_in_use", RetryAfter: 1,
		Message: "The first request with this Idempotency-Key is still running; ask again in a moment."}},
	{[]error{payment.ErrInvalidEvent}, apiError{Status: http.StatusBadRequest, Code: "invalid_signature", Message: "The webhook signature or payload is not valid."}},
	{[]error{waitroom.ErrUnavailable}, *errQueuePaused},
	{[]error{waitroom.ErrInvalidToken}, apiError{Status: http.StatusTooManyRequests, Code: "not_admitted", RetryAfter: queueRetryAfter,
		Message: "Wait for your turn in the waiting room: join with POST /api/v1/events/{id}/queue."}},
	{[]error{booking.ErrUnavailable}, apiError{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "The box office is busy for a moment; try again shortly."}},
}

// fromHTTPError words Echo's own errors (routing, body limit, CSRF) like ours.
func fromHTTPError(he *echo.HTTPError) *apiError {
	code := map[int]string{
		http.StatusBadRequest:            "bad_request",
		http.StatusForbidden:             "forbidden",
		http.StatusNotFound:              "not_found",
		http.StatusMethodNotAllowed:      "method_not_allowed",
		http.StatusRequestEntityTooLarge: "body_too_large",
		http.StatusUnsupportedMediaType:  "unsupported_media_type",
		http.StatusTooManyRequests:       "rate_limited",
		http.StatusServiceUnavailable:    "unavailable",
	}[he.Code]
	if code == "" {
		if he.Code >= 500 {
			return &apiError{Status: http.StatusInternalServerError, Code: "internal_error", Message: "Something went wrong on our side."}
		}
		code = "bad_request"
	}
	msg := http.StatusText(he.Code)
	if m, ok := he.Message.(string); ok && he.Code < 500 {
		msg = m
	}
	return &apiError{Status: he.Code, Code: code, Message: msg}
}

// onsaleText says when tickets go on sale, in the event's zone loc.
func onsaleText(at time.Time, loc *time.Location) string {
	return "Tickets go on sale on " + zone.When(at, loc) + "."
}
