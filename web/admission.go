package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/waitroom"
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
	eventID, err := s.Buyer.OrderEvent(c.Request().Context(), id, buyer)
	if err != nil {
		return booking.Event{}, err
	}
	return s.eventByID(c.Request().Context(), eventID)
}

// admission guards seat selection and checkout during a queued onsale: with the
// event's room on, a request passes only with the session's admission to this event
// (admitted), in the room the session uses (room: a presale's for its code holders).
// Before the onsale a session without a code is told the sale has not opened, as the
// hold would say. A token is checked by its signature, and by one Redis read whether its
// admission has ended, which a Redis that is away does not stop: admitted buyers keep
// buying. Anyone else is turned back: the API answers 429 not_admitted with the queue
// position; pages send the browser to the way in (wayInURL). An onsale for verified buyers
// first turns away a session that has not confirmed an email for it (verify.go). Behind
// rateLimit, whose Redis call runs meanwhile, it reads the limit's verdict once its own
// read is done, before it answers or changes anything (rateVerdict).
func (s *server) admission(find eventOf) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ev, err := find(s, c)
			if err != nil {
				return err
			}
			c.Set(eventContext, ev)
			if ev.VerifiedOnly && !s.verifiedFor(c, ev.ID) {
				if err := rateVerdict(c); err != nil {
					return err
				}
				return s.notVerified(c, ev)
			}
			if !ev.QueueEnabled {
				return next(c)
			}
			api := strings.HasPrefix(c.Request().URL.Path, "/api/")
			qe, err := s.room(c, ev)
			if errors.Is(err, errNeedsCode) && (c.Param("holdId") != "" || c.Param("orderId") != "") {
				// A hold made in the presale is checked out and paid while it lives
				// (admitted), its code's window over or not: the statements decide.
				qe, err = ev.Room(), nil
			}
			switch {
			case errors.Is(err, errNeedsCode) && api:
				// Before the onsale, without a code: what the hold would answer.
				return inZone(&booking.NotOnSaleError{OnsaleAt: ev.OnsaleAt}, ev.Zone)
			case err != nil:
				if err := rateVerdict(c); err != nil {
					return err
				}
				return roomRefused(c, ev, err)
			}
			visitor := s.pageBuyer(c)
			ok, end := s.admitted(c, qe, visitor)
			// The rate limit's verdict, asked meanwhile (rateLimit), before anything
			// is answered or changed.
			if err := rateVerdict(c); err != nil {
				return err
			}
			if ok {
				return next(c)
			}
			if end == waitroom.Lapsed {
				return s.turnLapsed(c, ev, qe, visitor, next)
			}
			if !api {
				return seeOther(c, wayInURL(ev))
			}
			return s.notAdmitted(c.Request().Context(), qe, visitor)
		}
	}
}

// notAdmitted is the API's refusal, with the caller's place in the queue when Redis
// says it in time.
func (s *server) notAdmitted(ctx context.Context, qe waitroom.Event, visitor string) error {
	ae := &apiError{Status: http.StatusTooManyRequests, Code: "not_admitted", RetryAfter: queueRetryAfter,
		Message: "Not your turn yet: join the waiting room with POST /api/v1/events/{id}/queue and ask GET until admitted; " +
			"then keep the cookies, or send the token in X-Admission-Token."}
	if visitor == "" {
		return ae
	}
	ctx, cancel := context.WithTimeout(ctx, positionTimeout)
	defer cancel()
	s.afterHolds(ctx, visitor)
	st, err := s.Queue.Status(ctx, qe, visitor)
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

// queueURL is the sorted-set room's page, which works without JavaScript: the front
// door's page links to it for browsers without, and a visitor whose turn lapsed waits
// there, back at the end of its line (turnLapsed).
func queueURL(ev booking.Event) string { return "/events/" + ev.Slug + "/queue" }

// doorURL is the front door's page (showDoor).
func doorURL(ev booking.Event) string { return "/events/" + ev.Slug + "/door" }

// wayInURL is where a browser waits for its turn: the front door, which costs the
// origin nothing until then.
func wayInURL(ev booking.Event) string { return doorURL(ev) }

// endedTimeout bounds asking Redis whether an admission has ended: past it the token
// stands on its signature.
const endedTimeout = 300 * time.Millisecond

// admitted reports whether the request carries the session's admission to room qe: a
// token for qe and the visitor (in X-Admission-Token, or kept in the admission cookie or
// the session) whose admission has not ended. An admission ends when its purchase
// completes or its hold is released (leaveQueue), or lapses when nothing was held in
// time (turnLapsed): another round of shopping starts in the queue. A call on a hold
// (checkout, pay) passes on a live hold of the session, whether its token ran out or
// not: an admission lasts as long as the hold made with it, so paying is never refused
// because the token ended mid-hold; and a hold sold or released is not live, so it
// admits nothing more. Refused, it also says how a token the request carries ended
// (waitroom.Lapsed before waitroom.Left).
func (s *server) admitted(c echo.Context, qe waitroom.Event, visitor string) (bool, waitroom.End) {
	if visitor == "" {
		return false, waitroom.Running
	}
	onHold := c.Param("holdId") != "" || c.Param("orderId") != ""
	refused := waitroom.Running
	running := func(cl waitroom.Claims) bool {
		if onHold {
			return true
		}
		end := s.admissionEnd(c, qe.ID, visitor, cl)
		refused = max(refused, end)
		return end == waitroom.Running
	}
	if tok := c.Request().Header.Get(admissionHeader); tok != "" {
		if cl, err := s.Queue.Verify(tok, qe.ID, visitor); err == nil && running(cl) {
			return true, waitroom.Running
		}
	}
	if cl, _, ok := s.sessionAdmission(c, qe.ID, visitor); ok && running(cl) {
		return true, waitroom.Running
	}
	return onHold && s.onLiveHold(c, visitor), refused
}

// admissionEnded reports whether the admission a valid token names has ended early
// (bought, released, lapsed).
func (s *server) admissionEnded(c echo.Context, eventID int64, visitor string, cl waitroom.Claims) bool {
	return s.admissionEnd(c, eventID, visitor, cl) != waitroom.Running
}

// admissionEnd says whether and how the admission a valid token names has ended early.
// A Redis that does not answer in time says it runs: the token stands.
func (s *server) admissionEnd(c echo.Context, eventID int64, visitor string, cl waitroom.Claims) waitroom.End {
	ctx, cancel := context.WithTimeout(c.Request().Context(), endedTimeout)
	defer cancel()
	s.afterHolds(ctx, visitor)
	end, err := s.Queue.EndOf(ctx, eventID, visitor, cl.ExpiresAt)
	if err != nil {
		return waitroom.Running
	}
	return end
}

// onLiveHold reports whether the hold a call acts on, or the hold of the pending order
// it pays, is the buyer's and live. It reads the database, so it is asked only of a
// call whose token did not do.
func (s *server) onLiveHold(c echo.Context, buyer string) bool {
	ctx := c.Request().Context()
	var id booking.HoldID
	var err error
	switch {
	case c.Param("orderId") != "":
		var oid int64
		if oid, err = pathID(c, "orderId"); err != nil {
			return false
		}
		o, err := s.Buyer.Order(ctx, oid, buyer)
		if err != nil || o.Status != booking.StatusPending {
			return false
		}
		id = o.HoldID
	case strings.HasPrefix(c.Request().URL.Path, "/api/"):
		id, err = pathHoldID(c)
	default:
		id, err = pageHoldID(c)
	}
	if err != nil {
		return false
	}
	_, err = s.Buyer.GetHold(ctx, id, buyer)
	return err == nil
}
