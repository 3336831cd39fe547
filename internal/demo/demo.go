// Package demo creates venues and events with seats: the demo event that `make run`
// shows, and the big events that tests and benchmarks sell.
//
// It makes them through internal/catalog, as staff would (the generated queries only
// to move an onsale's time), and imports nothing of the sale (booking) or of HTTP.
package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/catalog"
	"boxoffice/internal/db"
)

// RowPrice prices the rows of a section from FromRow (0-based) on, until the next one.
type RowPrice struct {
	FromRow    int
	Tier       string
	PriceCents int
}

// Section is a block of rows with the same number of seats each.
type Section struct {
	Name        string
	Rows        int
	SeatsPerRow int
	Prices      []RowPrice // by FromRow, ascending; the first must start at row 0
}

// GATier is a general-admission tier.
type GATier struct {
	Name       string
	PriceCents int
	Capacity   int
	Stripes    int
}

// EventSpec describes an event to create.
type EventSpec struct {
	Slug     string
	Name     string
	Venue    string
	City     string
	TimeZone string // the venue's IANA zone; "" is UTC
	StartsAt time.Time
	OnsaleAt time.Time
	// SalesCloseAt ends the sale; zero: at StartsAt.
	SalesCloseAt time.Time
	// Queue turns the event's waiting room on; nil leaves it off.
	Queue    *Queue
	Sections []Section
	GA       []GATier
}

// Queue is an event's waiting room, on.
type Queue struct {
	Slots    int           // concurrent shoppers
	Rate     float64       // admissions per second
	TokenTTL time.Duration // how long an admission lasts; whole seconds
	Idle     time.Duration // how long it lasts with nothing held; whole seconds, 0: 3 minutes
}

// Seats counts the seats the spec creates.
func (e EventSpec) Seats() int {
	n := 0
	for _, s := range e.Sections {
		n += s.Rows * s.SeatsPerRow
	}
	return n
}

// DemoSpec is the demo event: three sections, about 2,000 seats, four price tiers and
// a standing tier.
func DemoSpec(now time.Time) EventSpec {
	return EventSpec{
		Slug: "demo-night", Name: "Demo Night: The Boxoffice Orchestra", Venue: "Boxoffice Hall", City: "Berlin", TimeZone: "Europe/Berlin",
		StartsAt: now.Add(30 * 24 * time.Hour).Truncate(time.Hour), OnsaleAt: now.Add(-time.Hour).Truncate(time.Hour),
		Sections: []Section{
			{Name: "Stalls", Rows: 20, SeatsPerRow: 40, Prices: []RowPrice{{0, "Premium", 9500}, {8, "Standard", 6500}}},
			{Name: "Circle", Rows: 15, SeatsPerRow: 36, Prices: []RowPrice{{0, "Standard", 6500}, {7, "Value", 3900}}},
			{Name: "Balcony", Rows: 16, SeatsPerRow: 40, Prices: []RowPrice{{0, "Value", 3900}, {6, "Restricted view", 2500}}},
		},
		GA: []GATier{{Name: "Standing", PriceCents: 4500, Capacity: 400, Stripes: 8}},
	}
}

// OnsaleSlug names the event OnsaleSpec describes.
const OnsaleSlug = "onsale-night"

// OnsaleSpec is the demo event of the waiting room: its onsale five minutes from now,
// the room on with 50 shoppers at a time admitted at 2 a second, so that a newcomer
// sees the countdown, the queue and the admission. About 700 seats and a standing
// tier.
func OnsaleSpec(now time.Time) EventSpec {
	return EventSpec{
		Slug: OnsaleSlug, Name: "Onsale Night: The Waiting Room Quartet", Venue: "Queue Street Theatre", City: "Berlin", TimeZone: "Europe/Berlin",
		StartsAt: now.Add(14 * 24 * time.Hour).Truncate(time.Hour), OnsaleAt: OnsaleTime(now),
		Queue: &Queue{Slots: 50, Rate: 2, TokenTTL: 15 * time.Minute},
		Sections: []Section{
			{Name: "Stalls", Rows: 12, SeatsPerRow: 30, Prices: []RowPrice{{0, "Premium", 8900}, {5, "Standard", 5900}}},
			{Name: "Circle", Rows: 10, SeatsPerRow: 32, Prices: []RowPrice{{0, "Standard", 5900}, {5, "Value", 2900}}},
		},
		GA: []GATier{{Name: "Standing", PriceCents: 3500, Capacity: 150, Stripes: 4}},
	}
}

// OnsaleTime is when OnsaleSpec's event goes on sale if it is seeded at now: five
// minutes on, on the whole second.
func OnsaleTime(now time.Time) time.Time { return now.Add(5 * time.Minute).Truncate(time.Second) }

// BigSpec is an event of about seats seats in sections of 50 rows of 50, priced
// dearest at the front, for load tests and benchmarks.
func BigSpec(slug string, seats int, now time.Time) EventSpec {
	spec := EventSpec{
		Slug: slug, Name: "Big onsale " + slug, Venue: "Stadium", City: "Berlin",
		StartsAt: now.Add(60 * 24 * time.Hour).Truncate(time.Hour), OnsaleAt: now.Add(-time.Hour).Truncate(time.Hour),
		GA: []GATier{{Name: "Field", PriceCents: 5000, Capacity: seats / 5, Stripes: 16}},
	}
	for i := 0; seats > 0; i++ {
		rows := min(50, (seats+49)/50)
		spec.Sections = append(spec.Sections, Section{
			Name: fmt.Sprintf("S%02d", i+1), Rows: rows, SeatsPerRow: 50,
			Prices: []RowPrice{{0, "A", 12000}, {10, "B", 9000}, {25, "C", 6000}, {40, "D", 4000}},
		})
		seats -= rows * 50
	}
	return spec
}

// StadiumSpec is BigSpec's stadium of about seats seats (and its standing field) with
// the waiting room on and the onsale at onsaleAt: the event an onsale simulation
// (`make onsale`, cmd/onsale) sells.
func StadiumSpec(slug string, seats int, onsaleAt time.Time, q Queue) EventSpec {
	spec := BigSpec(slug, seats, onsaleAt)
	spec.Name = "Onsale " + slug
	spec.OnsaleAt = onsaleAt
	spec.Queue = &q
	return spec
}

// Ensure creates the event unless one with its slug exists, and returns its id.
func Ensure(ctx context.Context, pool *pgxpool.Pool, spec EventSpec) (id int64, created bool, err error) {
	q := db.New(pool)
	id, err = q.EventBySlug(ctx, spec.Slug)
	if err == nil {
		return id, false, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, err
	}
	id, err = Create(ctx, pool, spec)
	return id, err == nil, err
}

// Reschedule moves an existing event's onsale to onsaleAt, but only if its onsale has
// passed and nobody has anything of it (no order, no live hold): what the seed does
// for OnsaleSpec's event at every start, so that its countdown and queue can be seen
// again without taking anything from anyone. It returns the event's onsale after the
// call and whether it moved.
func Reschedule(ctx context.Context, pool *pgxpool.Pool, eventID int64, onsaleAt time.Time) (time.Time, bool, error) {
	q := db.New(pool)
	at, err := q.EventOnsaleReschedule(ctx, db.EventOnsaleRescheduleParams{ID: eventID, OnsaleAt: onsaleAt})
	if err == nil {
		return at, true, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, err
	}
	ev, err := q.EventGet(ctx, eventID)
	if err != nil {
		return time.Time{}, false, err
	}
	return ev.OnsaleAt, false, nil
}

// Create creates the event with its venue, price tiers, seats and GA stripes in one
// transaction, through the catalog: the venue gets the spec's layout (curved rows,
// the last row's end seats wheelchair spaces) and the event its copy.
func Create(ctx context.Context, pool *pgxpool.Pool, spec EventSpec) (int64, error) {
	v := catalog.VenueInput{Name: spec.Venue, City: spec.City, TimeZone: spec.TimeZone}
	for _, sec := range spec.Sections {
		cs := catalog.Section{Name: sec.Name, Curved: true}
		for r := range sec.Rows {
			cs.Rows = append(cs.Rows, catalog.RowLabel(r))
			cs.Seats = append(cs.Seats, sec.SeatsPerRow)
		}
		for _, p := range sec.Prices {
			if p.FromRow >= sec.Rows {
				continue // BigSpec's short last section: a price for rows it does not have
			}
			cs.Prices = append(cs.Prices, catalog.RowPrice{FromRow: p.FromRow, Tier: p.Tier, PriceCents: p.PriceCents})
		}
		last := catalog.RowLabel(sec.Rows - 1)
		cs.Accessible = []catalog.SeatRef{{Row: last, Number: 1}}
		if sec.SeatsPerRow > 1 {
			cs.Accessible = append(cs.Accessible, catalog.SeatRef{Row: last, Number: sec.SeatsPerRow})
		}
		v.Layout.Sections = append(v.Layout.Sections, cs)
	}
	for _, ga := range spec.GA {
		v.Layout.GA = append(v.Layout.GA, catalog.GAArea{Name: ga.Name, PriceCents: ga.PriceCents, Capacity: ga.Capacity, Stripes: ga.Stripes})
	}
	e := catalog.EventInput{
		Slug: spec.Slug, Name: spec.Name, StartsAt: spec.StartsAt, OnsaleAt: spec.OnsaleAt,
		SalesCloseAt: spec.SalesCloseAt, Published: true,
	}
	if qs := spec.Queue; qs != nil {
		e.Queue = catalog.Queue{Enabled: true, Slots: qs.Slots, Rate: qs.Rate, TokenTTL: qs.TokenTTL, Idle: qs.Idle}
	}
	return catalog.New(pool).CreateVenueEvent(ctx, catalog.Actor{}, v, e)
}
