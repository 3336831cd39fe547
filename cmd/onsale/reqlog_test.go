package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestRouteOf(t *testing.T) {
	for _, c := range []struct {
		e    entry
		want string
	}{
		{entry{Method: "POST", URI: "/api/v1/events/12/holds", Hold: "seats"}, "POST /api/v1/events/:id/holds (seats)"},
		{entry{Method: "POST", URI: "/api/v1/holds/12-345/checkout"}, "POST /api/v1/holds/:id/checkout"},
		{entry{Method: "GET", URI: "/api/v1/orders/7?x=1"}, "GET /api/v1/orders/:id"},
		{entry{Method: "GET", URI: "/events/final-2026/seats"}, "GET /events/final-2026/seats"},
		{entry{Method: "GET", URI: "/admin/events/3/orders/9"}, "GET /admin/events/:id/orders/:id"},
	} {
		if got := routeOf(c.e, true); got != c.want {
			t.Errorf("routeOf(%s %s): got %q, want %q", c.e.Method, c.e.URI, got, c.want)
		}
	}
	if got := routeOf(entry{Method: "POST", URI: "/api/v1/events/12/holds", Hold: "best"}, false); got != "POST /api/v1/events/:id/holds" {
		t.Errorf("a hold without kinds: got %q", got)
	}
}

// TestSummarize: requests are grouped by route, their percentiles taken, and their
// time split as the tally says, the rest being what the tally does not cover; lines
// that are not requests are skipped, and the window and -min leave requests out.
func TestSummarize(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var log strings.Builder
	line := func(at time.Duration, uri, hold string, latency, wait, db, batched, redis time.Duration, trips int) {
		fmt.Fprintf(&log, `{"time":%q,"level":"INFO","msg":"request","method":"POST","uri":%q,"status":201,"latency":%d,"hold":%q,"db_wait":%d,"db":%d,"db_trips":%d,"db_batched":%d,"redis":%d,"redis_trips":1}`+"\n",
			t0.Add(at).Format(time.RFC3339Nano), uri, latency, hold, wait, db, trips, batched, redis)
	}
	log.WriteString(`{"time":"2026-12-02T11:59:59Z","level":"WARN","msg":"something else"}` + "\n")
	log.WriteString("not JSON at all\n")
	// 100 best-available holds: latencies 1..100 ms, each waiting a tenth of it for a
	// connection and half of it in 7 round trips, 1 ms in Redis.
	for i := 1; i <= 100; i++ {
		d := time.Duration(i) * time.Millisecond
		line(time.Duration(i)*time.Second, "/api/v1/events/5/holds", "best", d, d/10, d/2, 0, time.Millisecond, 7)
	}
	// 3 exact holds, too few for -min 10.
	for i := range 3 {
		line(time.Duration(i)*time.Second, "/api/v1/events/5/holds", "seats", 5*time.Millisecond, 0, 0, 4*time.Millisecond, 0, 0)
	}
	routes, err := summarizeText(log.String(), 10, 0, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].Name != "POST /api/v1/events/:id/holds (best)" || routes[0].N != 100 {
		t.Fatalf("got %+v, want the 100 best-available holds alone", routes)
	}
	r := routes[0]
	// Nearest rank: the p50 of 100 is the 50th, the p99 the 99th.
	if r.P50 != 50 || r.P95 != 95 || r.P99 != 99 {
		t.Errorf("p50/p95/p99: got %v/%v/%v ms, want 50/95/99", r.P50, r.P95, r.P99)
	}
	// The slowest 1 % is the 100 ms hold: 10 waiting, 50 in round trips, 1 in Redis, 39 its own.
	top := r.Top
	if !near(top.Latency, 100) || !near(top.Wait, 10) || !near(top.DB, 50) || !near(top.Redis, 1) || !near(top.Rest, 39) || top.Trips != 7 {
		t.Errorf("slowest 1 %%: got %+v, want latency 100, wait 10, db 50, redis 1, rest 39, 7 trips", top)
	}
	// The middle: the 46th to 55th ms holds, 50.5 ms on average.
	if !near(r.Middle.Latency, 50.5) || !near(r.Middle.Rest, 50.5-5.05-25.25-1) {
		t.Errorf("middle: got %+v, want latency 50.5 and the rest of it after wait, db and redis", r.Middle)
	}

	// A window: the requests logged from 10 s to 20 s after the first request line
	// (the first best-available hold's, at 1 s).
	routes, err = summarizeText(log.String(), 1, 10, 20, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].N != 10 || routes[0].P50 != 15 {
		t.Errorf("window 10-20 s: got %+v, want the 10 holds of 11-20 ms", routes)
	}
	// Without kinds the 3 exact holds join the 100 others.
	routes, err = summarizeText(log.String(), 10, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].Name != "POST /api/v1/events/:id/holds" || routes[0].N != 103 {
		t.Errorf("without kinds: got %+v, want the 103 holds as one route", routes)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func summarizeText(log string, minN int, after, before float64, kinds bool) ([]route, error) {
	es, err := readLog(strings.NewReader(log), after, before)
	if err != nil {
		return nil, err
	}
	return summarize(es, minN, kinds), nil
}

// TestPhases: a request is placed in the tenth of the second it started in (its line
// is written as it ends), and the slowest are counted where they started.
func TestPhases(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var es []entry
	add := func(start time.Duration, latency time.Duration, uri string) {
		es = append(es, entry{Time: t0.Add(start + latency), Msg: "request", Method: "POST", URI: uri, Latency: int64(latency)})
	}
	// 1,000 holds a second apart, 5 ms each, starting at .05 s; every tenth of them
	// starts at .85 s instead and takes 95 ms, its line written in the next second.
	for i := range 1000 {
		at := time.Duration(i)*time.Second + 50*time.Millisecond
		if i%10 == 0 {
			add(at+800*time.Millisecond, 95*time.Millisecond, "/api/v1/events/5/holds")
			continue
		}
		add(at, 5*time.Millisecond, "/api/v1/events/5/holds")
	}
	add(0, time.Second, "/api/v1/orders/9") // another route: not counted
	holds := "POST /api/v1/events/:id/holds"
	p := phasesOf(holds, byRoute(es, true)[holds])
	if p.N[0] != 900 || p.N[8] != 100 || p.N[9] != 0 {
		t.Errorf("started by tenth: %v, want 900 in the first and 100 in the ninth", p.N)
	}
	// The p99 of 900 × 5 ms and 100 × 95 ms is 95 ms: none is slower than it.
	if p.P99 != 95 || p.Slower != [10]int{} {
		t.Errorf("p99 %v, slower %v: want 95 ms and none", p.P99, p.Slower)
	}
	// Make 5 of the slow ones slower still: they, alone, are past the p99.
	for i := range 5 {
		es[i*10].Latency = int64(200 * time.Millisecond)
		es[i*10].Time = es[i*10].Time.Add(105 * time.Millisecond)
	}
	p = phasesOf(holds, byRoute(es, true)[holds])
	if p.P99 != 95 || p.Slower[8] != 5 || p.Slower[0] != 0 || p.N[8] != 100 {
		t.Errorf("p99 %v, slower by tenth %v (started %v): want 95 ms and the 5 in the ninth", p.P99, p.Slower, p.N)
	}
	var out strings.Builder
	writePhases(&out, p)
	if !strings.Contains(out.String(), "0.8-0.9 s    100    5.00%") {
		t.Errorf("the table does not show the ninth tenth's share:\n%s", out.String())
	}
}

// TestSeconds: a route's requests are counted in the second (after the log's first
// request) they ended in, and those slower than its p99 where they fell: here 1,000
// quick holds over ten seconds and 5 slow ones, all in the seventh.
func TestSeconds(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	var es []entry
	add := func(end, latency time.Duration, uri string) {
		es = append(es, entry{Time: t0.Add(end), Msg: "request", Method: "POST", URI: uri, Latency: int64(latency)})
	}
	add(0, time.Millisecond, "/api/v1/orders/9") // the log's first request: the origin
	for i := range 1000 {
		add(time.Duration(i)*10*time.Millisecond+5*time.Millisecond, 4*time.Millisecond, "/api/v1/events/5/holds")
	}
	for i := range 5 {
		add(7*time.Second+time.Duration(i)*time.Millisecond, time.Duration(300+i)*time.Millisecond, "/api/v1/events/5/holds")
	}
	holds := "POST /api/v1/events/:id/holds"
	s := secondsOf(holds, byRoute(es, true)[holds], es[0].Time)
	if len(s.Rows) != 10 || s.Rows[0].At != 0 || s.Rows[9].At != 9 || s.P99 != 4 {
		t.Fatalf("p99 %v ms, rows %+v: want 4 ms, the seconds 0 to 9", s.P99, s.Rows)
	}
	if r := s.Rows[7]; r.N != 105 || r.Max != 304 || r.Slower != 5 || r.P50 != 4 {
		t.Errorf("the seventh second: %+v; want 105 holds, max 304 ms, p50 4 ms, 5 slower than the p99", r)
	}
	for _, r := range s.Rows {
		if r.At != 7 && (r.Slower != 0 || r.N != 100 || r.Max != 4) {
			t.Errorf("second %d: %+v, want 100 quick holds", r.At, r)
		}
	}
	var out strings.Builder
	writeSeconds(&out, s)
	if !strings.Contains(out.String(), "the 5 slower than the p99 ended in 7 s (5)") {
		t.Errorf("the table does not say where the slowest fell:\n%s", out.String())
	}
}
