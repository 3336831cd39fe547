package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/demo"
)

// raceBuyers is how many buyers race for each seat.
const raceBuyers = 1000

// raceRounds is how many seats are raced for: every round is one more chance for a
// double sale to show. Fifty rounds of a thousand buyers through Buyer.Hold take most
// of a minute under -race on two cores; -short runs five.
func raceRounds() int {
	if testing.Short() {
		return 5
	}
	return 50
}

// controlRounds is how many rounds the negative control runs. It needs one round with
// two winners; in the runs so far about three rounds in four had several (often
// hundreds), and forty more rounds would cost the package half a minute.
func controlRounds() int {
	if testing.Short() {
		return 2
	}
	return 10
}

// claimFunc tries to claim one seat for a buyer. It answers true if the buyer got the
// seat, false with no error if someone else had it, and an error for anything else.
type claimFunc func(ctx context.Context, seatID int64, buyer string) (bool, error)

// raceOneSeat runs raceRounds rounds of raceSeats.
func raceOneSeat(t *testing.T, pool *pgxpool.Pool, eventID int64, claim claimFunc) []int {
	t.Helper()
	return raceSeats(t, pool, eventID, raceRounds(), claim)
}

// raceSeats runs rounds rounds. Each round picks a seat nobody holds, starts raceBuyers
// goroutines, each a buyer of its own, released together by one barrier, and has each
// call claim once for that seat. It returns how many won each round.
func raceSeats(t *testing.T, pool *pgxpool.Pool, eventID int64, rounds int, claim claimFunc) []int {
	t.Helper()
	ctx := t.Context()
	winners := make([]int, rounds)
	for round := range winners {
		var seat int64
		err := pool.QueryRow(ctx, `
			SELECT id FROM seats
			WHERE event_id = $1 AND held_by IS NULL AND sold_at IS NULL
			ORDER BY id LIMIT 1`, eventID).Scan(&seat)
		if err != nil {
			t.Fatalf("round %d: find a free seat: %v", round, err)
		}
		var won atomic.Int64
		var errs errorCounter
		atOnce(raceBuyers, func(i int) {
			ok, err := claim(ctx, seat, fmt.Sprintf("r%02d-%s", round, buyerName("b", i)))
			if err != nil {
				errs.add(err)
			} else if ok {
				won.Add(1)
			}
		})
		errs.report(t, fmt.Sprintf("round %d, seat %d", round, seat))
		if t.Failed() {
			t.FailNow()
		}
		winners[round] = int(won.Load())
	}
	return winners
}

// raceSpec is one section of 60 seats: enough for every round.
func raceSpec() demo.EventSpec {
	return smallSpec([]demo.Section{{Name: "Floor", Rows: 2, SeatsPerRow: 30, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 5000}}}})
}

// TestHoldOneSeatRace: a thousand buyers ask for the same seat at the same moment, fifty
// times over. Exactly one gets it each time; every other buyer is told which seat was
// taken; and the database agrees: one hold per raced seat, each seat held by it.
func TestHoldOneSeatRace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, raceSpec(), DefaultConfig())
	claim := func(ctx context.Context, seatID int64, buyer string) (bool, error) {
		_, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: buyer, SeatIDs: []int64{seatID}})
		var taken *SeatsUnavailableError
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &taken):
			if !slices.Equal(taken.SeatIDs, []int64{seatID}) {
				return false, fmt.Errorf("unavailable seats %v, want [%d]", taken.SeatIDs, seatID)
			}
			return false, nil
		default:
			return false, fmt.Errorf("got error %w, want nil or *SeatsUnavailableError", err)
		}
	}

	winners := raceOneSeat(t, f.pool, f.event, claim)
	for round, n := range winners {
		if n != 1 {
			t.Errorf("round %d: got %d winners, want 1", round, n)
		}
	}

	rounds := len(winners)
	if got := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1`, f.event); got != rounds {
		t.Errorf("holds created: got %d, want %d (one per round; a loser's hold must roll back)", got, rounds)
	}
	if got := f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND held_by IS NOT NULL`, f.event); got != rounds {
		t.Errorf("seats held: got %d, want %d", got, rounds)
	}
	// Each raced seat is held by exactly one of the holds, a live one for one seat,
	// and that hold's buyer raced in the round the seat was raced for.
	rows, err := f.pool.Query(t.Context(), `
		SELECT s.id, s.held_by, h.buyer, h.seat_count, h.expires_at = s.hold_expires_at,
		       (SELECT count(*) FROM seats o WHERE o.event_id = s.event_id AND o.held_by = s.held_by)
		FROM seats s
		LEFT JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
		WHERE s.event_id = $1 AND s.held_by IS NOT NULL
		ORDER BY s.id`, f.event)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	round := 0
	for rows.Next() {
		var seat, holdID, seatsOfHold int64
		var buyer *string
		var count *int32
		var sameExpiry *bool
		if err := rows.Scan(&seat, &holdID, &buyer, &count, &sameExpiry, &seatsOfHold); err != nil {
			t.Fatal(err)
		}
		switch {
		case buyer == nil:
			t.Errorf("seat %d: held by %d, which is no hold", seat, holdID)
		case *count != 1 || seatsOfHold != 1:
			t.Errorf("seat %d: hold %d asked for %d seats and has %d, want 1 and 1", seat, holdID, *count, seatsOfHold)
		case !*sameExpiry:
			t.Errorf("seat %d: hold %d expires at another time than the seat says", seat, holdID)
		case !strings.HasPrefix(*buyer, fmt.Sprintf("r%02d-", round)):
			t.Errorf("seat %d (round %d): held by buyer %s, want a buyer of round %d", seat, round, *buyer, round)
		}
		round++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestHoldOneSeatRaceNegativeControl proves the harness can see a double sale: a claim
// that reads whether the seat is free and then writes it unconditionally, as two
// statements, lets more than one buyer "win" some round.
func TestHoldOneSeatRaceNegativeControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t, raceSpec(), DefaultConfig())
	var fakeHold atomic.Int64
	broken := func(ctx context.Context, seatID int64, buyer string) (bool, error) {
		var free bool
		err := f.pool.QueryRow(ctx, `
			SELECT sold_at IS NULL AND (held_by IS NULL OR hold_expires_at <= now())
			FROM seats WHERE event_id = $1 AND id = $2`, f.event, seatID).Scan(&free)
		if err != nil || !free {
			return false, err
		}
		tag, err := f.pool.Exec(ctx, `
			UPDATE seats SET held_by = $3, hold_expires_at = now() + interval '10 minutes'
			WHERE event_id = $1 AND id = $2`, f.event, seatID, fakeHold.Add(1))
		return err == nil && tag.RowsAffected() == 1, err
	}

	winners := raceSeats(t, f.pool, f.event, controlRounds(), broken)
	if most := slices.Max(winners); most <= 1 {
		t.Errorf("read-then-write claim: got at most %d winner per round over %d rounds, want more than 1 in some round", most, len(winners))
	}
	t.Logf("read-then-write winners per round: %v", winners)
}
