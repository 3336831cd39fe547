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

// Events lists the events, soonest first.
func (s *Service) Events(ctx context.Context) ([]Event, error) {
	rows, err := s.q.EventList(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = eventOf(r)
	}
	return out, nil
}

// Event returns one event.
func (s *Service) Event(ctx context.Context, id int64) (Event, error) {
	r, err := s.q.EventGet(ctx, id)
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
func (s *Service) QueuedEvents(ctx context.Context) ([]Event, error) {
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

// loadSeatMap reads the event's whole map: about 25 ms of database time for 50,000
// seats, which is why only the cache (mapcache.go) calls it.
func (s *Service) loadSeatMap(ctx context.Context, eventID int64) (SeatMap, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := s.Event(ctx, eventID); err != nil {
		return SeatMap{}, err
	}
	m := SeatMap{EventID: eventID, At: time.Now()}
	rows, err := s.q.SeatMap(ctx, eventID)
	if err != nil {
		return SeatMap{}, translate(err)
	}
	m.Seats = make([]MapSeat, len(rows))
	for i, r := range rows {
		m.Seats[i] = mapSeat(r)
	}
	if m.GATiers, err = s.gaTiers(ctx, eventID); err != nil {
		return SeatMap{}, err
	}
	return m, nil
}

// mapSeat maps a row of the map queries to a MapSeat.
func mapSeat(r db.SeatMapRow) MapSeat {
	return MapSeat{
		ID: r.ID, Section: r.Section, Row: r.RowLabel, Number: int(r.Number), PriceCents: int(r.PriceCents), Rank: int(r.Rank),
		X: int(r.X), Y: int(r.Y), Accessible: r.Accessible, Status: r.Status,
	}
}

// gaTiers reads the event's GA tiers with the places they have left. Never nil, so that
// a patch can tell "no tiers" from "not read".
func (s *Service) gaTiers(ctx context.Context, eventID int64) ([]GATier, error) {
	tiers, err := s.q.GATiers(ctx, eventID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]GATier, len(tiers))
	for i, t := range tiers {
		out[i] = GATier{ID: t.ID, Name: t.Name, PriceCents: int(t.PriceCents), Capacity: int(t.Capacity), Remaining: int(t.Remaining)}
	}
	return out, nil
}
