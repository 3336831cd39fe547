package booking

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Events lists the events, soonest first.
func (s *Service) Events(ctx context.Context) ([]Event, error) {
	rows, err := s.q.EventList(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = Event{ID: r.ID, Slug: r.Slug, Name: r.Name, Venue: r.Venue, StartsAt: r.StartsAt, OnsaleAt: r.OnsaleAt}
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
	return Event{ID: r.ID, Slug: r.Slug, Name: r.Name, Venue: r.Venue, StartsAt: r.StartsAt, OnsaleAt: r.OnsaleAt}, nil
}

// SeatMap returns the event's seats and GA tiers, at most MapMaxAge stale. Concurrent
// callers share one database read: a whole map costs tens of milliseconds of database
// time on a big venue and must never be paid per viewer.
func (s *Service) SeatMap(ctx context.Context, eventID int64) (SeatMap, error) {
	s.mapMu.Lock()
	m, ok := s.mapCache[eventID]
	s.mapMu.Unlock()
	if ok && time.Since(m.At) < s.cfg.MapMaxAge {
		return m, nil
	}
	v, err, _ := s.maps.Do(strconv.FormatInt(eventID, 10), func() (any, error) {
		m, err := s.loadSeatMap(context.WithoutCancel(ctx), eventID)
		if err != nil {
			return SeatMap{}, err
		}
		s.mapMu.Lock()
		s.mapCache[eventID] = m
		s.mapMu.Unlock()
		return m, nil
	})
	if err != nil {
		return SeatMap{}, err
	}
	return v.(SeatMap), nil
}

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
		m.Seats[i] = MapSeat{
			ID: r.ID, Section: r.Section, Row: r.RowLabel, Number: int(r.Number), PriceCents: int(r.PriceCents),
			X: int(r.X), Y: int(r.Y), Accessible: r.Accessible, Status: r.Status,
		}
	}
	tiers, err := s.q.GATiers(ctx, eventID)
	if err != nil {
		return SeatMap{}, translate(err)
	}
	m.GATiers = make([]GATier, len(tiers))
	for i, t := range tiers {
		m.GATiers[i] = GATier{ID: t.ID, Name: t.Name, PriceCents: int(t.PriceCents), Capacity: int(t.Capacity), Remaining: int(t.Remaining)}
	}
	return m, nil
}
