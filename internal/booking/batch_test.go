package booking

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestExactHoldsBatched: exact holds arriving together are committed in batches, and
// batching changes no verdict. 200 buyers at once: most want one seat of their own,
// some want two to four seats overlapping other buyers'. Every success has exactly its
// seats, every refusal names a seat that a success has, and the seat rows agree.
func TestExactHoldsBatched(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, DefaultConfig())
	seats := f.rowSeats(t, "Stalls", "A") // 40 seats
	for _, r := range []string{"B", "C", "D", "E"} {
		seats = append(seats, f.rowSeats(t, "Stalls", r)...)
	}
	for round := 0; round < 5 && f.svc.store.batches.Load() == 0; round++ {
		if round > 0 {
			if _, err := f.pool.Exec(t.Context(), `UPDATE seats SET held_by = NULL, hold_expires_at = NULL WHERE event_id = $1`, f.event); err != nil {
				t.Fatal(err)
			}
		}
		const buyers = 200
		asks := make([][]int64, buyers)
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		for i := range asks {
			if i%5 == 0 {
				n := 2 + rng.IntN(3)
				for _, k := range rng.Perm(len(seats))[:n] {
					asks[i] = append(asks[i], seats[k])
				}
			} else {
				asks[i] = []int64{seats[i%len(seats)]}
			}
		}
		got := make([]Hold, buyers)
		var taken sync.Map
		var unexpected errorCounter
		atOnce(buyers, func(i int) {
			h, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyerName("b", round*1000+i), SeatIDs: asks[i]})
			var unavailable *SeatsUnavailableError
			switch {
			case err == nil:
				got[i] = h
			case errors.As(err, &unavailable):
				taken.Store(i, unavailable.SeatIDs)
			default:
				unexpected.add(err)
			}
		})
		unexpected.report(t, "holds")
		owner := map[int64]int64{} // seat -> hold
		for i, h := range got {
			if h.ID.Seq == 0 {
				continue
			}
			want := slices.Clone(asks[i])
			slices.Sort(want)
			if ids := sortedIDs(h.Seats); !slices.Equal(ids, want) {
				t.Errorf("buyer %d: got seats %v, want %v", i, ids, want)
			}
			for _, id := range want {
				if other, ok := owner[id]; ok {
					t.Errorf("seat %d held by holds %d and %d", id, other, h.ID.Seq)
				}
				owner[id] = h.ID.Seq
			}
		}
		taken.Range(func(k, v any) bool {
			for _, id := range v.([]int64) {
				if _, ok := owner[id]; !ok {
					t.Errorf("buyer %d refused for seat %d, which no hold has", k, id)
				}
			}
			return true
		})
		for seat, hold := range owner {
			var heldBy int64
			if err := f.pool.QueryRow(t.Context(), `SELECT coalesce(held_by, 0) FROM seats WHERE event_id = $1 AND id = $2`, f.event, seat).Scan(&heldBy); err != nil {
				t.Fatal(err)
			}
			if heldBy != hold {
				t.Errorf("seat %d: held by %d in the database, answered hold %d", seat, heldBy, hold)
			}
		}
	}
	if f.svc.store.batches.Load() == 0 {
		t.Errorf("no batch of holds ran in 5 rounds of 200 buyers at once, want some")
	}
}
