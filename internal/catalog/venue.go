package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
	"boxoffice/internal/staff"
	"boxoffice/internal/zone"
)

// VenueInput is a venue with its layout.
type VenueInput struct {
	Name string
	City string
	// TimeZone is the venue's IANA time zone ("Europe/Berlin"), in which its events'
	// times are shown and typed; "" is UTC.
	TimeZone string
	Layout   Layout
}

// timeZone is the venue's zone as stored: its name, UTC for none.
func (v VenueInput) timeZone() string {
	if tz := strings.TrimSpace(v.TimeZone); tz != "" {
		return tz
	}
	return "UTC"
}

func (v VenueInput) validate() ([]Seat, error) {
	v.Name = strings.TrimSpace(v.Name)
	if err := checkName("name", "venue", v.Name); err != nil {
		return nil, err
	}
	if len([]rune(v.City)) > maxNameLen {
		return nil, invalid("city", "the city is longer than %d characters", maxNameLen)
	}
	if _, err := zone.Load(v.timeZone()); err != nil {
		return nil, invalid("timeZone", "%q is not a time zone: choose one such as Europe/Berlin from the list", v.timeZone())
	}
	return v.Layout.Seats()
}

// venueAudit is what the audit log keeps of a venue: its names and its size, not every
// seat.
type venueAudit struct {
	Name     string   `json:"name"`
	City     string   `json:"city"`
	TimeZone string   `json:"timeZone"`
	Sections []string `json:"sections"`
	Seats    int      `json:"seats"`
	Standing int      `json:"standing"`
}

func auditOfVenue(v VenueInput) venueAudit {
	a := venueAudit{Name: v.Name, City: v.City, TimeZone: v.timeZone(), Seats: v.Layout.SeatCount(), Standing: v.Layout.Capacity(), Sections: []string{}}
	for _, s := range v.Layout.Sections {
		a.Sections = append(a.Sections, s.Name)
	}
	return a
}

// CreateVenue creates a venue with its layout and returns its id.
func (s *Service) CreateVenue(ctx context.Context, by Actor, v VenueInput) (int64, error) {
	seats, err := v.validate()
	if err != nil {
		return 0, err
	}
	var id int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		id, err = createVenue(ctx, tx, by, v, seats)
		return err
	})
	return id, dberr.Translate(err)
}

// UpdateVenue replaces a venue's name, city and layout. Its existing events keep the
// seats they copied.
func (s *Service) UpdateVenue(ctx context.Context, by Actor, id int64, v VenueInput) error {
	seats, err := v.validate()
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		// Locks the venue row: two editors of one venue take turns.
		old, err := q.VenueGetForUpdate(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrVenueNotFound
		} else if err != nil {
			return err
		}
		before := VenueInput{Name: old.Name, City: old.City, TimeZone: old.TimeZone}
		_ = json.Unmarshal(old.Layout, &before.Layout)
		if err := q.VenueUpdate(ctx, db.VenueUpdateParams{ID: id, Name: strings.TrimSpace(v.Name), City: strings.TrimSpace(v.City),
			TimeZone: v.timeZone()}); err != nil {
			return err
		}
		for _, clear := range []func(context.Context, int64) error{q.VenueLayoutClear, q.VenueGAClear, q.VenueTiersClear} {
			if err := clear(ctx, id); err != nil {
				return err
			}
		}
		if err := writeLayout(ctx, q, id, v.Layout, seats); err != nil {
			return err
		}
		return staff.Audit(ctx, tx, by.StaffID, "venue.update", venueSubject(id), auditOfVenue(before), auditOfVenue(v), by.Address)
	})
	return dberr.Translate(err)
}

// createVenue inserts the venue and its generated layout in tx, with its audit entry.
func createVenue(ctx context.Context, tx pgx.Tx, by Actor, v VenueInput, seats []Seat) (int64, error) {
	q := db.New(tx)
	id, err := q.VenueCreate(ctx, db.VenueCreateParams{Name: strings.TrimSpace(v.Name), City: strings.TrimSpace(v.City), TimeZone: v.timeZone()})
	if err != nil {
		return 0, err
	}
	if err := writeLayout(ctx, q, id, v.Layout, seats); err != nil {
		return 0, err
	}
	return id, staff.Audit(ctx, tx, by.StaffID, "venue.create", venueSubject(id), nil, auditOfVenue(v), by.Address)
}

// writeLayout stores the layout as entered and what it generated: price tiers in the
// order the seats first use them, the seats, the standing areas.
func writeLayout(ctx context.Context, q *db.Queries, venueID int64, l Layout, seats []Seat) error {
	raw, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := q.VenueLayoutSet(ctx, db.VenueLayoutSetParams{ID: venueID, Layout: raw}); err != nil {
		return err
	}
	type tierKey struct {
		name  string
		cents int
	}
	tiers := map[tierKey]int64{}
	rows := make([]db.VenueSeatsInsertParams, len(seats))
	for i, st := range seats {
		k := tierKey{st.Tier, st.PriceCents}
		tierID, ok := tiers[k]
		if !ok {
			if tierID, err = q.VenuePriceTierCreate(ctx, db.VenuePriceTierCreateParams{
				VenueID: venueID, Name: st.Tier, PriceCents: int32(st.PriceCents)}); err != nil {
				return err
			}
			tiers[k] = tierID
		}
		rows[i] = db.VenueSeatsInsertParams{
			VenueID: venueID, Section: st.Section, RowLabel: st.Row, Number: int32(st.Number), TierID: tierID,
			Rank: int32(st.Rank), X: int32(st.X), Y: int32(st.Y), Accessible: st.Accessible, Companion: st.Companion,
		}
	}
	if _, err := q.VenueSeatsInsert(ctx, rows); err != nil {
		return err
	}
	for _, g := range l.GA {
		stripes := g.Stripes
		if stripes == 0 {
			stripes = stripesFor(g.Capacity)
		}
		if err := q.VenueGAAreaCreate(ctx, db.VenueGAAreaCreateParams{
			VenueID: venueID, Name: g.Name, PriceCents: int32(g.PriceCents), Capacity: int32(g.Capacity), Stripes: int32(stripes),
		}); err != nil {
			return err
		}
	}
	return nil
}
