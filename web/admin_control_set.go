package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/views"
)

// The control room's controls: pause and resume admission, shoppers at a time and the
// admission rate. Each is a form that works without JavaScript (a post, then the page
// again with what it did said at the top) and, with htmx, posts in the background and
// swaps the controls' panel for one saying what it did, or why not (422), without
// leaving the page: the live figures go on. Every change is audited with the room's
// setting before and after.

// controlNotices say what a control just did (the redirect's ?done=, or the panel).
var controlNotices = map[string]string{
	"paused":  "Admission paused: nobody more is let in until you resume. The queue keeps its order.",
	"resumed": "Admission resumed.",
	"rate":    "Admission rate changed; the waiting room uses it within a second.",
	"slots":   "Shoppers at a time changed; the waiting room uses it within a second. Nobody shopping now is sent out.",
}

// controlPanel is the controls' panel of an event's room as set.
func controlPanel(csrf string, eventID int64, paused bool, slots int, rate string) views.ControlPanel {
	return views.ControlPanel{EventID: eventID, CSRF: csrf, Paused: paused, Slots: strconv.Itoa(slots), Rate: rate,
		MaxSlots: booking.MaxQueueSlots, MaxRate: booking.MaxQueueRate}
}

// queueChanged audits a change of the room (action, with the setting before and after)
// and answers it: htmx gets the panel saying what it did (done), a plain form the page.
func (s *server) queueChanged(c echo.Context, id int64, action, done string, before, after map[string]any, qc booking.QueueControl) error {
	if err := s.audit(c, action, "event "+strconv.FormatInt(id, 10), before, after); err != nil {
		return err
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, controlPath(id)+"?done="+done)
	}
	p := controlPanel(adminPage(c, "").CSRFToken, id, qc.Paused, qc.Slots, strconv.FormatFloat(qc.Rate, 'f', -1, 64))
	p.Notice = controlNotices[done]
	return render(c, http.StatusOK, "no-store", views.ControlPanelView(p))
}

// queueRefused answers a control whose value was refused (ae, a 422): htmx gets the
// panel with the room as set, the value as typed in its field, and why; a plain form
// the error page. typed sets the field.
func (s *server) queueRefused(c echo.Context, id int64, ae *apiError, typed func(*views.ControlPanel)) error {
	if !isHTMX(c) {
		return ae
	}
	cur, err := s.Desk.Control(c.Request().Context(), id)
	if err != nil {
		return err
	}
	p := controlPanel(adminPage(c, "").CSRFToken, id, cur.QueuePaused, cur.QueueSlots, strconv.FormatFloat(cur.QueueRate, 'f', -1, 64))
	typed(&p)
	p.Error = ae.Message
	return render(c, ae.Status, "no-store", views.ControlPanelView(p))
}

func controlPath(id int64) string { return "/admin/events/" + strconv.FormatInt(id, 10) + "/control" }

// setQueuePaused stops (paused) or restarts admission from an event's room.
func (s *server) setQueuePaused(paused bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := pathID(c, "id")
		if err != nil {
			return err
		}
		qc, err := s.Desk.SetQueuePaused(c.Request().Context(), id, paused)
		if err != nil {
			return err
		}
		action, done := "queue.resume", "resumed"
		if paused {
			action, done = "queue.pause", "paused"
		}
		return s.queueChanged(c, id, action, done, map[string]any{"paused": qc.WasPaused}, map[string]any{"paused": qc.Paused}, qc)
	}
}

// setQueueRate sets the admission rate from the form.
func (s *server) setQueueRate(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	typed := c.FormValue("rate")
	invalid := func() error {
		return s.queueRefused(c, id, &apiError{Status: http.StatusUnprocessableEntity, Code: "invalid_rate",
			Message: fmt.Sprintf("The admission rate must be a number of shoppers a second above 0 and at most %d, such as 50.", booking.MaxQueueRate)},
			func(p *views.ControlPanel) { p.Rate = typed })
	}
	rate, err := strconv.ParseFloat(strings.TrimSpace(typed), 64)
	if err != nil {
		return invalid()
	}
	qc, err := s.Desk.SetQueueRate(c.Request().Context(), id, rate)
	if errors.Is(err, booking.ErrInvalidRate) {
		return invalid()
	} else if err != nil {
		return err
	}
	return s.queueChanged(c, id, "queue.rate", "rate", map[string]any{"rate": qc.WasRate}, map[string]any{"rate": qc.Rate}, qc)
}

// setQueueSlots sets how many shoppers the room admits at once, from the form.
func (s *server) setQueueSlots(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	typed := c.FormValue("slots")
	invalid := func() error {
		return s.queueRefused(c, id, &apiError{Status: http.StatusUnprocessableEntity, Code: "invalid_slots",
			Message: fmt.Sprintf("Shoppers at a time must be a whole number from 1 to %d.", booking.MaxQueueSlots)},
			func(p *views.ControlPanel) { p.Slots = typed })
	}
	slots, err := strconv.Atoi(strings.TrimSpace(typed))
	if err != nil {
		return invalid()
	}
	qc, err := s.Desk.SetQueueSlots(c.Request().Context(), id, slots)
	if errors.Is(err, booking.ErrInvalidSlots) {
		return invalid()
	} else if err != nil {
		return err
	}
	return s.queueChanged(c, id, "queue.slots", "slots", map[string]any{"slots": qc.WasSlots}, map[string]any{"slots": qc.Slots}, qc)
}
