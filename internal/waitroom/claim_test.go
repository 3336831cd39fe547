package waitroom

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFrontClaimsRaceAtAFullRoom: the cursor has passed more places than there are
// slots (it passed them while the slots were many; the organiser has lowered them
// since) and nobody claimed within the claim window: every claim now is a late one.
// The first claims take the slots; the other passed places then claim at once, from
// one barrier. None goes in over the slots: each is told to ask again, and one that
// asks again once a shopper leaves goes in. The negative control, the same race with
// the claim's check of the slots off, puts every one of them in.
func TestFrontClaimsRaceAtAFullRoom(t *testing.T) {
	t.Parallel()
	const slots, n = 5, 40
	for _, unbounded := range []bool{false, true} {
		r, _, _ := frontRoom(t, func(o *Options) { o.ClaimWindow = 200 * time.Millisecond })
		r.unboundedClaims = unbounded
		ctx := t.Context()
		ev := Event{ID: 16, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: slots, Rate: 1000}}
		places := make([]Place, n)
		for i := range places {
			places[i], _ = r.Arrive(ev, Board{})
		}
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		many := ev
		many.Settings.Slots = 1000
		tickUntil(t, r, many, "every place passed", func(b Board) bool {
			for _, p := range places {
				if !p.Passed(b) {
					return false
				}
			}
			return true
		})
		visitor := func(i int) string { return "v" + strconv.Itoa(i) }
		// The places passed count against the slots for their claim window; then the
		// first claim goes in.
		eventually(t, "the claim window over", wait, func() bool {
			st, err := r.Claim(ctx, ev, places[0], visitor(0), "")
			return err == nil && st.Admitted
		})
		for i := 1; i < slots; i++ {
			if st, err := r.Claim(ctx, ev, places[i], visitor(i), ""); err != nil || !st.Admitted {
				t.Fatalf("unbounded %v: claim %d of %d slots: got %+v, %v; want admitted", unbounded, i, slots, st, err)
			}
		}

		var admitted atomic.Int64
		var refused sync.Map // visitor → its place, told to ask again
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := slots; i < n; i++ {
			wg.Go(func() {
				<-start
				st, err := r.Claim(ctx, ev, places[i], visitor(i), "")
				switch {
				case err != nil:
					t.Errorf("claim %d: %v", i, err)
				case st.Admitted:
					admitted.Add(1)
				case st.Queued && st.PollAfter > 0:
					refused.Store(i, places[i])
				default:
					t.Errorf("claim %d: got %+v, want admitted or told to ask again", i, st)
				}
			})
		}
		close(start)
		wg.Wait()
		c, err := r.Counts(ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if unbounded {
			// The negative control: the race does go in over the slots without the check.
			if admitted.Load() != n-slots || c.Active != n {
				t.Errorf("check off: %d of the %d racing claims admitted, %d shopping; want all of them, %d shopping",
					admitted.Load(), n-slots, c.Active, n)
			}
			continue
		}
		if admitted.Load() != 0 || c.Active != slots {
			t.Errorf("at a full room: %d racing claims admitted, %d shopping; want none, the %d slots", admitted.Load(), c.Active, slots)
		}
		// A shopper leaves: one of those told to ask again goes in, and only one.
		if err := r.Leave(ctx, ev.ID, visitor(0)); err != nil {
			t.Fatal(err)
		}
		var in []int
		eventually(t, "a claim asked again goes in", wait, func() bool {
			refused.Range(func(k, v any) bool {
				if st, err := r.Claim(ctx, ev, v.(Place), visitor(k.(int)), ""); err == nil && st.Admitted {
					in = append(in, k.(int))
				}
				return true
			})
			return len(in) > 0
		})
		if c, err := r.Counts(ctx, ev.ID); err != nil || len(in) != 1 || c.Active != slots {
			t.Errorf("after one left: %v went in, %d shopping (%v); want one, the %d slots", in, c.Active, err, slots)
		}
	}
}
