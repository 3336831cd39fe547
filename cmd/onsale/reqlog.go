package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
)

// entry is one request's log line: what its handler's tally (package iowait) adds.
type entry struct {
	Time    time.Time `json:"time"`
	Msg     string    `json:"msg"`
	Method  string    `json:"method"`
	URI     string    `json:"uri"`
	Status  int       `json:"status"`
	Latency int64     `json:"latency"` // nanoseconds, as slog writes a time.Duration
	Hold    string    `json:"hold"`
	Wait    int64     `json:"db_wait"`
	DB      int64     `json:"db"`
	Trips   int       `json:"db_trips"`
	Batched int64     `json:"db_batched"`
	Redis   int64     `json:"redis"`
}

// spentOn is where a group of requests' time went, in milliseconds on average.
type spentOn struct {
	Latency, Wait, DB, Batched, Redis, Rest float64
	Trips                                   float64
}

type route struct {
	Name          string
	N             int
	P50, P95, P99 float64 // ms
	Middle, Top   spentOn // the 45th-55th percentile; the slowest 1 %
}

// runReqlog is `onsale reqlog`: it reads boxoffice's JSON request log (LOG_FORMAT=json)
// and says, for each route, how long its requests took and where the time went: the
// wait for a pooled PostgreSQL connection (db_wait), the PostgreSQL round trips (db,
// db_trips), an exact hold's or a session write's batched statement (db_batched), Redis
// (redis), and the rest (the request's own work and its waits for a CPU). It compares
// the middle of each route's requests (the 45th to 55th percentile by latency) with its
// slowest 1 %, which is where a p99 goal is met or missed:
//
//	onsale reqlog .data/onsale-server.log
//
// Routes are the paths with their numeric segments and hold ids made ":id"; a hold
// is split by its kind (seats, best, standing; -kinds=false for all holds as one
// route). -min leaves out routes with fewer requests; -after and -before keep the
// requests logged from and before that many seconds after the log's first request
// line. -phase ROUTE shows instead when in the second that route's requests started
// and which of those moments its slowest requests started in; -seconds ROUTE, that
// route second by second, and which seconds its slowest 1 % ended in.
func runReqlog(_ context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("onsale", "reqlog", env)
	minN := fs.Int("min", 100, "leave out routes with fewer requests")
	after := fs.Float64("after", 0, "keep requests logged at least this many seconds after the first")
	before := fs.Float64("before", 0, "keep requests logged less than this many seconds after the first (0: all)")
	kinds := fs.Bool("kinds", true, "split holds by their kind (seats, best, standing)")
	phase := fs.String("phase", "", "instead, when in the second the named route's requests started, e.g. 'POST /api/v1/events/:id/holds'")
	perSecond := fs.String("seconds", "", "instead, the named route second by second, and which seconds its slowest 1 % ended in")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: onsale reqlog [-min N] [-after S] [-before S] [-kinds=false] [-phase ROUTE | -seconds ROUTE] [server.log]  (stdin without a file)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	in := env.Stdin
	if fs.NArg() > 0 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	es, err := readLog(in, *after, *before)
	if err != nil {
		return err
	}
	if *phase != "" && *perSecond != "" {
		return fmt.Errorf("-phase and -seconds: one at a time")
	}
	if name := *phase + *perSecond; name != "" {
		mine := byRoute(es, *kinds)[name]
		if len(mine) == 0 {
			return fmt.Errorf("no request of route %q (routes are named as reqlog prints them)", name)
		}
		if *phase != "" {
			writePhases(env.Stdout, phasesOf(name, mine))
		} else {
			writeSeconds(env.Stdout, secondsOf(name, mine, es[0].Time))
		}
		return nil
	}
	writeRoutes(env.Stdout, summarize(es, *minN, *kinds))
	return nil
}

var idSegment = regexp.MustCompile(`/[0-9]+(-[0-9]+)?(/|$)`)

// routeOf names a request's route: the path without its query, ids made ":id", and,
// with kinds, a hold with its kind.
func routeOf(e entry, kinds bool) string {
	path, _, _ := strings.Cut(e.URI, "?")
	for {
		p := idSegment.ReplaceAllString(path, "/:id$2")
		if p == path {
			break
		}
		path = p
	}
	name := e.Method + " " + path
	if kinds && e.Hold != "" {
		name += " (" + e.Hold + ")"
	}
	return name
}

// readLog reads request log lines (other lines are skipped), keeping those logged at
// least after and less than before seconds after the first request line (0: no bound).
func readLog(in io.Reader, after, before float64) ([]entry, error) {
	var es []entry
	var first time.Time
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e entry
		if err := json.Unmarshal(line, &e); err != nil || e.Msg != "request" {
			continue
		}
		if first.IsZero() {
			first = e.Time
		}
		at := e.Time.Sub(first).Seconds()
		if (after > 0 && at < after) || (before > 0 && at >= before) {
			continue
		}
		es = append(es, e)
	}
	return es, sc.Err()
}

// byRoute groups requests by route, each route's sorted by latency, the fastest first.
func byRoute(all []entry, kinds bool) map[string][]entry {
	routes := map[string][]entry{}
	for _, e := range all {
		name := routeOf(e, kinds)
		routes[name] = append(routes[name], e)
	}
	for _, es := range routes {
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.Latency, b.Latency) })
	}
	return routes
}

// percentile is the latency at fraction p of es, sorted by latency, in nanoseconds.
func percentile(es []entry, p float64) int64 { return es[benchkit.Rank(len(es), p)].Latency }

// summarize sums requests up by route, the busiest first.
func summarize(all []entry, minN int, kinds bool) []route {
	var out []route
	for name, es := range byRoute(all, kinds) {
		if len(es) < minN {
			continue
		}
		n := len(es)
		at := func(p float64) float64 { return msOf(percentile(es, p)) }
		out = append(out, route{
			Name: name, N: n, P50: at(0.50), P95: at(0.95), P99: at(0.99),
			Middle: average(es[int(0.45*float64(n)):max(int(0.55*float64(n)), int(0.45*float64(n))+1)]),
			Top:    average(es[min(n-1, int(0.99*float64(n))):]),
		})
	}
	slices.SortFunc(out, func(a, b route) int {
		if a.N != b.N {
			return b.N - a.N
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

func msOf(ns int64) float64 { return float64(ns) / 1e6 }

// average is where es's time went, on average.
func average(es []entry) spentOn {
	var s spentOn
	for _, e := range es {
		s.Latency += msOf(e.Latency)
		s.Wait += msOf(e.Wait)
		s.DB += msOf(e.DB)
		s.Batched += msOf(e.Batched)
		s.Redis += msOf(e.Redis)
		s.Trips += float64(e.Trips)
	}
	n := float64(len(es))
	s.Latency, s.Wait, s.DB, s.Batched, s.Redis, s.Trips = s.Latency/n, s.Wait/n, s.DB/n, s.Batched/n, s.Redis/n, s.Trips/n
	s.Rest = s.Latency - s.Wait - s.DB - s.Batched - s.Redis
	return s
}

func writeRoutes(w io.Writer, routes []route) {
	fmt.Fprintln(w, "latency in ms; the middle (45th-55th percentile) and the slowest 1 % of each route, on average:")
	fmt.Fprintln(w, "latency = db_wait (a pooled connection) + db (round trips) + db_batched + redis + rest (own work, CPU waits)")
	fmt.Fprintln(w, "(a seat call's rate limit and its admission's read go to Redis side by side, both counted in redis: its rest may be below 0)")
	fmt.Fprintf(w, "%-44s %7s %7s %7s %7s | %-40s | %s\n", "route", "n", "p50", "p95", "p99",
		"middle: latency wait db batch redis rest trips", "slowest 1 %: latency wait db batch redis rest trips")
	for _, r := range routes {
		fmt.Fprintf(w, "%-44s %7d %7.1f %7.1f %7.1f | %s | %s\n", r.Name, r.N, r.P50, r.P95, r.P99, cols(r.Middle), cols(r.Top))
	}
}

func cols(s spentOn) string {
	return fmt.Sprintf("%7.1f %5.1f %5.1f %5.1f %5.1f %5.1f %4.1f", s.Latency, s.Wait, s.DB, s.Batched, s.Redis, s.Rest, s.Trips)
}
