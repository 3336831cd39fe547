package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
)

// holdsBench is `bench holds`: exact one-seat holds through POST
// /api/v1/events/{id}/holds, against pgbench running the same conditional UPDATE on
// an event of its own; with -decompose also what the server sends PostgreSQL for a
// hold, run by pgbench.
type holdsBench struct{}

func (holdsBench) flags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.seats, "seats", 50000, "seats of the API's event (sections of 50 rows of 50)")
	fs.IntVar(&o.pgSeats, "pgbench-seats", 250000, "seats of pgbench's events: enough that its clients' walks (warm-up and measured) never run out at ~15,000 claims/s")
	fs.BoolVar(&o.decompose, "decompose", false, "also run, with pgbench, the SQL the server sends for an exact hold")
	pgbenchFlags(fs, o)
}

func (holdsBench) check(o options) []error {
	errs := checkPgbench(o)
	if o.seats < 100 || o.pgSeats < 100 {
		errs = append(errs, errors.New("-seats, -pgbench-seats: want at least 100"))
	}
	return errs
}

func (holdsBench) describe(o options) string {
	return fmt.Sprintf("events of %s seats (pgbench's: %s)", benchkit.Thousands(o.seats), benchkit.Thousands(o.pgSeats))
}

func (holdsBench) sessions(o options) int { return o.seats/exactKind.seatsPerSession() + o.clients + 1 }

func (holdsBench) prepare(ctx context.Context, srv *server, o options) ([]event, roundFunc, error) {
	slugs, seats := []string{"bench-api", "bench-pgbench"}, []int{o.seats, o.pgSeats}
	if o.decompose {
		for range decomposeSpecs {
			slugs, seats = append(slugs, "bench-sql"), append(seats, o.pgSeats)
		}
	}
	evs, err := srv.newEvents(ctx, slugs, seats...)
	if err != nil {
		return nil, nil, err
	}
	return evs, func(ctx context.Context, r *runner, tag string) error {
		return measureHolds(ctx, r, tag, evs[0], evs[1], evs[2:])
	}, nil
}

func measureHolds(ctx context.Context, r *runner, tag string, apiEv, pgEv event, decomposed []event) error {
	step(fmt.Sprintf("holds: exact one-seat holds on event %d", apiEv.ID))
	api, err := measureAPI(ctx, r, apiEv, exactKind, "API exact one-seat holds", profileName("holds", tag))
	if err != nil {
		return err
	}
	step(fmt.Sprintf("holds: pgbench, the same conditional UPDATE on event %d", pgEv.ID))
	pg, err := measurePgbench(ctx, r, pgEv, claimSpec)
	if err != nil {
		return err
	}
	rp := r.rep
	rp.compare(tag, api, pg, "ratio API / pgbench", api.rate()/pg.TPS, pg.TPS > 0, "goal ≥ 0.5")
	// tps counts every attempt, holds/s only the successes: like for like too.
	if pg.Transactions > 0 {
		claims := pg.TPS * float64(pg.Claimed) / float64(pg.Transactions)
		rp.row("ratio like for like"+tag, fmt.Sprintf("%.2f", api.rate()/claims),
			fmt.Sprintf("holds/s ÷ pgbench claims/s (%s); attempts %.2f (%s/s ÷ %s/s)", benchkit.Thousands(int(claims)),
				api.attempts()/pg.TPS, benchkit.Thousands(int(api.attempts())), benchkit.Thousands(int(pg.TPS))), "", "", "")
	}
	for i, ev := range decomposed {
		spec := decomposeSpecs[i]
		step(fmt.Sprintf("holds: %s on event %d", spec.Name, ev.ID))
		p, err := measurePgbench(ctx, r, ev, spec)
		if err != nil {
			return err
		}
		p.row(rp, tag)
		if p.TPS > 0 {
			rp.row(fmt.Sprintf("ratio API / %s%s", strings.TrimPrefix(p.Name, "pgbench, "), tag), fmt.Sprintf("%.2f", api.rate()/p.TPS), "", "", "", "")
		}
		rp.measured(tag, p)
	}
	return nil
}

// measureAPI runs holds of kind on ev through the API, asking the planner before and
// after how it would claim one of the event's seats: statistics that predate an
// event make it read the whole event.
func measureAPI(ctx context.Context, r *runner, ev event, kind holdKind, name, profile string) (*apiResult, error) {
	before, err := r.srv.checkPlan(ctx, ev)
	if err != nil {
		return nil, err
	}
	res, err := runAPI(ctx, r.srv, r.cl, r.sessions, ev, kind, r.o, profile)
	if err != nil {
		return nil, err
	}
	after, err := r.srv.checkPlan(ctx, ev)
	res.Name, res.Plans = name, planNote(before, after)
	return res, err
}

// measurePgbench runs spec on ev with pgbench, asking the planner before and after
// as measureAPI does.
func measurePgbench(ctx context.Context, r *runner, ev event, spec pgbenchSpec) (*pgbenchResult, error) {
	before, err := r.srv.checkPlan(ctx, ev)
	if err != nil {
		return nil, err
	}
	res, err := runPgbench(ctx, r.srv, ev, r.o, spec)
	if err != nil {
		return nil, err
	}
	after, err := r.srv.checkPlan(ctx, ev)
	res.Plans = planNote(before, after)
	return &res, err
}

func (p *pgbenchResult) row(rp *report, tag string) {
	rp.row(p.Name+tag, rate(p.TPS, "tx/s"), benchkit.Share(p.Transactions-int64(p.Claimed), p.Transactions)+" seat taken",
		pctf(p.FillAfter), fmt.Sprintf("%.1f ms mean", p.LatencyMS), p.Plans)
}

func (p *pgbenchResult) cpuUse() (string, benchkit.CPUUse) { return p.Name, p.CPU }

func (p *pgbenchResult) details(b *strings.Builder) {
	fmt.Fprintf(b, "%s: %s transactions in %d s, %s claimed a seat; `%s`\n\n",
		p.Name, benchkit.Thousands(p.Transactions), p.Seconds, benchkit.Thousands(p.Claimed), p.Command)
}

// apiResult is one measurement of holds through the API.
type apiResult struct {
	Name         string // the measurement's row
	Kind         string
	EventSeats   int
	SetupHeld    int
	Window       time.Duration
	Requests     int64             // answers inside the window
	OK           int64             // 201
	Refused      map[string]int64  // every other answer by "status code"
	Samples      map[string]string // the first body of each
	Plans        string            // the planner check before (and after) the measurement
	Errors       int64
	FirstError   string
	SessionsMade int64 // sessions created inside the run, the ones made before having run out
	P50, P99     time.Duration
	FillAfter    float64
	Mismatch     string
	CPU          benchkit.CPUUse
	Queries      *queryReport
}

func (r *apiResult) rate() float64 { return float64(r.OK) / r.Window.Seconds() }

// attempts is the answers per second, whatever they said.
func (r *apiResult) attempts() float64 { return float64(r.Requests) / r.Window.Seconds() }

func (r *apiResult) row(rp *report, tag string) {
	rp.row(r.Name+tag, rate(r.rate(), "holds/s"), r.refusedCell(), pctf(r.FillAfter), latency(r.P50, r.P99), r.Plans)
}

func (r *apiResult) cpuUse() (string, benchkit.CPUUse) { return r.Name, r.CPU }

// refusedCell shares the answers other than 201 out, the most frequent first.
func (r *apiResult) refusedCell() string {
	if len(r.Refused) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range r.refusedKeys() {
		_, code, _ := strings.Cut(k, " ")
		parts = append(parts, benchkit.Share(r.Refused[k], r.Requests)+" "+code)
	}
	return strings.Join(parts, ", ")
}

func (r *apiResult) refusedKeys() []string {
	keys := slices.Collect(maps.Keys(r.Refused))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(r.Refused[b], r.Refused[a]), cmp.Compare(a, b)) })
	return keys
}

// details lists the measurement's answers and, with -queries, its round trips.
func (r *apiResult) details(b *strings.Builder) {
	fmt.Fprintf(b, "%s", r.Kind)
	if r.SetupHeld > 0 {
		fmt.Fprintf(b, " (%s held before)", benchkit.Thousands(r.SetupHeld))
	}
	fmt.Fprintf(b, ": %s answers in %s: %s × 201", benchkit.Thousands(r.Requests), r.Window, benchkit.Thousands(r.OK))
	for _, k := range r.refusedKeys() {
		fmt.Fprintf(b, ", %s × %s", benchkit.Thousands(r.Refused[k]), k)
	}
	fmt.Fprintf(b, ", %s transport errors", benchkit.Thousands(r.Errors))
	if r.FirstError != "" {
		fmt.Fprintf(b, " (first: %s)", r.FirstError)
	}
	if r.SessionsMade > 0 {
		fmt.Fprintf(b, "; %s sessions had to be created during the run", benchkit.Thousands(r.SessionsMade))
	}
	b.WriteString(".\n")
	for _, k := range r.refusedKeys() {
		if !strings.HasSuffix(k, " seat_unavailable") {
			fmt.Fprintf(b, "First %s answer: `%s`\n", k, r.Samples[k])
		}
	}
	if r.Mismatch != "" {
		fmt.Fprintf(b, "**Check failed: %s.**\n", r.Mismatch)
	}
	if r.Queries != nil && r.Requests > 0 {
		r.Queries.write(b, float64(r.Requests), "request")
	}
	b.WriteString("\n")
}
