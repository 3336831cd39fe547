package booking

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// TestHoldOverlappingSeats: 200 buyers at once each ask for 2 to 6 of the same 30
// adjacent seats, listed in random order, so requests overlap heavily and lock in every
// order. Every request is all or nothing: a success has exactly its seats, a failure is
// *SeatsUnavailableError naming seats a success really holds (never ErrUnavailable,
// never a deadlock, not even one the service retried: the fixture fails the test on
// the warning a retry logs), and no hold owns part of a request. Releases between
// rounds put every seat back.
func TestHoldOverlappingSeats(t *testing.T) {
	t.Parallel()
	const buyers = 200
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	f := newFixture(t, smallSpec([]demo.Section{oneRow("Row", 30, 5000)}), DefaultConfig())
	ctx := t.Context()
	seats := f.rowSeats(t, "Row", "A")
	totalHeld := 0
	for round := range rounds {
		reqs := make([][]int64, buyers)
		for i := range reqs {
			perm := rng.Perm(len(seats))[:2+rng.IntN(5)]
			for _, k := range perm {
				reqs[i] = append(reqs[i], seats[k])
			}
		}
		holds := make([]*Hold, buyers)
		refused := make([][]int64, buyers)
		wasRefused := make([]bool, buyers)
		var errs errorCounter
		atOnce(buyers, func(i int) {
			buyer := buyerName(fmt.Sprintf("r%d", round), i)
			h, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: buyer, SeatIDs: reqs[i]})
			var taken *SeatsUnavailableError
			switch {
			case err == nil:
				holds[i] = &h
			case errors.As(err, &taken):
				refused[i], wasRefused[i] = taken.SeatIDs, true
			default:
				errs.add(fmt.Errorf("buyer %s: %w", buyer, err))
			}
		})
		errs.report(t, fmt.Sprintf("round %d", round))

		heldBy := map[int64]int{} // seat -> buyer whose hold has it
		successes := 0
		for i, h := range holds {
			if h == nil {
				continue
			}
			successes++
			want := slices.Sorted(slices.Values(reqs[i]))
			if got := sortedIDs(h.Seats); !slices.Equal(got, want) {
				t.Errorf("round %d buyer %d: got seats %v, want %v", round, i, got, want)
			}
			for _, s := range reqs[i] {
				if other, ok := heldBy[s]; ok {
					t.Errorf("round %d: seat %d held by buyers %d and %d", round, s, other, i)
				}
				heldBy[s] = i
			}
		}
		if successes == 0 {
			t.Errorf("round %d: got no successful hold, want at least one", round)
		}
		totalHeld += successes
		// A refusal must name seats of the request that a successful hold really has:
		// a hold that rolled back must never have cost anyone a seat.
		for i, ids := range refused {
			if !wasRefused[i] {
				continue
			}
			if len(ids) == 0 {
				t.Errorf("round %d buyer %d: refused without naming a seat", round, i)
			}
			for _, s := range ids {
				if !slices.Contains(reqs[i], s) {
					t.Errorf("round %d buyer %d: refused seat %d, which it did not ask for", round, i, s)
				} else if _, ok := heldBy[s]; !ok {
					t.Errorf("round %d buyer %d: refused seat %d, which no successful hold has", round, i, s)
				}
			}
		}

		// In SQL: one hold row per success, each owning every seat it asked for.
		if got := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1`, f.event); got != totalHeld {
			t.Errorf("round %d: got %d hold rows, want %d (one per success so far)", round, got, totalHeld)
		}
		for _, p := range partialHolds(t, f) {
			t.Errorf("round %d: %s", round, p)
		}
		if got := f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND held_by IS NOT NULL`, f.event); got != len(heldBy) {
			t.Errorf("round %d: got %d seats held, want %d", round, got, len(heldBy))
		}

		for i, h := range holds {
			if h != nil {
				if err := f.svc.Buyer.Release(ctx, h.ID, buyerName(fmt.Sprintf("r%d", round), i)); err != nil {
					t.Fatalf("round %d: release %s: %v", round, h.ID, err)
				}
			}
		}
		if got := f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND held_by IS NOT NULL`, f.event); got != 0 {
			t.Errorf("round %d: after releasing every hold got %d seats held, want 0", round, got)
		}
		if t.Failed() {
			return
		}
	}
}

// partialHolds describes every open hold that does not have all the seats it asked for.
func partialHolds(t *testing.T, f fixture) []string {
	t.Helper()
	rows, err := f.pool.Query(t.Context(), `
		SELECT h.id, h.seat_count,
		       (SELECT count(*) FROM seats s WHERE s.event_id = h.event_id AND s.held_by = h.id AND s.hold_expires_at > now())::int
		FROM holds h
		WHERE h.event_id = $1 AND h.released_at IS NULL AND h.sold_at IS NULL AND h.expires_at > now()
		ORDER BY h.id`, f.event)
	if err != nil {
		t.Fatalf("partial holds: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int64
		var asked, owned int32
		if err := rows.Scan(&id, &asked, &owned); err != nil {
			t.Fatal(err)
		}
		if owned != asked {
			out = append(out, fmt.Sprintf("hold %d owns %d seats, want %d (all it asked for)", id, owned, asked))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHoldOverlappingSeatsNegativeControl proves the partial-hold check can catch a
// race: a claim that checks all its seats are free and then takes them with a plain
// write, as separate statements, is all or nothing when buyers take turns, but at once
// a later buyer overwrites seats of an earlier one, whose hold is left with part of
// its request.
func TestHoldOverlappingSeatsNegativeControl(t *testing.T) {
	t.Parallel()
	const buyers = 200
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Row", 30, 5000)}), DefaultConfig())
	ctx := t.Context()
	seats := f.rowSeats(t, "Row", "A")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	reqs := make([][]int64, buyers)
	for i := range reqs {
		for _, k := range rng.Perm(len(seats))[:2+rng.IntN(5)] {
			reqs[i] = append(reqs[i], seats[k])
		}
	}
	var errs errorCounter
	atOnce(buyers, func(i int) {
		var free int
		err := f.pool.QueryRow(ctx, `
			SELECT count(*) FROM seats
			WHERE event_id = $1 AND id = ANY($2) AND held_by IS NULL AND sold_at IS NULL`, f.event, reqs[i]).Scan(&free)
		if err != nil || free < len(reqs[i]) {
			if err != nil {
				errs.add(err)
			}
			return
		}
		var hold int64
		err = f.pool.QueryRow(ctx, `
			INSERT INTO holds (event_id, buyer, seat_count, expires_at)
			VALUES ($1, $2, $3, now() + interval '10 minutes') RETURNING id`,
			f.event, buyerName("b", i), len(reqs[i])).Scan(&hold)
		for _, seat := range reqs[i] {
			if err != nil {
				break
			}
			_, err = f.pool.Exec(ctx, `
				UPDATE seats SET held_by = $3, hold_expires_at = now() + interval '10 minutes'
				WHERE event_id = $1 AND id = $2`, f.event, seat, hold)
		}
		if err != nil {
			errs.add(err)
		}
	})
	errs.report(t, "check-then-write claims")
	got := partialHolds(t, f)
	if len(got) == 0 {
		t.Errorf("check-then-write claims: got no partial hold, want some")
	}
	t.Logf("check-then-write claims left %d partial holds of %d", len(got),
		f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1`, f.event))
}
