package waitroom

import (
	"fmt"
	"math"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// TestPreQueueShuffledThenFIFO: 300 visitors arrive before the onsale, 100 after it.
// The 300 come out first, as a random permutation of their arrival order (rank
// correlation near 0: FIFO would give 1, reversed -1), then the 100 strictly in
// arrival order. The places are drawn from a fixed seed, so the test is repeatable.
func TestPreQueueShuffledThenFIFO(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	const pre, later = 300, 100
	// The onsale is a minute away while the pre-queue fills (however long a loaded
	// machine takes), then set just after the last join.
	ev := Event{ID: 1, OnsaleAt: redisNow(t, rdb).Add(time.Minute),
		Settings: Settings{Enabled: true, Slots: 10000, Rate: 1000, TokenTTL: time.Minute}}
	var cur movable
	cur.set(ev)
	r := newRoom(t, rdb, prefix, Hooks{Events: cur.events}, Options{Tick: 20 * time.Millisecond})
	r.seed(1)
	rec := &admissions{}
	r.onAdmit = rec.hook("r")

	for i := range pre {
		st := join(t, r, ev, visitor("pre", i))
		if !st.Queued || !st.PreQueue || st.Position != 0 || st.Waiting != i+1 {
			t.Fatalf("pre-queue join %d: got %+v, want queued in the pre-queue, no position, %d waiting", i, st, i+1)
		}
	}
	if again := join(t, r, ev, visitor("pre", 0)); again.Waiting != pre {
		t.Errorf("joining again got %d waiting, want %d (one place per visitor)", again.Waiting, pre)
	}
	ev.OnsaleAt = redisNow(t, rdb).Add(200 * time.Millisecond)
	cur.set(ev)
	// A margin past the onsale: the scripts compare whole milliseconds.
	eventually(t, "the onsale by Redis's clock", wait, func() bool { return !redisNow(t, rdb).Before(ev.OnsaleAt.Add(10 * time.Millisecond)) })
	for i := range later {
		st := join(t, r, ev, visitor("later", i))
		if !st.Queued || st.PreQueue || st.Position != pre+i+1 {
			t.Fatalf("join %d after the onsale: got %+v, want queued at position %d", i, st, pre+i+1)
		}
	}

	run(t, r)
	eventually(t, "everyone admitted", wait, func() bool { return rec.count() == pre+later })
	got := rec.all()
	rank := make([]int, pre)
	seen := map[string]bool{}
	for i, ad := range got[:pre] {
		var n int
		if _, err := fmt.Sscanf(ad.visitor, "pre-%d", &n); err != nil || seen[ad.visitor] {
			t.Fatalf("admission %d: got %q, want each pre-queue visitor once before any later one", i, ad.visitor)
		}
		seen[ad.visitor] = true
		rank[n] = i
	}
	// With a fixed seed rho is one number; |rho| < 0.2 is 3.4 standard deviations of
	// a random permutation of 300 (1/sqrt(299)), far from FIFO (1) and reversed (-1).
	if rho := spearman(rank); math.Abs(rho) >= 0.2 {
		t.Errorf("pre-queue: got rank correlation %.3f of arrival and admission, want |rho| < 0.2 (a random permutation)", rho)
	} else {
		t.Logf("pre-queue rank correlation %.3f", rho)
	}
	for i, ad := range got[pre:] {
		if want := visitor("later", i); ad.visitor != want {
			t.Fatalf("admission %d after the pre-queue: got %s, want %s (FIFO)", pre+i, ad.visitor, want)
		}
	}
}
