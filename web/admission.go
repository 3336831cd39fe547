package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/app"
	"boxoffice/internal/booking"
)

// positionTimeout bounds asking Redis for the queue position of a caller turned away:
// the refusal goes out without it rather than late.
const positionTimeout = 300 * time.Millisecond

// eventContext is the Echo context key of the event the admission check found, for
// the handler after it (pay, whose order names the event only in the database).
const eventContext = "event"

// eventOf finds the event a request is about, for the admission check. Its errors are
// the ones the handler would give for the same address (400, 404), so answering with
// them changes nothing but the order.
type eventOf func(s *server, c echo.Context) (booking.Event, error)

// eventOfPath is the event of /api/v1/events/{id}/….
func eventOfPath(s *server, c echo.Context) (booking.Event, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return booking.Event{}, err
	}
	return s.eventByID(c.Request().Context(), id)
}

// eventOfSlug is the event of /events/{slug}/….
func eventOfSlug(s *server, c echo.Context) (booking.Event, error) {
	return s.eventBySlug(c.Request().Context(), c.Param("slug"))
}

// eventOfHold is the event a hold id names (its first part): no query for the hold.
func eventOfHold(s *server, c echo.Context) (booking.Event, error) {
	var id booking.HoldID
	var err error
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		id, err = pathHoldID(c)
	} else {
		id, err = pageHoldID(c)
	}
	if err != nil {
		return booking.Event{}, err
	}
	ev, err := s.eventByID(c.Request().Context(), id.Event)
	if errors.Is(err, booking.ErrEventNotFound) {
		return ev, booking.ErrHoldNotFound // as the handler says of a hold of no event
	}
	return ev, err
}

// eventOfOrder is the event of the session's order; another session's order is not
// found, as in the handler.
func eventOfOrder(s *server, c echo.Context) (booking.Event, error) {
	id, err := pathID(c, "orderId")
	if err != nil {
		return booking.Event{}, err
	}
	buyer := s.pageBuyer(c)
	if buyer == "" {
		return booking.Event{}, booking.ErrOrderNotFound
	}
	// The order's event alone, not its whole view: this runs in front of every pay
	// call, and answers from memory for an order this process checked out.
	eventID, err := s.Booking.OrderEvent(c.Request().Context(), id, buyer)
	if err != nil {
		return booking.Event{}, err
	}
	return s.eventByID(c.Request().Context(), eventID)
}

// admission guards seat selection and checkout during a queued onsale: with the
// event's room on, a request passes only with a valid admission token for this event
// and this session's visitor, sent in X-Admission-Token or kept in its cookie. The
// token is checked by its signature alone, so admitted buyers keep buying while Redis
// is away. Anyone else is turned back: the API answers 429 not_admitted with the queue
// position; pages send the browser to the queue page.
func (s *server) admission(find eventOf) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ev, err := find(s, c)
			if err != nil {
				return err
			}
			c.Set(eventContext, ev)
			if !ev.QueueEnabled {
				return next(c)
			}
			visitor := s.pageBuyer(c)
			if visitor != "" {
				if tok := c.Request().Header.Get(admissionHeader); tok != "" {
					if _, err := s.Queue.Verify(tok, ev.ID, visitor); err == nil {
						return next(c)
					}
				}
				if _, _, ok := s.sessionAdmission(c, ev.ID, visitor); ok {
					return next(c)
				}
			}
			if !strings.HasPrefix(c.Request().URL.Path, "/api/") {
				return seeOther(c, queueURL(ev))
			}
			return s.notAdmitted(c.Request().Context(), ev, visitor)
		}
	}
}

// notAdmitted is the API's refusal, with the caller's place in the queue when Redis
// says it in time.
func (s *server) notAdmitted(ctx context.Context, ev booking.Event, visitor string) error {
	ae := &apiError{Status: http.StatusTooManyRequests, Code: "not_admitted", RetryAfter: queueRetryAfter,
		Message: "Not your turn yet: join the waiting room with POST /api/v1/events/{id}/queue and ask GET until admitted; " +
			"then keep the cookies, or send the token in X-Admission-Token."}
	if visitor == "" {
		return ae
	}
	ctx, cancel := context.WithTimeout(ctx, positionTimeout)
	defer cancel()
	st, err := s.Queue.Status(ctx, app.QueueEvent(ev), visitor)
	switch {
	case err != nil:
	case st.Admitted:
		ae.Message = "You are admitted, but this request carries no valid admission token: " +
			"get it from GET /api/v1/events/{id}/queue and keep the cookies, or send it in X-Admission-Token."
	case st.Position > 0:
		pos := st.Position
		ae.Position = &pos
	}
	return ae
}

func queueURL(ev booking.Event) string { return "/events/" + ev.Slug + "/queue" }
