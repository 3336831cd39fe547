package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/waitroom"
	"boxoffice/views"
)

// A turn that lapses: an admitted visitor who has held nothing within the event's idle
// window loses the slot to the next in line (internal/waitroom decides it), and the
// token they carry is refused from then on. Their next seat call puts them back in the
// queue and says so in words.

// turnLapsed answers a seat call whose admission to room qe lapsed. The visitor joins the queue
// again at once (counted against the address's joins; no new proof of work: the
// session gave one for the turn it lost, and joining again only puts it at the end of
// the line): with a slot free and nobody waiting that admits them anew, and the call
// goes on with the new admission (kept in the cookie); else they wait at the end of
// the line. The seat page opened anew goes to the queue page, which says why; a form
// or the API is refused with 429 not_admitted, lapsed, in words and, through the API,
// with the new position.
func (s *server) turnLapsed(c echo.Context, ev booking.Event, qe waitroom.Event, visitor string, next echo.HandlerFunc) error {
	st, err := s.join(c, qe, visitor)
	if err == nil && st.Admitted {
		if _, verr := s.Queue.Verify(st.Token, qe.ID, visitor); verr == nil {
			s.keepAdmission(c, qe.ID, st)
			return next(c)
		}
	}
	api := strings.HasPrefix(c.Request().URL.Path, "/api/")
	if !api && c.Request().Method == http.MethodGet {
		return seeOther(c, queueURL(ev))
	}
	ae := &apiError{Status: http.StatusTooManyRequests, Code: "not_admitted", RetryAfter: queueRetryAfter, Lapsed: true,
		Message: lapsedText(qe.Settings, err == nil)}
	if err == nil && st.Position > 0 {
		pos := st.Position
		ae.Position = &pos
	}
	if api {
		if err == nil {
			ae.Message += " Ask GET /api/v1/events/{id}/queue until admitted again; the new token comes with the answer."
		}
		return ae
	}
	return &onwardError{err: ae, next: views.ActionLink{Href: queueURL(ev), Text: "Back to the waiting room"}}
}

// lapsedText says why the turn went, and where the visitor stands now: back in the
// queue, or (the queue not answering) asked to join it again.
func lapsedText(s waitroom.Settings, rejoined bool) string {
	msg := "Your turn lapsed because no seat was held within " + idleText(waitroom.IdleWindow(s)) +
		", so it went to the next in line."
	if rejoined {
		return msg + " You are back in the queue."
	}
	return msg + " Join the queue again to come back."
}

// idleText words an idle window: whole minutes, or seconds.
func idleText(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return countOf(int(d/time.Minute), "minute")
	}
	return countOf(int(d.Round(time.Second)/time.Second), "second")
}

// lapsedNotice is what the queue page says to a visitor whose last turn lapsed: the
// session still carries that admission's token, whose admission the room says lapsed.
// Empty for anyone else (one Redis read, only for a session with a valid token).
func (s *server) lapsedNotice(c echo.Context, qe waitroom.Event, visitor string) string {
	cl, _, ok := s.sessionAdmission(c, qe.ID, visitor)
	if !ok || s.admissionEnd(c, qe.ID, visitor, cl) != waitroom.Lapsed {
		return ""
	}
	return lapsedText(qe.Settings, true)
}

// holdWithinText tells an admitted visitor how long the turn waits for a hold; empty
// when the admission's own end comes first.
func holdWithinText(ev booking.Event) string {
	s := ev.Room().Settings
	if !s.Enabled || s.TokenTTL > 0 && waitroom.IdleWindow(s) >= s.TokenTTL {
		return ""
	}
	return "Hold a seat within " + idleText(waitroom.IdleWindow(s)) + ", or your turn goes to the next in line."
}
