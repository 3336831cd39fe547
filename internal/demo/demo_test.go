package demo

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"boxoffice/internal/catalog"
	"boxoffice/internal/dbtest"
)

// TestEnsureTwice: loading the demo again (`make run` a second time) keeps the event
// it made and adds nothing.
func TestEnsureTwice(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	spec := DemoSpec(time.Now())
	id, created, err := Ensure(t.Context(), pool, spec)
	if err != nil || !created {
		t.Fatalf("first Ensure: got created=%v, err %v; want a new event", created, err)
	}
	again, created, err := Ensure(t.Context(), pool, spec)
	if err != nil || created || again != id {
		t.Fatalf("second Ensure: got id %d, created=%v, err %v; want id %d unchanged", again, created, err, id)
	}
	var events, seats, stripes int
	if err := pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM seats),
		(SELECT coalesce(sum(remaining), 0) FROM ga_stripes)`).Scan(&events, &seats, &stripes); err != nil {
		t.Fatal(err)
	}
	if events != 1 || seats != spec.Seats() || stripes != 400 {
		t.Errorf("got %d events, %d seats, %d GA places; want 1, %d, 400", events, seats, stripes, spec.Seats())
	}
}

// TestOnsaleReschedule: the waiting room's demo event is created with its room on and
// its onsale ahead; at a later seed its passed onsale moves ahead again only while
// nobody holds or bought anything of it.
func TestOnsaleReschedule(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	now := time.Now()
	spec := OnsaleSpec(now)
	id, created, err := Ensure(ctx, pool, spec)
	if err != nil || !created {
		t.Fatalf("Ensure: got created=%v, err %v; want a new event", created, err)
	}
	var on bool
	var slots, ttl int
	var rate float64
	var onsale time.Time
	if err := pool.QueryRow(ctx, `SELECT queue_enabled, queue_slots, queue_rate, queue_token_ttl_seconds, onsale_at
		FROM events WHERE id = $1`, id).Scan(&on, &slots, &rate, &ttl, &onsale); err != nil {
		t.Fatal(err)
	}
	if !on || slots != 50 || rate != 2 || ttl != 900 || !onsale.Equal(spec.OnsaleAt) {
		t.Fatalf("got room %v, %d slots, %g/s, token %ds, onsale %v; want on, 50, 2/s, 900s, %v", on, slots, rate, ttl, onsale, spec.OnsaleAt)
	}

	// Before its onsale, a second seed leaves it.
	if at, moved, err := Reschedule(ctx, pool, id, OnsaleTime(now.Add(time.Minute))); err != nil || moved || !at.Equal(spec.OnsaleAt) {
		t.Fatalf("before the onsale: got %v, moved=%v, err %v; want %v unmoved", at, moved, err, spec.OnsaleAt)
	}
	// Long after it, with nobody holding anything, it moves.
	if _, err := pool.Exec(ctx, `UPDATE events SET onsale_at = now() - interval '3 days' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	later := OnsaleTime(now.Add(time.Hour))
	if at, moved, err := Reschedule(ctx, pool, id, later); err != nil || !moved || !at.Equal(later) {
		t.Fatalf("passed, untouched: got %v, moved=%v, err %v; want moved to %v", at, moved, err, later)
	}
	// With a live hold, it stays.
	if _, err := pool.Exec(ctx, `UPDATE events SET onsale_at = now() - interval '3 days' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO holds (event_id, buyer, seat_count, expires_at) VALUES ($1, 'ada', 1, now() + interval '5 minutes')`, id); err != nil {
		t.Fatal(err)
	}
	if _, moved, err := Reschedule(ctx, pool, id, later); err != nil || moved {
		t.Fatalf("passed, held: got moved=%v, err %v; want it left", moved, err)
	}
}

// TestSeatsAsBefore: the demo's events, now made through the catalog, have exactly the
// seats the loader made itself before (its own algorithm, kept here as the reference):
// same ids in the same order, prices, ranks, positions and wheelchair spaces.
func TestSeatsAsBefore(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	for _, spec := range []EventSpec{DemoSpec(time.Now()), OnsaleSpec(time.Now()), BigSpec("big", 12000, time.Now())} {
		id, err := Create(t.Context(), pool, spec)
		if err != nil {
			t.Fatalf("%s: %v", spec.Slug, err)
		}
		rows, err := pool.Query(t.Context(), `SELECT s.section, s.row_label, s.number, t.name, s.price_cents, s.rank, s.x, s.y, s.accessible
			FROM seats s JOIN price_tiers t ON t.event_id = s.event_id AND t.id = s.price_tier_id
			WHERE s.event_id = $1 ORDER BY s.id`, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []refSeat
		for rows.Next() {
			var s refSeat
			if err := rows.Scan(&s.section, &s.row, &s.number, &s.tier, &s.price, &s.rank, &s.x, &s.y, &s.accessible); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := referenceSeats(spec)
		if len(got) != len(want) {
			t.Fatalf("%s: got %d seats, want %d", spec.Slug, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: seat %d: got %+v, want %+v", spec.Slug, i, got[i], want[i])
			}
		}
		var tiers []string
		if err := pool.QueryRow(t.Context(), `SELECT array_agg(name || '/' || price_cents ORDER BY id) FROM price_tiers WHERE event_id = $1`, id).Scan(&tiers); err != nil {
			t.Fatal(err)
		}
		if wantTiers := referenceTiers(spec); !slices.Equal(tiers, wantTiers) {
			t.Errorf("%s: got price tiers %v, want %v", spec.Slug, tiers, wantTiers)
		}
	}
}

type refSeat struct {
	section, row, tier        string
	number, price, rank, x, y int
	accessible                bool
}

// referenceTiers and referenceSeats are the loader's own algorithm from before the
// catalog existed.
func referenceTiers(spec EventSpec) []string {
	var out []string
	seen := map[string]bool{}
	for _, sec := range spec.Sections {
		for r := 0; r < sec.Rows; r++ {
			price := sec.Prices[0]
			for _, p := range sec.Prices {
				if r >= p.FromRow {
					price = p
				}
			}
			key := fmt.Sprintf("%s/%d", price.Tier, price.PriceCents)
			if !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
	}
	return out
}

func referenceSeats(spec EventSpec) []refSeat {
	const seatPitchX, rowPitch, rowCurve, stageRoom = 12, 14, 6, 40
	type point struct{ x, y int }
	sections := spec.Sections
	origins := make([]point, len(sections))
	maxW, maxH := 0, 0
	for _, s := range sections {
		maxW = max(maxW, s.SeatsPerRow*seatPitchX)
		maxH = max(maxH, s.Rows*rowPitch)
	}
	if len(sections) <= 3 {
		y := stageRoom
		for i, s := range sections {
			origins[i] = point{(maxW - s.SeatsPerRow*seatPitchX) / 2, y}
			y += (s.Rows + 2) * rowPitch
		}
	} else {
		cols := 1
		for cols*cols < len(sections) {
			cols++
		}
		cellW, cellH := maxW+4*seatPitchX, maxH+4*rowPitch
		for i, s := range sections {
			col, row := i%cols, i/cols
			origins[i] = point{col*cellW + (maxW-s.SeatsPerRow*seatPitchX)/2, stageRoom + row*cellH}
		}
	}
	abs := func(x int) int { return max(x, -x) }
	var out []refSeat
	for si, sec := range sections {
		for r := 0; r < sec.Rows; r++ {
			price := sec.Prices[0]
			for _, p := range sec.Prices {
				if r >= p.FromRow {
					price = p
				}
			}
			for n := 1; n <= sec.SeatsPerRow; n++ {
				c := 2*n - sec.SeatsPerRow - 1
				span := max(1, (sec.SeatsPerRow-1)*(sec.SeatsPerRow-1))
				dip := rowCurve * c * c / span
				out = append(out, refSeat{
					section: sec.Name, row: catalog.RowLabel(r), number: n, tier: price.Tier, price: price.PriceCents,
					rank: r*1000 + abs(c), x: origins[si].x + n*seatPitchX, y: origins[si].y + r*rowPitch + rowCurve - dip,
					accessible: r == sec.Rows-1 && (n == 1 || n == sec.SeatsPerRow),
				})
			}
		}
	}
	return out
}
