package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/checkin"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/zone"
	"boxoffice/static"
	"boxoffice/views"
)

// The door: a page for phones where the door staff choose their event and
// gate once, then type or scan ticket codes. The event and gate are kept in the staff
// session and in the scan form's fields, so a reload or a second tab keeps them.

// Staff session keys of the check-in page.
const (
	checkinEventKey = "checkin_event"
	checkinGateKey  = "checkin_gate"
)

// checkinScript adds camera scanning (BarcodeDetector, where the browser has it) and
// keeps the code field ready for the next scan.
var checkinScript = static.URL("js/checkin.js")

// showCheckin is the check-in page. ?event= and ?gate= choose (and remember) where the
// door is; without them the session's choice stands.
func (s *server) showCheckin(c echo.Context) error {
	ctx := c.Request().Context()
	eventID := s.StaffSessions.GetInt64(ctx, checkinEventKey)
	gate := s.StaffSessions.GetString(ctx, checkinGateKey)
	if v := c.QueryParam("event"); v != "" {
		id, err := booking.ParseID(v)
		if err != nil {
			return badRequest("invalid_event", "Choose an event from the list.")
		}
		eventID, gate = id, c.QueryParam("gate")
		if err := checkGate(gate); err != nil {
			return err
		}
	}
	m, err := s.checkinModel(c, eventID, gate)
	if err != nil {
		return err
	}
	if m.EventID != 0 && m.Gate != "" {
		s.StaffSessions.Put(ctx, checkinEventKey, m.EventID)
		s.StaffSessions.Put(ctx, checkinGateKey, m.Gate)
	}
	return render(c, http.StatusOK, "no-store", views.CheckinPage(m))
}

// checkGate refuses a gate name that is no gate's, by the door's own rule.
func checkGate(gate string) error {
	var invalid *checkin.InvalidError
	if err := checkin.CheckGate(gate); errors.As(err, &invalid) {
		return badRequest("invalid_gate", invalid.Reason)
	}
	return nil
}

// checkinModel is the page for eventID and gate; an event that is no longer there is
// forgotten rather than an error (it was remembered from an earlier visit).
func (s *server) checkinModel(c echo.Context, eventID int64, gate string) (views.Checkin, error) {
	ctx := c.Request().Context()
	p := adminPage(c, "Check-in")
	p.Scripts = append(p.Scripts, checkinScript)
	m := views.Checkin{AdminPage: p, Gate: gate}
	events, err := s.Desk.Events(ctx)
	if err != nil {
		return m, err
	}
	for _, e := range events {
		sel := e.ID == eventID
		if sel {
			m.EventID, m.Event = e.ID, e.Name
		}
		m.Events = append(m.Events, views.CheckinEvent{ID: e.ID, Name: e.Name, Selected: sel})
	}
	if m.EventID == 0 && eventID != 0 {
		ev, err := s.Desk.Event(ctx, eventID)
		if errors.Is(err, booking.ErrEventNotFound) {
			return m, nil
		} else if err != nil {
			return m, err
		}
		m.EventID, m.Event = ev.ID, ev.Name
		m.Events = append(m.Events, views.CheckinEvent{ID: ev.ID, Name: ev.Name, Selected: true})
	}
	if m.EventID != 0 {
		n, err := s.Door.Counts(ctx, m.EventID)
		if err != nil {
			return m, err
		}
		m.Counts = ordertext.Thousands(n.CheckedIn) + " of " + ordertext.Thousands(n.Valid) + " tickets in"
	}
	return m, nil
}

// checkIn answers one scan: valid, already used (when, at which gate), void, another
// event's (named) or unknown. htmx gets the answer alone, a browser without
// JavaScript the page with it. Bad input is a 400 that checks nothing in.
func (s *server) checkIn(c echo.Context) error {
	ctx := c.Request().Context()
	eventID, err := booking.ParseID(c.FormValue("event"))
	if err != nil {
		return s.checkinAnswer(c, 0, "", http.StatusBadRequest, views.CheckinResult{Tone: "error",
			Headline: "Choose the event first", Detail: "Pick the event and the gate at the top of the page."})
	}
	gate := c.FormValue("gate")
	ans, err := s.Door.CheckIn(ctx, checkin.Scan{EventID: eventID, Gate: gate, Code: c.FormValue("code"),
		StaffID: currentStaff(c).ID, Address: c.RealIP()})
	var invalid *checkin.InvalidError
	switch {
	case errors.As(err, &invalid):
		return s.checkinAnswer(c, eventID, gate, http.StatusBadRequest, views.CheckinResult{Tone: "error", Headline: "Not checked", Detail: invalid.Reason})
	case errors.Is(err, checkin.ErrEventNotFound):
		return s.checkinAnswer(c, 0, "", http.StatusNotFound, views.CheckinResult{Tone: "error",
			Headline: "No such event", Detail: "Pick the event and the gate at the top of the page."})
	case err != nil:
		return err
	}
	// Remembered for the next visit; written only when it changes, not once a scan.
	if s.StaffSessions.GetInt64(ctx, checkinEventKey) != eventID || s.StaffSessions.GetString(ctx, checkinGateKey) != gate {
		s.StaffSessions.Put(ctx, checkinEventKey, eventID)
		s.StaffSessions.Put(ctx, checkinGateKey, gate)
	}
	loc := time.UTC
	if ans.Result == checkin.Used { // says when, on the venue's clocks
		if ev, err := s.eventByID(ctx, eventID); err == nil {
			loc = ev.Zone
		}
	}
	return s.checkinAnswer(c, eventID, gate, http.StatusOK, checkinResult(ans, loc))
}

// checkinResult words an answer for the person at the door, its times on the clocks
// of the event's zone loc.
func checkinResult(a checkin.Answer, loc *time.Location) views.CheckinResult {
	r := views.CheckinResult{Code: a.Code}
	switch a.Result {
	case checkin.Valid:
		r.Tone, r.Headline, r.Detail = "valid", "Valid: let them in", a.Place
	case checkin.Used:
		r.Tone, r.Headline = "used", "Already used"
		r.Detail = "Checked in at " + zone.Clock(a.At, loc) + " at gate " + a.Gate
		if zone.Day(a.At, loc) != zone.Day(time.Now(), loc) {
			r.Detail = "Checked in on " + adminTime(a.At, loc) + " at gate " + a.Gate
		}
	case checkin.Void:
		r.Tone, r.Headline, r.Detail = "void", "Void: do not let in", "This ticket was refunded or cancelled."
	case checkin.WrongEvent:
		r.Tone, r.Headline, r.Detail = "wrong", "Wrong event", "This ticket is for "+a.EventName+"."
	default:
		r.Tone, r.Headline, r.Detail = "unknown", "Unknown code", "No ticket has this code. Check it, or type it again."
	}
	return r
}

// checkinAnswer sends the answer: the fragment to htmx, else the whole page.
func (s *server) checkinAnswer(c echo.Context, eventID int64, gate string, status int, r views.CheckinResult) error {
	varyHTMX(c)
	if isHTMX(c) {
		return render(c, status, "no-store", views.CheckinAnswer(r))
	}
	m, err := s.checkinModel(c, eventID, gate)
	if err != nil {
		return err
	}
	m.Result = r
	return render(c, status, "no-store", views.CheckinPage(m))
}
