package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/staff"
	"boxoffice/internal/waitroom"
)

// TestTwoInstances: two instances of the program, each served on its own port, on one
// database, one Redis and one key prefix, as two app servers behind a load balancer:
// a live map streamed from A hears a hold made through B; a staff logout on A is felt
// on B's very next request; with both admitters running only one instance admits, the
// other takes over when it stops, and together they keep to the rate. It runs on
// REDIS_URL's Redis and on a private three-primary Redis Cluster.
func TestTwoInstances(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		redis func(t *testing.T) string
	}{
		{"one Redis", func(*testing.T) string { return "" }},
		{"Redis Cluster", func(t *testing.T) string { return dbtest.StartRedisCluster(t).URL() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			redisURL := tc.redis(t)
			a := newTestApp(t, func(o *appOptions) { fastQueue(o); o.RedisURL = redisURL })
			b := newTestApp(t, func(o *appOptions) { fastQueue(o); o.Beside = a.App })
			if b.Prefix != a.Prefix || b.App.Config.DatabaseURL != a.App.Config.DatabaseURL || b.URL == a.URL {
				t.Fatalf("instances on %s/%s and %s/%s, want one database and prefix, two servers", a.URL, a.Prefix, b.URL, b.Prefix)
			}
			liveMapHearsOtherInstance(t, a, b)
			logoutFeltOnOtherInstance(t, a, b)
			oneAdmitterAtATime(t, a, b)
		})
	}
}

// liveMapHearsOtherInstance: A's seat stream shows a seat held through B. A hold made
// while A's hub is still subscribing comes as a reset instead (the stream cannot vouch
// for what it has not heard); the next hold then comes as itself.
func liveMapHearsOtherInstance(t *testing.T, a, b *testApp) {
	t.Helper()
	m, err := a.Booking.Maps.SeatMap(t.Context(), a.EventID)
	if err != nil {
		t.Fatal(err)
	}
	onA, _ := (&streamApp{testApp: a, url: a.URL}).open(t, "?v="+itoa(m.Version), nil)
	buyer := b.newClient(t)
	for i, seat := range []int64{m.Seats[0].ID, m.Seats[1].ID} {
		buyer.hold(b.EventID, seat)
		ev := onA.next(t)
		if ev.event == "seats" && strings.Contains(ev.data, `id="seat-`+itoa(seat)+`"`) && strings.Contains(ev.data, "held") {
			return
		}
		if ev.event != "reset" || i == 1 {
			t.Fatalf("A's stream after a hold of seat %d through B: got %q %q, want the seat held", seat, ev.event, ev.data)
		}
	}
}

// logoutFeltOnOtherInstance: staff sessions live in PostgreSQL, so a logout through A
// ends the session for B's next request too, the same token replayed.
func logoutFeltOnOtherInstance(t *testing.T, a, b *testApp) {
	t.Helper()
	c, _ := a.staffClient(t, staff.BoxOffice)
	onB := *c
	onB.base = b.URL // the jar sends the same cookie: cookies do not tell ports apart
	if st := onB.page("/admin", false).status; st != http.StatusOK {
		t.Fatalf("B before the logout: got %d, want 200", st)
	}
	tok := c.staffCookie()
	if st := c.postForm("/admin/logout", url.Values{"_csrf": {c.csrf}}, false).status; st != http.StatusSeeOther {
		t.Fatalf("logout on A: got %d, want 303", st)
	}
	onB.http.Jar.SetCookies(mustURL(b.URL+"/admin"), []*http.Cookie{{Name: "boxoffice_staff", Value: tok, Path: "/admin"}})
	if st := onB.page("/admin", false).status; st != http.StatusSeeOther {
		t.Errorf("B right after the logout on A, the same token: got %d, want 303 to the login", st)
	}
}

// oneAdmitterAtATime: with a pre-queue drawn at the onsale and both instances'
// admitters running, the admissions come from one instance only; stopped, the other
// takes over (so its silence was the lease, not an admitter unable to admit); and
// together they admit no more than the rate allows since the onsale plus one bucket.
func oneAdmitterAtATime(t *testing.T, a, b *testApp) {
	t.Helper()
	const rate, visitors = 20, 200
	ctx := t.Context()
	if _, err := a.Pool.Exec(ctx, `UPDATE events SET queue_enabled = true, queue_slots = 10000, queue_rate = $2,
		queue_token_ttl_seconds = 600, onsale_at = now() + interval '1 minute' WHERE id = $1`, a.EventID, rate); err != nil {
		t.Fatal(err)
	}
	ev := queuedEvent(t, a)
	for i := range visitors {
		p := []*testApp{a, b}[i%2]
		if st, err := p.App.Queue.Join(ctx, ev, "visitor-"+itoa(int64(i))); err != nil || !st.PreQueue {
			t.Fatalf("join %d through %s: got %+v, %v; want the pre-queue", i, p.URL, st, err)
		}
	}
	var onsale time.Time
	if err := a.Pool.QueryRow(ctx, `UPDATE events SET onsale_at = now() + interval '500 milliseconds' WHERE id = $1
		RETURNING onsale_at`, a.EventID).Scan(&onsale); err != nil {
		t.Fatal(err)
	}
	stopA, stopB := admitter(t, a), admitter(t, b)
	dbtest.Eventually(t, "40 admissions", 30*time.Second, func() bool { return admitted(t, a)+admitted(t, b) >= 40 })
	second, stopFirst, stopSecond := b, stopA, stopB
	if admitted(t, a) == 0 {
		second, stopFirst, stopSecond = a, stopB, stopA
	}
	if admitted(t, second) != 0 {
		t.Errorf("both instances admitted (%v and %v) while both ran, want one", admitted(t, a), admitted(t, b))
	}
	stopFirst()
	dbtest.Eventually(t, "the other instance takes over", 30*time.Second, func() bool { return admitted(t, second) > 0 })
	stopSecond()
	elapsed := time.Since(onsale).Seconds()
	if total, most := admitted(t, a)+admitted(t, b), rate*elapsed+rate; total > most {
		t.Errorf("got %v admissions in %.1f s since the onsale, want at most %.0f (%d/s and one bucket)", total, elapsed, most, rate)
	}
}

// queuedEvent is the demo event as the waiting room sees it.
func queuedEvent(t *testing.T, a *testApp) waitroom.Event {
	t.Helper()
	evs, err := a.Booking.Buyer.QueuedEvents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.ID == a.EventID {
			return ev.Room()
		}
	}
	t.Fatalf("the demo event is not among the queued events %+v", evs)
	return waitroom.Event{}
}

// admitter runs the instance's admitter until stop (or the test's end) returns.
func admitter(t *testing.T, a *testApp) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.App.Queue.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// admitted is how many visitors the instance's admitter let in, from its own counter.
func admitted(t *testing.T, a *testApp) float64 {
	t.Helper()
	fams, err := a.App.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() == "boxoffice_queue_admitted_total" {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
