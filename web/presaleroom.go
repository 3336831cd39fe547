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
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// The presale's waiting room (booking/presaleroom.go). With an event's room on and a
// presale to come before the onsale, a session holding one of the presale's codes
// (entered on the code page, presale.go) queues, is admitted and holds in the
// presale's room; a session without one is refused, told when the public sale opens
// and where to enter a code, until the hour before the onsale, when the public room
// takes arrivals for its own draw. Every queue call, place call and admission check
// asks room which room is the session's, and uses its id for the keys, tokens and
// cookies, so that the two rooms never mix.

// noSessionContext marks a place call served without the session (placeSession): it
// has entered no code.
const noSessionContext = "no-session"

// errNeedsCode says that only the presale's room takes arrivals now, and the session
// has none of its codes (presaleOnly words it).
var errNeedsCode = errors.New("the presale's waiting room is for access code holders")

// presaleOf is the event's presale, at most eventCacheTTL old.
func (s *server) presaleOf(ctx context.Context, eventID int64) (booking.Presale, error) {
	return s.presales.get(ctx, eventID, func(ctx context.Context) (booking.Presale, error) {
		return s.Buyer.Presale(ctx, eventID)
	})
}

// presaleRoom is the event's presale room now; false: none is on.
func (s *server) presaleRoom(ctx context.Context, ev booking.Event) (waitroom.Event, booking.Presale, bool, error) {
	if !ev.QueueEnabled || !time.Now().Before(ev.OnsaleAt) {
		return waitroom.Event{}, booking.Presale{}, false, nil // no presale to read
	}
	p, err := s.presaleOf(ctx, ev.ID)
	if err != nil {
		return waitroom.Event{}, p, false, err
	}
	qe, on := booking.PresaleRoom(ev, p, time.Now())
	return qe, p, on, nil
}

// room is the waiting room the session uses for ev now: the presale's for a session
// holding one of its codes while it is on, else the public one; errNeedsCode while
// only the presale's takes arrivals and the session has no code for it.
func (s *server) room(c echo.Context, ev booking.Event) (waitroom.Event, error) {
	pub := ev.Room()
	qe, p, on, err := s.presaleRoom(c.Request().Context(), ev)
	switch {
	case err != nil:
		return pub, err
	case !on:
		return pub, nil
	case c.Get(noSessionContext) == nil && p.Has(s.sessionCode(c, ev.ID).ID):
		return qe, nil
	case booking.PublicQueueOpen(ev, time.Now()):
		return pub, nil
	}
	return pub, errNeedsCode
}

// presaleOnly is the refusal of a session without a code, while only the presale's
// room takes arrivals: when the public sale opens, in the shop's local time, and
// where to enter a code (the API's call, or the code page).
func presaleOnly(c echo.Context, ev booking.Event) error {
	ae := &apiError{Status: http.StatusForbidden, Code: "access_code_required", OnsaleAt: ev.OnsaleAt.UTC().Format(time.RFC3339),
		Message: "This is the presale, for access code holders: the sale opens to the public on " + zone.When(ev.OnsaleAt, ev.Zone) + "."}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		ae.Message += " Enter a code with POST /api/v1/events/{id}/access-code, then join."
		return ae
	}
	return &onwardError{err: ae, next: views.ActionLink{Href: codeURL(ev), Text: "Enter an access code"}}
}

// roomRefused answers err from room: presaleOnly for errNeedsCode, else err itself.
func roomRefused(c echo.Context, ev booking.Event, err error) error {
	if errors.Is(err, errNeedsCode) {
		return presaleOnly(c, ev)
	}
	return err
}

// roomOfHolds is the room whose admissions the event's holds are made with now: the
// presale's while it is on (before the onsale only a code's hold is made), else the
// public one. Giving a slot back and extending an admission act on it.
func (s *server) roomOfHolds(ctx context.Context, ev booking.Event) int64 {
	if qe, _, on, err := s.presaleRoom(ctx, ev); err == nil && on {
		return qe.ID
	}
	return ev.ID
}

// presaleRoomParam is the value of the board's room parameter that asks for the
// presale room's board (roomBoardURL).
const presaleRoomParam = "presale"

// presaleQueueText tells a holder of code codeID about the presale's waiting room,
// while it is on: that it is open, and before its draw, when places are drawn (the
// pre-queue works as the public one). Empty when no presale room is on for the code.
func (s *server) presaleQueueText(ctx context.Context, ev booking.Event, codeID int64) string {
	qe, p, on, err := s.presaleRoom(ctx, ev)
	if err != nil || !on || !p.Has(codeID) {
		return ""
	}
	if now := time.Now(); now.Before(qe.OnsaleAt) {
		return "The presale's waiting room is open: wait in it now, and your place is drawn at random when the presale opens on " +
			drawTime(qe.OnsaleAt, now, ev.Zone) + "."
	}
	return "The presale's waiting room is open: join it to choose your seats."
}
