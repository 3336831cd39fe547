package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
	"boxoffice/web"
)

// Phases of the outage, as a request sees them when it is sent and when it is answered.
const (
	phaseUp        int32 = iota // PostgreSQL reachable
	phaseCutting                // the proxy is cutting the connections
	phaseDown                   // every connection cut, new ones refused
	phaseBack                   // reachable again, service not yet seen to resume
	phaseRecovered              // a hold has succeeded again
)

// loadAnswer is one request of the load, with the phases it spanned.
type loadAnswer struct {
	worker     int
	op         string
	status     int
	code       string
	retryAfter string
	fail       error
	sent, got  int32
	took       time.Duration
}

// success reports whether the answer is the one the operation gets when all is well.
func (a loadAnswer) success() bool {
	switch a.op {
	case "hold":
		return a.status == http.StatusCreated
	case "release":
		return a.status == http.StatusNoContent
	}
	return a.status == http.StatusOK
}

// loadState is what the load has seen so far; the test waits on it.
type loadState struct {
	mu      sync.Mutex
	answers []loadAnswer
	changed chan struct{} // a signal, not a count: there is a new answer
}

func (s *loadState) add(a loadAnswer) {
	s.mu.Lock()
	s.answers = append(s.answers, a)
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds over the answers so far, or fails the test at the
// deadline.
func (s *loadState) waitFor(t *testing.T, what string, d time.Duration, cond func([]loadAnswer) bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		s.mu.Lock()
		ok := cond(s.answers)
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.changed:
		case <-timeout:
			s.mu.Lock()
			tally := map[string]int{}
			for _, a := range s.answers {
				tally[fmt.Sprintf("%s %d %d→%d", a.op, a.status, a.sent, a.got)]++
			}
			s.mu.Unlock()
			t.Fatalf("waiting %v for %s: gave up; answers so far: %v", d, what, tally)
		}
	}
}

// TestDatabaseOutage cuts PostgreSQL off under load. While it is away every answer is
// a 503 with Retry-After and the JSON error "unavailable" (or a seat map from the
// one-second cache), never a 500 and never a hang; /readyz says 503. When it comes
// back, holds succeed again without restarting anything.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	const workers = 16
	var proxy *dbtest.Proxy
	app := newTestApp(t, noRateLimit, func(o *appOptions) {
		o.DBURL = func(t testing.TB, url string) string {
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			proxy = dbtest.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
			return dbtest.ProxiedURL(t, url, proxy)
		}
	})
	seats := firstSeats(t, app.Pool, app.EventID, 4*workers+1)
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * workers}
	t.Cleanup(tr.CloseIdleConnections)
	ev := itoa(app.EventID)

	// Each worker has an order on one seat and three seats of its own to hold and
	// release: a hold whose commit was cut off unanswered keeps only its own seat.
	type worker struct {
		c     *client
		order int64
		seats []int64
	}
	ws := make([]worker, workers)
	for i := range ws {
		c := app.newClientVia(t, tr, 5*time.Second) // a hang is a failure
		ws[i] = worker{c: c, order: c.checkout(c.hold(app.EventID, seats[4*i]).HoldID).OrderID, seats: seats[4*i+1 : 4*i+4]}
	}
	probe := app.newClientVia(t, tr, 5*time.Second)
	readyz := func() (int, string) {
		st, _, hdr, err := probe.send(context.Background(), "GET", "/readyz", nil, nil)
		if err != nil {
			t.Fatalf("readyz: %v", err)
		}
		return st, hdr.Get("Retry-After")
	}
	if st, _ := readyz(); st != http.StatusOK {
		t.Fatalf("readyz before the outage: got %d, want 200", st)
	}

	var phase atomic.Int32
	state := &loadState{changed: make(chan struct{}, 1)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() {
			var held string // a hold to release before the next
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				a := loadAnswer{worker: i, sent: phase.Load()}
				var method, path string
				var body any
				switch n % 4 {
				case 0:
					a.op, method, path = "seatmap", "GET", "/api/v1/events/"+ev+"/seatmap"
				case 1:
					a.op, method, path = "session", "GET", "/api/v1/session"
				case 2:
					a.op, method, path = "order", "GET", "/api/v1/orders/"+itoa(w.order)
				case 3:
					if held != "" {
						a.op, method, path = "release", "DELETE", "/api/v1/holds/"+held
					} else {
						a.op, method, path = "hold", "POST", "/api/v1/events/"+ev+"/holds"
						body = map[string]any{"seatIds": []int64{w.seats[n/4%len(w.seats)]}}
					}
				}
				began := time.Now()
				st, raw, hdr, err := w.c.send(context.Background(), method, path, body, nil)
				a.took, a.got, a.status, a.fail = time.Since(began), phase.Load(), st, err
				if err == nil {
					a.retryAfter = hdr.Get("Retry-After")
					if st >= 400 {
						e, perr := parseError(raw)
						a.code, a.fail = e.Error, perr
					}
				}
				switch {
				case a.op == "hold" && st == http.StatusCreated:
					var h web.HoldJSON
					if err := json.Unmarshal(raw, &h); err != nil {
						a.fail = err
					}
					held = h.HoldID
				case a.op == "release" && st == http.StatusNoContent:
					held = ""
				}
				state.add(a)
			}
		})
	}
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	})

	// Up: the load has run for a while, and holds succeed.
	state.waitFor(t, "the load to warm up", 30*time.Second, func(as []loadAnswer) bool {
		return len(as) >= 4*workers && countWhere(as, func(a loadAnswer) bool { return a.op == "hold" && a.success() }) >= workers/2
	})

	phase.Store(phaseCutting)
	proxy.Down()
	phase.Store(phaseDown)
	downAt := time.Now()
	// Down for long enough that the cached seat map goes stale and misses reach the
	// database, and every worker has had answers entirely inside the outage.
	state.waitFor(t, "answers during the outage", 30*time.Second, func(as []loadAnswer) bool {
		inside := func(a loadAnswer) bool { return a.sent == phaseDown && a.got == phaseDown }
		return time.Since(downAt) > 1500*time.Millisecond &&
			countWhere(as, func(a loadAnswer) bool { return inside(a) && a.op == "seatmap" && a.status == 503 }) >= workers &&
			countWhere(as, func(a loadAnswer) bool { return inside(a) && (a.op == "hold" || a.op == "release") }) >= workers
	})
	if st, ra := readyz(); st != http.StatusServiceUnavailable || ra == "" {
		t.Errorf("readyz while down: got %d with Retry-After %q, want 503 with Retry-After", st, ra)
	}

	phase.Store(phaseBack)
	proxy.Up()
	upAt := time.Now()
	recovered := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		st, raw, hdr, err := probe.send(context.Background(), "POST", "/api/v1/events/"+ev+"/holds", map[string]any{"seatIds": []int64{seats[4*workers]}}, nil)
		if err != nil {
			t.Fatalf("probe hold after the outage: %v", err)
		}
		if st == http.StatusCreated {
			recovered = true
			break
		}
		if st != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
			t.Fatalf("probe hold after the outage: got %d %s, want 201 or 503 with Retry-After", st, truncate(raw))
		}
		time.Sleep(20 * time.Millisecond) // polling, as a client told to retry does
	}
	if !recovered {
		t.Fatal("holds did not succeed again within 15s of the database coming back")
	}
	phase.Store(phaseRecovered)
	t.Logf("down for %v; holds succeed again %v after it came back", upAt.Sub(downAt), time.Since(upAt))
	state.waitFor(t, "every worker to succeed again", 30*time.Second, func(as []loadAnswer) bool {
		per := map[int]int{}
		for _, a := range as {
			if a.sent == phaseRecovered && a.success() {
				per[a.worker]++
			}
		}
		for i := range workers {
			if per[i] < 4 {
				return false
			}
		}
		return true
	})
	close(stop)
	wg.Wait()
	if st, _ := readyz(); st != http.StatusOK {
		t.Errorf("readyz after the outage: got %d, want 200", st)
	}

	problems, tally := checkOutage(state.answers)
	t.Logf("answers: %v", tally)
	for _, p := range problems {
		t.Error(p)
	}
	bookingtest.Check(t, app.Pool, app.EventID)
}

func countWhere(as []loadAnswer, f func(loadAnswer) bool) int {
	n := 0
	for _, a := range as {
		if f(a) {
			n++
		}
	}
	return n
}

// checkOutage returns what is wrong with the answers of the load, at most a few of
// each kind, and a tally of the answers.
func checkOutage(as []loadAnswer) ([]string, map[string]int) {
	var problems []string
	seen := map[string]int{}
	report := func(kind string, a loadAnswer) {
		if seen[kind]++; seen[kind] <= 3 {
			problems = append(problems, fmt.Sprintf("%s: worker %d %s (phases %d→%d, %v): status %d %q, Retry-After %q, %v",
				kind, a.worker, a.op, a.sent, a.got, a.took.Round(time.Millisecond), a.status, a.code, a.retryAfter, a.fail))
		}
	}
	tally := map[string]int{}
	for _, a := range as {
		inside := a.sent == phaseDown && a.got == phaseDown
		if inside {
			tally["inside the outage"]++
		}
		switch {
		case a.fail != nil:
			report("transport error, timeout or unreadable answer", a)
		case a.status == http.StatusServiceUnavailable:
			tally[fmt.Sprintf("%s 503", a.op)]++
			if a.retryAfter == "" || a.code != "unavailable" {
				report("503 without Retry-After or error unavailable", a)
			}
			if a.sent == phaseUp && a.got == phaseUp {
				report("503 before the outage", a)
			}
			if a.sent == phaseRecovered {
				report("503 after service resumed", a)
			}
		case a.status >= 500:
			report("5xx other than 503", a)
		case a.success():
			tally[a.op+" ok"]++
			// The seat map and the session may come from memory (the map's one-second
			// cache, the session store's few seconds); anything else needs PostgreSQL.
			if inside && a.op != "seatmap" && a.op != "session" {
				report("success without a database", a)
			}
		case a.op == "hold" && a.status == http.StatusConflict && a.code == "seat_unavailable" && a.sent != phaseUp:
			// The worker's own hold, committed just as the connection was cut and
			// answered 503 because PostgreSQL was gone before the hold's outcome could
			// be read back (booking reads it back when it can): a later hold of that
			// seat finds it held by the worker's earlier hold.
			tally["hold lost to own unanswered commit"]++
		default:
			report("unexpected answer", a)
		}
	}
	return problems, tally
}

// TestRedisKeysLost deletes every Redis key of the app while a buyer holds seats: the
// session and the hold live in PostgreSQL, so the same buyer still sees its hold and
// checks it out and pays.
func TestRedisKeysLost(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	c := app.newClient(t)
	h := c.hold(app.EventID, seats...)
	ctx := context.Background()

	// Other tests share this Redis: delete only this app's keys, never FLUSHALL. The
	// seat change is announced after commit, off the request path: wait for its key.
	var keys []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		if keys, err = app.Redis.Keys(ctx, app.Prefix+"*").Result(); err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Redis keys under %s after a hold; want the seat-change version at least", app.Prefix)
		}
		time.Sleep(20 * time.Millisecond) // polling: the announcement is asynchronous
	}
	if err := app.Redis.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	if left, err := app.Redis.Keys(ctx, app.Prefix+"*").Result(); err != nil || len(left) > 0 {
		t.Fatalf("keys left under %s: %v (%v)", app.Prefix, left, err)
	}

	var got web.HoldJSON
	if st := c.do("GET", "/api/v1/holds/"+h.HoldID, nil, &got); st != http.StatusOK || len(got.Seats) != 2 {
		t.Fatalf("hold after losing Redis: got status %d with %d seats, want 200 with 2", st, len(got.Seats))
	}
	co := c.checkout(h.HoldID)
	c.pay(co.OrderID, "")
	if o := waitOrder(t, c, co.OrderID, booking.StatusConfirmed); len(o.Tickets) != 2 {
		t.Errorf("order after losing Redis: got %d tickets, want 2", len(o.Tickets))
	}
	bookingtest.Check(t, app.Pool, app.EventID)
}
