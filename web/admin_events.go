package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/catalog"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// errAdminEventNotFound answers an id that names no event.
var errAdminEventNotFound = &apiError{Status: http.StatusNotFound, Code: "event_not_found", Message: "No such event."}

func adminEventURL(id int64) string { return "/admin/events/" + strconv.FormatInt(id, 10) }

// newEvent is the empty event form; ?venue= preselects a venue, and its zone the times.
func (s *server) newEvent(c echo.Context) error {
	venue, _ := strconv.ParseInt(c.QueryParam("venue"), 10, 64)
	loc, err := s.venueZone(c.Request().Context(), venue)
	if err != nil {
		return err
	}
	now := time.Now().Truncate(time.Hour)
	e := views.EventEditor{
		StartsAt: zone.Form(now.Add(30*24*time.Hour), loc), OnsaleAt: zone.Form(now.Add(24*time.Hour), loc),
		QueueSlots: "500", QueueRate: "50", QueueMinutes: "15", QueueIdleMinutes: "3",
	}
	return s.eventForm(c, http.StatusOK, e, venue)
}

// eventForm renders the new event form with the venues to choose from.
func (s *server) eventForm(c echo.Context, status int, e views.EventEditor, venue int64) error {
	venues, err := s.Catalog.Venues(c.Request().Context())
	if err != nil {
		return err
	}
	e.Zone = "the venue's time zone"
	for _, v := range venues {
		e.Venues = append(e.Venues, views.Option{Value: strconv.FormatInt(v.ID, 10), Label: v.Name + " (" + v.TimeZone + ")",
			Selected: v.ID == venue})
		if v.ID == venue {
			e.Zone = v.TimeZone
		}
	}
	e.AdminPage, e.Heading, e.Action = adminPage(c, "New event"), "New event", "/admin/events"
	return render(c, status, "no-store", views.EventEditorPage(e))
}

// createEvent creates an event from the form, with its inventory copied from the
// venue's layout.
func (s *server) createEvent(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return badRequest("invalid_form", "The form could not be read.")
	}
	venue, verr := strconv.ParseInt(form.Get("venue"), 10, 64)
	loc, err := s.venueZone(c.Request().Context(), venue)
	if err != nil {
		return err
	}
	in, ferr := readEventForm(form, loc)
	if ferr == nil && (verr != nil || venue <= 0) {
		ferr = &catalog.InvalidError{Field: "venueId", Message: "choose a venue"}
	}
	in.VenueID, in.Slug, in.Published = venue, strings.TrimSpace(form.Get("slug")), form.Get("published") == "on"
	var id int64
	if ferr == nil {
		id, ferr = s.Catalog.CreateEvent(c.Request().Context(), s.actor(c), in)
	}
	var inv *catalog.InvalidError
	if errors.As(ferr, &inv) {
		e := editorOf(form)
		e.Slug, e.Published, e.Error = in.Slug, in.Published, problem(ferr)
		return s.eventForm(c, http.StatusBadRequest, e, venue)
	} else if ferr != nil {
		return ferr
	}
	return c.Redirect(http.StatusSeeOther, adminEventURL(id)+"?saved=1")
}

// pathEvent is the event the path names, published or not.
func (s *server) pathEvent(c echo.Context) (catalog.Event, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return catalog.Event{}, err
	}
	ev, err := s.Catalog.Event(c.Request().Context(), id)
	if errors.Is(err, catalog.ErrEventNotFound) {
		return catalog.Event{}, errAdminEventNotFound
	}
	return ev, err
}

// editEvent is an event's form, with publishing.
func (s *server) editEvent(c echo.Context) error {
	ev, err := s.pathEvent(c)
	if err != nil {
		return err
	}
	e := editorOfEvent(ev)
	switch {
	case c.QueryParam("saved") != "":
		e.Notice = "Saved."
	case c.QueryParam("published") == "true":
		e.Notice = "Published: the event is on the public pages."
	case c.QueryParam("published") == "false":
		e.Notice = "Unpublished: the event is gone from the public pages and refuses holds."
	}
	return s.renderEvent(c, http.StatusOK, ev, e)
}

func (s *server) renderEvent(c echo.Context, status int, ev catalog.Event, e views.EventEditor) error {
	e.AdminPage, e.Heading, e.Action = adminPage(c, ev.Name), ev.Name, adminEventURL(ev.ID)
	e.ID, e.Venue, e.Published, e.Seats = ev.ID, ev.Venue, ev.Published, strconv.Itoa(ev.Seats)
	e.Zone = ev.Zone.String()
	e.StartsText, e.OnsaleText = zone.When(ev.StartsAt, ev.Zone), zone.When(ev.OnsaleAt, ev.Zone)
	if !ev.SalesCloseAt.IsZero() {
		e.CloseText = zone.When(ev.SalesCloseAt, ev.Zone)
	}
	e.PublicURL = "/events/" + ev.Slug
	e.PublishURL = adminEventURL(ev.ID) + "/publish"
	if ev.Queue.VerifiedOnly {
		vc, err := s.verifyCounts(c.Request().Context(), booking.Event{ID: ev.ID, VerifiedOnly: true})
		if err != nil {
			return err
		}
		e.Verified = fmt.Sprintf("Verified buyers: %s registered, %s confirmed.", ordertext.Thousands(vc.Registered), ordertext.Thousands(vc.Confirmed))
	}
	return render(c, status, "no-store", views.EventEditorPage(e))
}

// updateEvent changes an event's settings.
func (s *server) updateEvent(c echo.Context) error {
	ev, err := s.pathEvent(c)
	if err != nil {
		return err
	}
	ctx, id := c.Request().Context(), ev.ID
	form, err := c.FormParams()
	if err != nil {
		return badRequest("invalid_form", "The form could not be read.")
	}
	in, ferr := readEventForm(form, ev.Zone)
	if ferr == nil {
		ferr = s.Catalog.UpdateEvent(ctx, s.actor(c), id, in)
	}
	var inv *catalog.InvalidError
	if errors.As(ferr, &inv) {
		e := editorOf(form)
		e.Error = problem(ferr)
		return s.renderEvent(c, http.StatusBadRequest, ev, e)
	} else if errors.Is(ferr, catalog.ErrEventNotFound) {
		return errAdminEventNotFound
	} else if ferr != nil {
		return ferr
	}
	return c.Redirect(http.StatusSeeOther, adminEventURL(id)+"?saved=1")
}

// publishEvent publishes (published=true) or withdraws (false) an event.
func (s *server) publishEvent(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var published bool
	switch c.FormValue("published") {
	case "true":
		published = true
	case "false":
	default:
		return badRequest("invalid_published", "published must be true or false.")
	}
	err = s.Catalog.SetPublished(c.Request().Context(), s.actor(c), id, published)
	if errors.Is(err, catalog.ErrEventNotFound) {
		return errAdminEventNotFound
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, adminEventURL(id)+"?published="+strconv.FormatBool(published))
}

// actor is the current member, for the catalog's audit entries.
func (s *server) actor(c echo.Context) catalog.Actor {
	return catalog.Actor{StaffID: currentStaff(c).ID, Address: c.RealIP()}
}

// readEventForm reads the settings common to new and existing events, the times as
// wall-clock times in the venue's zone loc. Numbers and times that cannot be read, and
// times the clocks skip there, are input errors like any other.
func readEventForm(form url.Values, loc *time.Location) (catalog.EventInput, error) {
	for key, vals := range form {
		for _, v := range vals {
			if err := cleanText("field", v, 1000); err != nil {
				return catalog.EventInput{}, &catalog.InvalidError{Field: key, Message: key + " is too long or contains characters that are not allowed"}
			}
		}
	}
	in := catalog.EventInput{Name: form.Get("name")}
	var err error
	readTime := func(field, label string, optional bool) time.Time {
		v := strings.TrimSpace(form.Get(field))
		if err != nil || (optional && v == "") {
			return time.Time{}
		}
		t, _, perr := zone.ParseForm(v, loc)
		var gap *zone.GapError
		if errors.As(perr, &gap) {
			err = &catalog.InvalidError{Field: field, Message: "for " + label + ", " + gap.Error()}
		} else if perr != nil {
			err = &catalog.InvalidError{Field: field, Message: label + " is not a date and time such as 2026-12-31T20:00"}
		}
		return t
	}
	in.StartsAt = readTime("starts_at", "the start", false)
	in.OnsaleAt = readTime("onsale_at", "the sales opening", false)
	in.SalesCloseAt = readTime("sales_close_at", "the sales closing", true)
	readInt := func(field, label string) int {
		if err != nil {
			return 0
		}
		n, perr := strconv.Atoi(strings.TrimSpace(form.Get(field)))
		if perr != nil {
			err = &catalog.InvalidError{Field: field, Message: label + " must be a whole number"}
		}
		return n
	}
	// Empty keeps the program's hold time (HOLD_TTL), as the catalog's 0 does; a number
	// must be 1 to 60 (the catalog checks).
	if strings.TrimSpace(form.Get("hold_minutes")) != "" {
		in.HoldMinutes = readInt("hold_minutes", "hold minutes")
		if err == nil && in.HoldMinutes == 0 {
			err = &catalog.InvalidError{Field: "holdMinutes", Message: "a hold lasts between 1 and 60 minutes"}
		}
	}
	in.Queue.Enabled = form.Get("queue_enabled") == "on"
	in.Queue.VerifiedOnly = form.Get("verified_only") == "on"
	in.Queue.Slots = readInt("queue_slots", "shoppers at a time")
	minutes := readInt("queue_minutes", "the admission's minutes")
	if err == nil && (minutes < 1 || minutes > 120) {
		err = &catalog.InvalidError{Field: "queueTokenTTL", Message: "an admission lasts between 1 and 120 minutes"}
	}
	in.Queue.TokenTTL = time.Duration(minutes) * time.Minute
	// Empty (a form from before the field) takes the catalog's default, as 0 does.
	if strings.TrimSpace(form.Get("queue_idle_minutes")) != "" {
		idle := readInt("queue_idle_minutes", "the minutes to hold a seat in")
		if err == nil && (idle < 1 || idle > 120) {
			err = &catalog.InvalidError{Field: "queueIdle", Message: "a turn with nothing held lapses after between 1 and 120 minutes"}
		}
		in.Queue.Idle = time.Duration(idle) * time.Minute
	}
	if err == nil {
		rate, perr := strconv.ParseFloat(strings.TrimSpace(form.Get("queue_rate")), 64)
		if perr != nil || math.IsNaN(rate) || rate <= 0 {
			err = &catalog.InvalidError{Field: "queueRate", Message: "admissions per second must be a number above 0"}
		}
		in.Queue.Rate = rate
	}
	if err == nil && in.Queue.Slots < 1 {
		err = &catalog.InvalidError{Field: "queueSlots", Message: "shoppers at a time must be at least 1"}
	}
	return in, err
}

// editorOf fills the form with what was typed, to show it again with its error.
func editorOf(form url.Values) views.EventEditor {
	return views.EventEditor{
		Name: form.Get("name"), StartsAt: form.Get("starts_at"), OnsaleAt: form.Get("onsale_at"),
		SalesCloseAt: form.Get("sales_close_at"), HoldMinutes: form.Get("hold_minutes"),
		QueueEnabled: form.Get("queue_enabled") == "on", QueueSlots: form.Get("queue_slots"),
		QueueRate: form.Get("queue_rate"), QueueMinutes: form.Get("queue_minutes"), QueueIdleMinutes: form.Get("queue_idle_minutes"),
		VerifiedOnly: form.Get("verified_only") == "on",
	}
}

// editorOfEvent fills the form with an event's settings.
func editorOfEvent(ev catalog.Event) views.EventEditor {
	e := views.EventEditor{
		Name: ev.Name, Slug: ev.Slug, StartsAt: zone.Form(ev.StartsAt, ev.Zone), OnsaleAt: zone.Form(ev.OnsaleAt, ev.Zone),
		QueueEnabled: ev.Queue.Enabled, QueueSlots: strconv.Itoa(ev.Queue.Slots),
		QueueRate:        strconv.FormatFloat(ev.Queue.Rate, 'f', -1, 64),
		QueueMinutes:     strconv.Itoa(int(math.Ceil(ev.Queue.TokenTTL.Minutes()))),
		QueueIdleMinutes: strconv.Itoa(int(math.Ceil(ev.Queue.Idle.Minutes()))),
		VerifiedOnly:     ev.Queue.VerifiedOnly,
	}
	if !ev.SalesCloseAt.IsZero() {
		e.SalesCloseAt = zone.Form(ev.SalesCloseAt, ev.Zone)
	}
	if ev.HoldMinutes != 0 {
		e.HoldMinutes = strconv.Itoa(ev.HoldMinutes)
	}
	return e
}

// adminEvents lists every event for the admin home page, published or not.
func (s *server) adminEvents(c echo.Context) ([]booking.Event, map[int64]bool, error) {
	list, err := s.Catalog.Events(c.Request().Context())
	if err != nil {
		return nil, nil, err
	}
	events := make([]booking.Event, len(list))
	published := make(map[int64]bool, len(list))
	for i, e := range list {
		events[i] = booking.Event{ID: e.ID, Slug: e.Slug, Name: e.Name, Venue: e.Venue, Zone: e.Zone, StartsAt: e.StartsAt,
			OnsaleAt: e.OnsaleAt, SalesCloseAt: e.SalesCloseAt, QueueEnabled: e.QueueEnabled}
		published[e.ID] = e.Published
	}
	return events, published, nil
}

// venueZone is the time zone of the venue id, in which a new event's times are typed;
// UTC for no venue or an unknown one (the catalog then refuses the event).
func (s *server) venueZone(ctx context.Context, id int64) (*time.Location, error) {
	if id <= 0 {
		return time.UTC, nil
	}
	v, err := s.Catalog.Venue(ctx, id)
	if errors.Is(err, catalog.ErrVenueNotFound) {
		return time.UTC, nil
	} else if err != nil {
		return nil, err
	}
	return zone.Of(v.TimeZone), nil
}
