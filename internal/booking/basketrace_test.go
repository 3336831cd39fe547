package booking

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// basketRounds is how many times two tabs race to fill one basket.
func basketRounds() int {
	if testing.Short() {
		return 5
	}
	return 30
}

// addFunc adds one seat to the buyer's hold: true if added, false with no error if
// refused by the limit, an error for anything else.
type addFunc func(ctx context.Context, id HoldID, buyer string, seat int64) (bool, error)

// raceBasket runs rounds in which one buyer's hold of one seat gets, from two tabs at
// once, each tab adding its own 8 seats one by one (17 asked for, limit 10). After each
// round it returns the violations it found in SQL: a hold with more seats than the
// limit, a seat_count that is not the seats the hold has, or a seat added that the
// hold lost.
func raceBasket(t *testing.T, f fixture, rounds int, add addFunc) []string {
	t.Helper()
	ctx := t.Context()
	var found []string
	for round := range rounds {
		buyer := fmt.Sprintf("tabs-%02d", round)
		free := f.ids(t, `SELECT id FROM seats WHERE event_id = $1 AND held_by IS NULL AND sold_at IS NULL ORDER BY id LIMIT 17`, f.event)
		h := f.hold(t, buyer, free[0])
		var added atomic.Int64
		var errs errorCounter
		atOnce(2, func(tab int) {
			for i := range 8 {
				ok, err := add(ctx, h.ID, buyer, free[1+tab*8+i])
				if err != nil {
					errs.add(err)
				} else if ok {
					added.Add(1)
				}
			}
		})
		errs.report(t, fmt.Sprintf("round %d", round))
		count, held, _ := f.holdRow(t, h.ID)
		switch {
		case held > 10:
			found = append(found, fmt.Sprintf("round %d: %d seats held, limit 10", round, held))
		case count != held:
			found = append(found, fmt.Sprintf("round %d: seat_count %d, seats held %d", round, count, held))
		case held != 1+int(added.Load()):
			found = append(found, fmt.Sprintf("round %d: %d seats held, %d added", round, held, 1+added.Load()))
		}
		if err := f.svc.Buyer.Release(ctx, h.ID, buyer); err != nil {
			t.Fatalf("round %d: release: %v", round, err)
		}
	}
	return found
}

// TestBasketTwoTabs: two tabs of one buyer adding seats to one hold at once never pass
// the limit, never lose a seat, and keep seat_count true.
func TestBasketTwoTabs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), DefaultConfig())
	found := raceBasket(t, f, basketRounds(), func(ctx context.Context, id HoldID, buyer string, seat int64) (bool, error) {
		_, err := f.svc.Buyer.AddSeats(ctx, id, HoldRequest{Buyer: buyer, SeatIDs: []int64{seat}})
		var lim *LimitError
		if errors.As(err, &lim) {
			return false, nil
		}
		return err == nil, err
	})
	for _, v := range found {
		t.Error(v)
	}
}

// TestBasketTwoTabsNegativeControl proves the two-tab test can catch a race: an add
// without the locks, which counts what the buyer has, claims the seat and writes back
// the seat_count it read, as separate statements, passes the limit or loses a count.
// A pause between the read and the writes, as a busy machine makes, lets the other
// tab's add fall between them in every round rather than in some runs only.
func TestBasketTwoTabsNegativeControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), DefaultConfig())
	found := raceBasket(t, f, basketRounds(), func(ctx context.Context, id HoldID, buyer string, seat int64) (bool, error) {
		var held, count int
		err := f.pool.QueryRow(ctx, `SELECT buyer_places($1, $2, 0), seat_count FROM holds WHERE event_id = $1 AND id = $3`,
			id.Event, buyer, id.Seq).Scan(&held, &count)
		if err != nil || held >= 10 {
			return false, err
		}
		time.Sleep(2 * time.Millisecond)
		tag, err := f.pool.Exec(ctx, `UPDATE seats s SET held_by = h.id, hold_expires_at = h.expires_at
			FROM holds h WHERE h.event_id = s.event_id AND h.id = $2 AND s.event_id = $1 AND s.id = $3 AND seat_is_free(s)`,
			id.Event, id.Seq, seat)
		if err != nil || tag.RowsAffected() == 0 {
			return false, err
		}
		_, err = f.pool.Exec(ctx, `UPDATE holds SET seat_count = $3 WHERE event_id = $1 AND id = $2`, id.Event, id.Seq, count+1)
		return err == nil, err
	})
	if len(found) == 0 {
		t.Fatalf("got no violation in %d rounds without the locks, want at least one: the test cannot catch the race", basketRounds())
	}
	t.Logf("without the locks: %d violations, first %q", len(found), found[0])
}
