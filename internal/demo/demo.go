// Package demo creates venues and events with seats: the demo event that `make run`
// shows, and the big events that tests and benchmarks sell.
package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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
		Slug: "demo-night", Name: "Demo Night: The Boxoffice Orchestra", Venue: "Boxoffice Hall", City: "Berlin",
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
		Slug: OnsaleSlug, Name: "Onsale Night: The Waiting Room Quartet", Venue: "Queue Street Theatre", City: "Berlin",
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
// transaction.
func Create(ctx context.Context, pool *pgxpool.Pool, spec EventSpec) (int64, error) {
	var eventID int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		venue, err := q.VenueCreate(ctx, db.VenueCreateParams{Name: spec.Venue, City: spec.City})
		if err != nil {
			return err
		}
		p := db.EventCreateParams{
			VenueID: venue, Slug: spec.Slug, Name: spec.Name, StartsAt: spec.StartsAt, OnsaleAt: spec.OnsaleAt,
		}
		if !spec.SalesCloseAt.IsZero() {
			p.SalesCloseAt = &spec.SalesCloseAt
		}
		if eventID, err = q.EventCreate(ctx, p); err != nil {
			return err
		}
		if qs := spec.Queue; qs != nil {
			if err := q.EventQueueSet(ctx, db.EventQueueSetParams{
				ID: eventID, QueueEnabled: true, QueueSlots: int32(qs.Slots), QueueRate: qs.Rate,
				QueueTokenTtlSeconds: int32(qs.TokenTTL / time.Second),
			}); err != nil {
				return err
			}
		}
		tiers := map[string]int64{}
		var seats []db.SeatsInsertParams
		origins := layout(spec.Sections)
		for si, sec := range spec.Sections {
			if len(sec.Prices) == 0 || sec.Prices[0].FromRow != 0 {
				return fmt.Errorf("section %s: prices must start at row 0", sec.Name)
			}
			for r := 0; r < sec.Rows; r++ {
				price := sec.Prices[0]
				for _, p := range sec.Prices {
					if r >= p.FromRow {
						price = p
					}
				}
				key := fmt.Sprintf("%s/%d", price.Tier, price.PriceCents)
				tierID, ok := tiers[key]
				if !ok {
					tierID, err = q.PriceTierCreate(ctx, db.PriceTierCreateParams{EventID: eventID, Name: price.Tier, PriceCents: int32(price.PriceCents)})
					if err != nil {
						return err
					}
					tiers[key] = tierID
				}
				for n := 1; n <= sec.SeatsPerRow; n++ {
					centre := 2*n - sec.SeatsPerRow - 1 // twice the distance from the row's middle
					x, y := seatPosition(origins[si], sec, r, n)
					seats = append(seats, db.SeatsInsertParams{
						EventID: eventID, Section: sec.Name, RowLabel: rowLabel(r), Number: int32(n),
						PriceTierID: tierID, PriceCents: int32(price.PriceCents),
						Rank: int32(r*1000 + abs(centre)),
						X:    int32(x), Y: int32(y),
						Accessible: r == sec.Rows-1 && (n == 1 || n == sec.SeatsPerRow),
					})
				}
			}
		}
		if _, err := q.SeatsInsert(ctx, seats); err != nil {
			return err
		}
		for _, ga := range spec.GA {
			tierID, err := q.GATierCreate(ctx, db.GATierCreateParams{
				EventID: eventID, Name: ga.Name, PriceCents: int32(ga.PriceCents), Capacity: int32(ga.Capacity), Stripes: int32(ga.Stripes),
			})
			if err != nil {
				return err
			}
			stripes := make([]int32, ga.Stripes)
			remaining := make([]int32, ga.Stripes)
			for i := range stripes {
				stripes[i] = int32(i)
				remaining[i] = int32(ga.Capacity / ga.Stripes)
				if i < ga.Capacity%ga.Stripes {
					remaining[i]++
				}
			}
			if err := q.GAStripesInit(ctx, db.GAStripesInitParams{EventID: eventID, TierID: tierID, Stripes: stripes, Remaining: remaining}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// Thousands of seats arrived at once: until the planner's statistics know them, it
	// plans each claim as if the event had one seat and reads the whole event instead
	// (measured: best available at 6 holds/s instead of 150). Autovacuum would catch up
	// within a minute; an onsale may start sooner.
	if _, err := pool.Exec(ctx, "ANALYZE seats"); err != nil {
		return 0, err
	}
	return eventID, nil
}

// Seat pitch in map units: seats sit seatPitchX apart in a row and rows rowPitch apart;
// the seat map draws a seat about ten units wide.
const (
	seatPitchX = 12
	rowPitch   = 14
	rowCurve   = 6  // how much higher a row's ends sit than its middle
	stageRoom  = 40 // above the first row, where the map draws the stage
)

type point struct{ x, y int }

// layout places each section's top-left corner. Up to three sections stack under the
// stage, each centred, as stalls, circle and balcony are drawn; more are blocks of a
// stadium, set out in a grid so that the overview of a big venue is a picture rather
// than one tall column.
func layout(sections []Section) []point {
	out := make([]point, len(sections))
	maxW, maxH := 0, 0
	for _, s := range sections {
		maxW = max(maxW, s.SeatsPerRow*seatPitchX)
		maxH = max(maxH, s.Rows*rowPitch)
	}
	if len(sections) <= 3 {
		y := stageRoom
		for i, s := range sections {
			out[i] = point{(maxW - s.SeatsPerRow*seatPitchX) / 2, y}
			y += (s.Rows + 2) * rowPitch
		}
		return out
	}
	cols := 1
	for cols*cols < len(sections) {
		cols++
	}
	cellW, cellH := maxW+4*seatPitchX, maxH+4*rowPitch
	for i, s := range sections {
		col, row := i%cols, i/cols
		out[i] = point{col*cellW + (maxW-s.SeatsPerRow*seatPitchX)/2, stageRoom + row*cellH}
	}
	return out
}

// seatPosition is the map position of seat n (1-based) of row r (0-based) of a section
// whose corner is at o. Rows curve around the stage: a row's ends sit rowCurve units
// higher than its middle, less than a row's pitch, so rows never cross.
func seatPosition(o point, sec Section, r, n int) (x, y int) {
	c := 2*n - sec.SeatsPerRow - 1 // twice the distance from the row's middle
	span := max(1, (sec.SeatsPerRow-1)*(sec.SeatsPerRow-1))
	dip := rowCurve * c * c / span
	return o.x + n*seatPitchX, o.y + r*rowPitch + rowCurve - dip
}

// rowLabel names rows A..Z, then AA, AB, ...
func rowLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return rowLabel(i/26-1) + string(rune('A'+i%26))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
