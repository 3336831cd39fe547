package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// Presales. A buyer enters an access code for an event, on its code page or through
// the API; once the code checks out (booking.EnterAccessCode) the session remembers
// it for that event, and every hold request of the session carries it (limitHold).
// The holding statements decide what it opens: before the onsale, the code's presale
// for its quota of places. Codes entered are counted per client address
// (limitedByCodes), so guessing them costs a script an address per few tries.

// sessionCodeKey is the session key of the access code entered for an event.
func sessionCodeKey(eventID int64) string { return "access_code:" + strconv.FormatInt(eventID, 10) }

// enteredCode is the access code a session entered for an event: its id and the code.
type enteredCode struct {
	ID   int64
	Code string
}

// sessionCode is the access code the session entered for the event; the zero value
// when none.
func (s *server) sessionCode(c echo.Context, eventID int64) enteredCode {
	v := s.Sessions.GetString(c.Request().Context(), sessionCodeKey(eventID))
	id, code, ok := strings.Cut(v, " ")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || n <= 0 {
		return enteredCode{}
	}
	return enteredCode{ID: n, Code: code}
}

// routePresale adds the code entry's page and call to the routes table.
func (s *server) routePresale(e *echo.Echo, buyerPage, buyer []echo.MiddlewareFunc) {
	e.GET("/events/:slug/code", s.showCodePage, buyerPage...)
	e.POST("/events/:slug/code", s.submitCode, buyerPage...)
	e.POST("/api/v1/events/:id/access-code", s.postAccessCode, buyer...)
}

// enterCode checks code for ev, counted against the address's codes, and remembers it
// in the session (which it starts when there is none).
func (s *server) enterCode(c echo.Context, ev booking.Event, code string) (booking.AccessCodeEntered, error) {
	if err := s.limitAddress(c, limitedByCodes); err != nil {
		return booking.AccessCodeEntered{}, err
	}
	ac, err := s.Buyer.EnterAccessCode(c.Request().Context(), ev.ID, code)
	if err != nil {
		return booking.AccessCodeEntered{}, err
	}
	if _, _, err := s.newBuyer(c); err != nil {
		return booking.AccessCodeEntered{}, err
	}
	s.Sessions.Put(c.Request().Context(), sessionCodeKey(ev.ID), strconv.FormatInt(ac.ID, 10)+" "+ac.Code)
	return ac, s.saveSession(c)
}

// accessCodeJSON is the API's answer to an access code entered.
type accessCodeJSON struct {
	Code            string `json:"code"`
	PresaleStartsAt string `json:"presaleStartsAt"`
	PresaleEndsAt   string `json:"presaleEndsAt"`
	OnsaleAt        string `json:"onsaleAt"`
}

// postAccessCode enters an access code for the session: 200 with its presale, or
// 422 access_code_unknown, 409 access_code_paused / access_code_ended.
func (s *server) postAccessCode(c echo.Context) error {
	ev, err := eventOfPath(s, c)
	if err != nil {
		return err
	}
	var in struct {
		Code string `json:"code"`
	}
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	ac, err := s.enterCode(c, ev, in.Code)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, accessCodeJSON{Code: ac.Code, PresaleStartsAt: ac.PresaleStarts.UTC().Format(time.RFC3339),
		PresaleEndsAt: ac.PresaleEnds.UTC().Format(time.RFC3339), OnsaleAt: ev.OnsaleAt.UTC().Format(time.RFC3339)})
}

// codeView is the code page for the session.
func (s *server) codeView(c echo.Context, ev booking.Event) views.CodePage {
	v := views.CodePage{Page: buyerPage(c, "Access code: "+ev.Name), Event: eventHeader(ev, time.Now()),
		Action: codeURL(ev), CSRFField: csrfForm, Next: onward(ev)}
	if e := s.sessionCode(c, ev.ID); e.ID != 0 {
		v.Entered = e.Code
		v.Message = s.presaleQueueText(c.Request().Context(), ev, e.ID)
	} else if _, _, on, err := s.presaleRoom(c.Request().Context(), ev); err == nil && on && !booking.PublicQueueOpen(ev, time.Now()) {
		v.Notice = "This is the presale, for access code holders: the sale opens to the public on " + zone.When(ev.OnsaleAt, ev.Zone) + "."
	}
	return v
}

func codeURL(ev booking.Event) string { return "/events/" + ev.Slug + "/code" }

// showCodePage is the form where a buyer enters an access code for an event.
func (s *server) showCodePage(c echo.Context) error {
	ev, err := eventOfSlug(s, c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, personal, views.CodePageView(s.codeView(c, ev)))
}

// submitCode enters the typed code: the page says when its presale opens, or why the
// code was refused.
func (s *server) submitCode(c echo.Context) error {
	ev, err := eventOfSlug(s, c)
	if err != nil {
		return err
	}
	typed := strings.TrimSpace(c.FormValue("code"))
	ac, err := s.enterCode(c, ev, typed)
	v := s.codeView(c, ev)
	var ae *apiError
	switch {
	case err == nil:
		v.Entered = ac.Code
		v.Message = strings.TrimSpace(presaleText(ac, ev) + " " + s.presaleQueueText(c.Request().Context(), ev, ac.ID))
		return render(c, http.StatusOK, personal, views.CodePageView(v))
	case errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests:
		return err
	case errors.Is(err, booking.ErrAccessCodeUnknown), errors.Is(err, booking.ErrAccessCodePaused), errors.Is(err, booking.ErrAccessCodeEnded):
		a := s.toAPIError(err)
		v.Typed, v.Refused = typed, a.Message
		return render(c, a.Status, personal, views.CodePageView(v))
	}
	return err
}

// presaleText says what an entered code opens, on the clocks of the event's zone.
func presaleText(ac booking.AccessCodeEntered, ev booking.Event) string {
	now := time.Now()
	switch {
	case !ac.PresaleStarts.After(now) && ac.PresaleEnds.After(ev.OnsaleAt):
		return "Your presale is open now, until the public sale opens on " + zone.When(ev.OnsaleAt, ev.Zone) + "."
	case !ac.PresaleStarts.After(now):
		return "Your presale is open now, until " + zone.When(ac.PresaleEnds, ev.Zone) + "."
	}
	return "Your presale opens on " + zone.When(ac.PresaleStarts, ev.Zone) + "."
}
