package booking

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// An event's seat map read whole from the database, for the cache (mapcache.go) that
// every map the pages, best available and the waiting room's stock see comes from.

// loadSeatMap reads the event's whole map through q: about 25 ms of database time for
// 50,000 seats, which is why only the cache (mapcache.go) calls it.
func (s *store) loadSeatMap(ctx context.Context, q *db.Queries, eventID int64) (SeatMap, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := q.EventGet(ctx, eventID); errors.Is(err, pgx.ErrNoRows) {
		return SeatMap{}, ErrEventNotFound
	} else if err != nil {
		return SeatMap{}, translate(err)
	}
	m := SeatMap{EventID: eventID, At: time.Now()}
	rows, err := q.SeatMap(ctx, eventID)
	if err != nil {
		return SeatMap{}, translate(err)
	}
	m.Seats = make([]MapSeat, len(rows))
	for i, r := range rows {
		m.Seats[i] = mapSeat(r)
	}
	if m.GATiers, err = gaTiersFrom(ctx, q, eventID); err != nil {
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
func (s *store) gaTiers(ctx context.Context, eventID int64) ([]GATier, error) {
	return gaTiersFrom(ctx, s.q, eventID)
}

// gaTiersFrom is gaTiers through q.
func gaTiersFrom(ctx context.Context, q *db.Queries, eventID int64) ([]GATier, error) {
	tiers, err := q.GATiers(ctx, eventID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]GATier, len(tiers))
	for i, t := range tiers {
		out[i] = GATier{ID: t.ID, Name: t.Name, PriceCents: int(t.PriceCents), Capacity: int(t.Capacity), Remaining: int(t.Remaining)}
	}
	return out, nil
}
