package booking

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/zone"
)

// Events lists the events, soonest first, for the public pages: it may be a second
// stale (Services.SetReads).
func (s *Buyer) Events(ctx context.Context) ([]Event, error) { return s.eventsFrom(ctx, s.stale()) }

// Event returns one event.
func (s *Buyer) Event(ctx context.Context, id int64) (Event, error) { return s.event(ctx, id) }

// Events lists the events, soonest first, for the admin pages' choices of event.
func (s *Desk) Events(ctx context.Context) ([]Event, error) { return s.eventsFrom(ctx, s.q) }

// Event returns one event, for the admin pages.
func (s *Desk) Event(ctx context.Context, id int64) (Event, error) { return s.event(ctx, id) }

// eventsFrom is Events, for the buyer's pages and the desk's alike, read through q.
func (s *store) eventsFrom(ctx context.Context, q *db.Queries) ([]Event, error) {
	rows, err := q.EventList(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = eventOf(r)
	}
	return out, nil
}

// event is Event, for every part: the seat map, the desk's order and the emails' receipt
// name their event too.
func (s *store) event(ctx context.Context, id int64) (Event, error) {
	r, err := s.q.EventGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, ErrEventNotFound
	} else if err != nil {
		return Event{}, translate(err)
	}
	return eventOf(r), nil
}

// EventBySlug returns the event a public page's URL names; it may be a second stale
// (Services.SetReads).
func (s *Buyer) EventBySlug(ctx context.Context, slug string) (Event, error) {
	if slug == "" || len(slug) > 200 {
		return Event{}, ErrEventNotFound
	}
	r, err := s.stale().EventGetBySlug(ctx, slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, ErrEventNotFound
	} else if err != nil {
		return Event{}, translate(err)
	}
	return eventOf(r), nil
}

// queueLead is how long before its onsale an event with a waiting room becomes the
// admitter's work: arrivals join the pre-queue well before the onsale.
const queueLead = time.Hour

// QueuedEvents lists the events the waiting room's admitter works on: room on, and
// the sale open or opening within the hour, by the database clock. Soonest onsale
// first.
func (s *Buyer) QueuedEvents(ctx context.Context) ([]Event, error) {
	rows, err := s.q.EventsQueued(ctx, queueLead.Seconds())
	if err != nil {
		return nil, translate(err)
	}
	paused, err := s.q.EventsQueuePaused(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = eventOf(r)
		out[i].QueuePaused = slices.Contains(paused, r.ID)
	}
	return out, nil
}

// eventFields is the shape of every event row the queries return.
type eventFields = struct {
	ID                   int64
	Slug                 string
	Name                 string
	StartsAt             time.Time
	OnsaleAt             time.Time
	SalesCloseAt         time.Time
	QueueEnabled         bool
	QueueSlots           int32
	QueueRate            float64
	QueueTokenTtlSeconds int32
	QueueIdleSeconds     int32
	VerifiedOnly         bool
	Venue                string
	TimeZone             string
}

// eventOf maps any of the queries' event rows to an Event.
func eventOf[R ~eventFields](row R) Event {
	r := eventFields(row)
	return Event{
		ID: r.ID, Slug: r.Slug, Name: r.Name, Venue: r.Venue, Zone: zone.Of(r.TimeZone), StartsAt: r.StartsAt,
		OnsaleAt: r.OnsaleAt, SalesCloseAt: r.SalesCloseAt,
		QueueEnabled: r.QueueEnabled, QueueSlots: int(r.QueueSlots), QueueRate: r.QueueRate,
		QueueTokenTTL: time.Duration(r.QueueTokenTtlSeconds) * time.Second, VerifiedOnly: r.VerifiedOnly,
		QueueIdle: time.Duration(r.QueueIdleSeconds) * time.Second,
	}
}
