package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
	"boxoffice/internal/zone"
)

// VenueSummary is a venue in the list.
type VenueSummary struct {
	ID       int64
	Name     string
	City     string
	TimeZone string
	Seats    int
	Standing int
	Events   int
}

// Venues lists every venue by name.
func (s *Service) Venues(ctx context.Context) ([]VenueSummary, error) {
	rows, err := db.New(s.pool).VenueList(ctx)
	if err != nil {
		return nil, dberr.Translate(err)
	}
	out := make([]VenueSummary, len(rows))
	for i, r := range rows {
		out[i] = VenueSummary{ID: r.ID, Name: r.Name, City: r.City, TimeZone: r.TimeZone, Seats: int(r.Seats), Standing: int(r.Standing), Events: int(r.Events)}
	}
	return out, nil
}

// Venue is a venue with its layout as entered. Its seats are not read: the editor
// redraws them from the layout (Layout.Seats), and a stadium's are 250,000 rows.
type Venue struct {
	ID int64
	VenueInput
}

// Venue returns one venue with its layout.
func (s *Service) Venue(ctx context.Context, id int64) (Venue, error) {
	q := db.New(s.pool)
	r, err := q.VenueGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Venue{}, ErrVenueNotFound
	} else if err != nil {
		return Venue{}, dberr.Translate(err)
	}
	v := Venue{ID: r.ID, VenueInput: VenueInput{Name: r.Name, City: r.City, TimeZone: r.TimeZone}}
	// A venue made before layouts were kept (or by hand) has none: an empty layout.
	_ = json.Unmarshal(r.Layout, &v.Layout)
	return v, nil
}

// Event is an event as staff see and edit it.
type Event struct {
	ID           int64
	VenueID      int64
	Venue        string
	Zone         *time.Location // the venue's: the form's times are typed in it
	Slug         string
	Name         string
	StartsAt     time.Time
	OnsaleAt     time.Time
	SalesCloseAt time.Time // zero: at the start
	HoldMinutes  int       // zero: the program's hold time
	Published    bool
	Queue        Queue
	UpdatedAt    time.Time
	Seats        int
}

// Input is the event's settings as an EventInput, to edit.
func (e Event) Input() EventInput {
	return EventInput{VenueID: e.VenueID, Slug: e.Slug, Name: e.Name, StartsAt: e.StartsAt, OnsaleAt: e.OnsaleAt,
		SalesCloseAt: e.SalesCloseAt, HoldMinutes: e.HoldMinutes, Published: e.Published, Queue: e.Queue}
}

// Event returns one event, published or not.
func (s *Service) Event(ctx context.Context, id int64) (Event, error) {
	r, err := db.New(s.pool).EventAdminGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, ErrEventNotFound
	} else if err != nil {
		return Event{}, dberr.Translate(err)
	}
	return eventOfRow(r), nil
}

func eventOfRow(r db.EventAdminGetRow) Event {
	e := Event{ID: r.ID, VenueID: r.VenueID, Venue: r.Venue, Zone: zone.Of(r.TimeZone), Slug: r.Slug, Name: r.Name, StartsAt: r.StartsAt,
		OnsaleAt: r.OnsaleAt, Published: r.Published, UpdatedAt: r.UpdatedAt, Seats: int(r.Seats),
		Queue: Queue{Enabled: r.QueueEnabled, Slots: int(r.QueueSlots), Rate: r.QueueRate,
			TokenTTL: time.Duration(r.QueueTokenTtlSeconds) * time.Second, VerifiedOnly: r.VerifiedOnly,
			Idle: time.Duration(r.QueueIdleSeconds) * time.Second}}
	if r.SalesCloseAt != nil {
		e.SalesCloseAt = *r.SalesCloseAt
	}
	if r.HoldMinutes != nil {
		e.HoldMinutes = int(*r.HoldMinutes)
	}
	return e
}

// EventSummary is an event in the staff's list.
type EventSummary struct {
	ID           int64
	Slug         string
	Name         string
	Venue        string
	Zone         *time.Location
	StartsAt     time.Time
	OnsaleAt     time.Time
	SalesCloseAt time.Time
	QueueEnabled bool
	Published    bool
}

// Events lists every event, published or not, soonest first.
func (s *Service) Events(ctx context.Context) ([]EventSummary, error) {
	rows, err := db.New(s.pool).EventAdminList(ctx)
	if err != nil {
		return nil, dberr.Translate(err)
	}
	out := make([]EventSummary, len(rows))
	for i, r := range rows {
		out[i] = EventSummary{ID: r.ID, Slug: r.Slug, Name: r.Name, Venue: r.Venue, Zone: zone.Of(r.TimeZone), StartsAt: r.StartsAt,
			OnsaleAt: r.OnsaleAt, SalesCloseAt: r.SalesCloseAt, QueueEnabled: r.QueueEnabled, Published: r.Published}
	}
	return out, nil
}

// HouseZone is the zone of the staff's pages that span events (the audit log, the
// staff list): the venues' zone when they all share one, else UTC.
func (s *Service) HouseZone(ctx context.Context) (*time.Location, error) {
	names, err := db.New(s.pool).VenueTimeZones(ctx)
	if err != nil {
		return nil, dberr.Translate(err)
	}
	if len(names) != 1 {
		return time.UTC, nil
	}
	return zone.Of(names[0]), nil
}
