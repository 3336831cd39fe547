package waitroom

import (
	"boxoffice/internal/dbtest"
	"errors"
	"math"
	"testing"
	"time"
)

// unavailable checks that Join and Status of v fail with ErrUnavailable rather than
// hang. The bound is not a speed goal but a hang detector with a wide margin: the
// room's own timeout is a fraction of a second, while go-redis left to itself waits
// out its 3 s read timeout (or for ever on a stopped server).
func unavailable(t *testing.T, r *Room, ev Event, v string) {
	t.Helper()
	limit := max(2*time.Second, 4*r.opt.Timeout)
	for name, call := range map[string]func() error{
		"Join":   func() error { _, err := r.Join(t.Context(), ev, v); return err },
		"Status": func() error { _, err := r.Status(t.Context(), ev, v); return err },
	} {
		start := time.Now()
		err := call()
		if d := time.Since(start); d > limit {
			t.Errorf("%s answered after %v, want within %v", name, d, limit)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable", name, err)
		}
	}
}

// TestRedisStoppedThenBackEmpty: during a queued onsale Redis dies. Join and Status
// fail fast with ErrUnavailable while an admitted shopper's token still verifies. Redis
// comes back empty: the waiting visitors, rejoining in their old order, are drawn in a
// random order (rank correlation near 0), nobody is admitted before the regroup window
// ends, and admission resumes at the configured rate from an empty bucket.
func TestRedisStoppedThenBackEmpty(t *testing.T) {
	t.Parallel()
	srv, rdb, port := privateRedis(t)
	const rate, n = 50.0, 200
	ev := Event{ID: 1, OnsaleAt: redisNow(t, rdb).Add(500 * time.Millisecond),
		Settings: Settings{Enabled: true, Slots: 1000, Rate: rate, TokenTTL: time.Minute}}
	r := newRoom(t, rdb, "test:", Hooks{Events: events(ev)}, Options{Regroup: time.Second})
	r.seed(7)
	rec := &admissions{}
	r.onAdmit = rec.hook("r")
	for i := range n {
		join(t, r, ev, visitor("v", i))
	}
	stop := run(t, r)
	eventually(t, "the first admissions", wait, func() bool { return rec.count() >= 25 })
	shopper := rec.all()[0].visitor
	token := status(t, r, ev, shopper).Token

	srv.Stop()
	before := rec.all()
	admitted := map[string]bool{}
	for _, ad := range before {
		admitted[ad.visitor] = true
	}
	unavailable(t, r, ev, visitor("v", n-1))
	if _, err := r.Verify(token, ev.ID, shopper); err != nil {
		t.Errorf("Verify during the outage: got %v, want the token accepted", err)
	}

	srv = dbtest.StartRedisServer(t, port)
	var back []string // the waiting visitors, rejoining in their arrival order
	var drawAt time.Time
	for i := range n {
		v := visitor("v", i)
		if admitted[v] {
			continue
		}
		var st Status
		eventually(t, "a rejoin", wait, func() bool {
			var err error
			st, err = r.Join(t.Context(), ev, v)
			return err == nil
		})
		if st.Admitted || !st.Queued || !st.PreQueue {
			t.Fatalf("rejoin of %s: got %+v, want queued for the regroup draw", v, st)
		}
		back, drawAt = append(back, v), st.DrawAt
	}
	eventually(t, "every rejoined visitor admitted", wait, func() bool { return rec.count() >= len(before)+len(back) })

	stop() // before the restarted server's cleanup kills it
	after := rec.all()[len(before):]
	place := map[string]int{}
	for i, ad := range after {
		if _, dup := place[ad.visitor]; dup {
			t.Fatalf("got %s admitted twice after the restart, want once", ad.visitor)
		}
		place[ad.visitor] = i
	}
	rank := make([]int, len(back))
	for i, v := range back {
		p, ok := place[v]
		if !ok {
			t.Fatalf("got %s not admitted after the restart, want admitted", v)
		}
		rank[i] = p
	}
	// |rho| < 0.4 is about five standard deviations of a random permutation of ~170.
	if rho := spearman(rank); math.Abs(rho) >= 0.4 {
		t.Errorf("got rank correlation %.3f of rejoin and admission order, want |rho| < 0.4 (random)", rho)
	} else {
		t.Logf("rejoin rank correlation %.3f over %d visitors", rho, len(back))
	}
	first, last := after[0].at, after[len(after)-1].at
	if first.Before(drawAt) {
		t.Errorf("got the first admission %v before the regroup draw, want none before it", drawAt.Sub(first))
	}
	if got := between(after, first, first.Add(time.Second)); float64(got) > 1.2*rate {
		t.Errorf("got %d admitted in the first second after the restart, want at most %.0f (the rate, not all at once)", got, 1.2*rate)
	}
	got := float64(len(after)-1) / last.Sub(first).Seconds()
	if math.Abs(got-rate) > 0.15*rate {
		t.Errorf("got %.2f admissions/s after the restart, want %.0f ± 15%%", got, rate)
	}
	t.Logf("%d rejoined, admitted at %.2f/s from %v after the draw", len(back), got, first.Sub(drawAt))
}

// TestRedisHungThenBack: Redis stops answering (SIGSTOP) with visitors waiting. Join
// and Status fail with ErrUnavailable within the timeout instead of hanging, a token
// still verifies, and once Redis answers again (SIGCONT, nothing lost) places are kept
// with no regroup and admission goes on.
func TestRedisHungThenBack(t *testing.T) {
	t.Parallel()
	srv, rdb, _ := privateRedis(t)
	ev := open(1, Settings{Slots: 1000, Rate: 20, TokenTTL: time.Minute})
	r := newRoom(t, rdb, "test:", Hooks{Events: events(ev)}, Options{})
	rec := &admissions{}
	r.onAdmit = rec.hook("r")
	const n = 100
	var token, shopper string
	for i := range n {
		if st := join(t, r, ev, visitor("v", i)); st.Admitted && token == "" {
			token, shopper = st.Token, visitor("v", i)
		}
	}
	last := visitor("v", n-1)
	if st := status(t, r, ev, last); !st.Queued {
		t.Fatalf("got %+v for the last visitor, want queued", st)
	}
	run(t, r)

	srv.Hang()
	unavailable(t, r, ev, last)
	unavailable(t, r, ev, "newcomer")
	if _, err := r.Verify(token, ev.ID, shopper); err != nil {
		t.Errorf("Verify while Redis hangs: got %v, want the token accepted", err)
	}
	during := rec.count()
	srv.Resume()

	var st Status
	eventually(t, "Status answers again", wait, func() bool {
		var err error
		st, err = r.Status(t.Context(), ev, last)
		return err == nil
	})
	if !st.Queued || st.PreQueue {
		t.Errorf("after the hang got %+v, want the place kept and no regroup", st)
	}
	eventually(t, "admission goes on", wait, func() bool { return rec.count() > during })
}
