package waitroom

import (
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// TestCountsAndAdmittedHook: Counts tells waiting from shopping visitors by Redis's
// clock, and the Admitted hook hears of every admission, direct or by the admitter,
// exactly once: what /metrics reports as queue length, active shoppers and admissions.
func TestCountsAndAdmittedHook(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	ev := open(7, Settings{Slots: 2, Rate: 50, TokenTTL: time.Minute})
	var admitted atomic.Int64
	r := newRoom(t, rdb, prefix, Hooks{
		Events: events(ev),
		Admitted: func(eventID int64, n int) {
			if eventID != ev.ID {
				t.Errorf("admitted to event %d, want %d", eventID, ev.ID)
			}
			admitted.Add(int64(n))
		},
	}, Options{Tick: 20 * time.Millisecond})
	counts := func() Counts {
		t.Helper()
		c, err := r.Counts(t.Context(), ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := counts(); c != (Counts{}) {
		t.Fatalf("empty room: got %+v, want zeros", c)
	}
	for i := range 5 {
		join(t, r, ev, visitor("v", i))
	}
	run(t, r)
	eventually(t, "two shoppers admitted", wait, func() bool { return counts().Active == 2 })
	if c, n := counts(), admitted.Load(); c.Waiting != 3 || n != 2 {
		t.Errorf("slots full: got %+v and %d admissions heard, want 3 waiting and 2", c, n)
	}

	// A shopper leaves: the admitter lets the next one in.
	var gone string
	for i := range 5 {
		if status(t, r, ev, visitor("v", i)).Admitted {
			gone = visitor("v", i)
			break
		}
	}
	if err := r.Leave(t.Context(), ev.ID, gone); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the next one admitted", wait, func() bool { return admitted.Load() == 3 })
	eventually(t, "counts caught up", wait, func() bool { return counts() == Counts{Waiting: 2, Active: 2} })
}
