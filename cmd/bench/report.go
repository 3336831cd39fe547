package main

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// apiResult is one measurement through the API.
type apiResult struct {
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
	CPU          cpuUse
	Queries      *queryReport
}

func (r *apiResult) rate() float64 { return float64(r.OK) / r.Window.Seconds() }

// attempts is the answers per second, whatever they said.
func (r *apiResult) attempts() float64 { return float64(r.Requests) / r.Window.Seconds() }

// refusedCell shares the answers other than 201 out, the most frequent first.
func (r *apiResult) refusedCell() string {
	if len(r.Refused) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range r.refusedKeys() {
		_, code, _ := strings.Cut(k, " ")
		parts = append(parts, pct(r.Refused[k], r.Requests)+" "+code)
	}
	return strings.Join(parts, ", ")
}

func (r *apiResult) refusedKeys() []string {
	keys := slices.Collect(maps.Keys(r.Refused))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(r.Refused[b], r.Refused[a]), cmp.Compare(a, b)) })
	return keys
}

// report is everything one run found, printed as markdown.
type report struct {
	Started, Finished     time.Time
	Command               string
	CPUs                  int
	GoVersion             string
	PGVersion             string
	PgbenchVersion        string
	Revision              string
	LoadBefore, LoadAfter string
	Opts                  options
	Sessions              int
	SessionSetup          time.Duration
	Settled               time.Duration // waited for the statistics to know the events, with -settle
	SettleFailed          bool          // and they did not within the limit

	Rounds []round
}

// round is one pass over the measurements asked for.
type round struct {
	API, BestFresh, BestHeld *apiResult
	Pgbench                  *pgbenchResult
	Decomposed               []*pgbenchResult // -decompose
	ConfirmAPI, ConfirmPg    *confirmResult
	Arrive, ArriveMinimal    *arriveResult
}

func (rd round) arriveRatio() (float64, bool) {
	if rd.Arrive == nil || rd.ArriveMinimal == nil || rd.ArriveMinimal.Arrivals == 0 {
		return 0, false
	}
	return rd.Arrive.rate() / rd.ArriveMinimal.rate(), true
}

func (rd round) confirmRatio() (float64, bool) {
	if rd.ConfirmAPI == nil || rd.ConfirmPg == nil || rd.ConfirmPg.Confirmed <= 0 {
		return 0, false
	}
	return rd.ConfirmAPI.rate() / rd.ConfirmPg.rate(), true
}

func (rd round) apiRatio() (float64, bool) {
	if rd.API == nil || rd.Pgbench == nil || rd.Pgbench.TPS <= 0 {
		return 0, false
	}
	return rd.API.rate() / rd.Pgbench.TPS, true
}

func (rd round) bestRatio() (float64, bool) {
	if rd.BestFresh == nil || rd.BestHeld == nil || rd.BestFresh.OK == 0 {
		return 0, false
	}
	return rd.BestHeld.rate() / rd.BestFresh.rate(), true
}

func (rp *report) markdown() string {
	var b strings.Builder
	o := rp.Opts
	fmt.Fprintf(&b, "## holdbench, %s\n\n", rp.Started.UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- command: `%s`\n", rp.Command)
	fmt.Fprintf(&b, "- machine: %d CPUs (nproc), %s; PostgreSQL %s; %s\n", rp.CPUs, rp.GoVersion, rp.PGVersion, rp.PgbenchVersion)
	fmt.Fprintf(&b, "- code: %s\n", rp.Revision)
	fmt.Fprintf(&b, "- load average (1, 5, 15 min): %s before, %s after\n", rp.LoadBefore, rp.LoadAfter)
	fmt.Fprintf(&b, "- %d clients; %s warm-up, then %s measured, per measurement; server pool %d connections; events of %s seats (pgbench's holds: %s)\n",
		o.clients, o.warmup, o.duration, o.pool, num(o.seats), num(o.pgSeats))
	if rp.Sessions > 0 {
		fmt.Fprintf(&b, "- %s buyer sessions created before timing, in %.1f s (a fresh session every 10 seats)\n",
			num(rp.Sessions), rp.SessionSetup.Seconds())
	}
	if o.settle && rp.SettleFailed {
		fmt.Fprintf(&b, "- -settle: after %.0f s the planner's statistics still did not know every event; measured anyway\n", rp.Settled.Seconds())
	} else if o.settle {
		fmt.Fprintf(&b, "- -settle: waited %.0f s until the planner's statistics knew every event (nothing here runs ANALYZE)\n", rp.Settled.Seconds())
	}
	if o.queries {
		b.WriteString("- -queries: every round trip was traced and counted (costs a little throughput)\n")
	}
	b.WriteString("\n| measurement | rate | refused | event held after | latency p50 / p99 | planner |\n")
	b.WriteString("|---|---:|---|---:|---:|---|\n")
	var apiRatios, bestRatios, confirmRatios, arriveRatios []float64
	for i, rd := range rp.Rounds {
		tag := ""
		if len(rp.Rounds) > 1 {
			tag = fmt.Sprintf(" (%d)", i+1)
		}
		if r := rd.API; r != nil {
			fmt.Fprintf(&b, "| API exact one-seat holds%s | %s holds/s | %s | %s | %s | %s |\n",
				tag, num(int(r.rate())), r.refusedCell(), pctf(r.FillAfter), lat(r), r.Plans)
		}
		pgRow := func(p *pgbenchResult) {
			fmt.Fprintf(&b, "| %s%s | %s tx/s | %s seat taken | %s | %.1f ms mean | %s |\n",
				p.Name, tag, num(int(p.TPS)), pct(p.Transactions-int64(p.Claimed), p.Transactions), pctf(p.FillAfter), p.LatencyMS, p.Plans)
		}
		if rd.Pgbench != nil {
			pgRow(rd.Pgbench)
		}
		if v, ok := rd.apiRatio(); ok {
			apiRatios = append(apiRatios, v)
			fmt.Fprintf(&b, "| **ratio API / pgbench%s** | **%.2f** | goal ≥ 0.5 | | | |\n", tag, v)
			// tps counts every attempt, holds/s only the successes: like for like too.
			p, r := rd.Pgbench, rd.API
			if p.Transactions > 0 {
				claims := p.TPS * float64(p.Claimed) / float64(p.Transactions)
				fmt.Fprintf(&b, "| ratio like for like%s | %.2f | holds/s ÷ pgbench claims/s (%s); attempts %.2f (%s/s ÷ %s/s) | | | |\n",
					tag, r.rate()/claims, num(int(claims)), r.attempts()/p.TPS, num(int(r.attempts())), num(int(p.TPS)))
			}
		}
		for _, p := range rd.Decomposed {
			pgRow(p)
		}
		for _, p := range rd.Decomposed {
			if rd.API != nil && p.TPS > 0 {
				fmt.Fprintf(&b, "| ratio API / %s%s | %.2f | | | | |\n", strings.TrimPrefix(p.Name, "pgbench, "), tag, rd.API.rate()/p.TPS)
			}
		}
		for _, r := range []*confirmResult{rd.ConfirmAPI, rd.ConfirmPg} {
			if r != nil {
				fmt.Fprintf(&b, "| %s%s | %s confirmed/s | %s | of %s orders%s | %s | |\n",
					r.Name, tag, num(int(r.rate())), r.refusedCell(), num(r.Orders), ranOut(r.RanOut), r.latency())
			}
		}
		if v, ok := rd.confirmRatio(); ok {
			confirmRatios = append(confirmRatios, v)
			fmt.Fprintf(&b, "| **ratio confirm API / pgbench%s** | **%.2f** | | | | |\n", tag, v)
		}
		if r := rd.BestFresh; r != nil {
			fmt.Fprintf(&b, "| API best available 4, fresh event%s | %s holds/s | %s | %s | %s | %s |\n",
				tag, num(int(r.rate())), r.refusedCell(), pctf(r.FillAfter), lat(r), r.Plans)
		}
		if r := rd.BestHeld; r != nil {
			fmt.Fprintf(&b, "| API best available 4, %s cheapest held%s | %s holds/s | %s | %s | %s | %s |\n",
				num(r.SetupHeld), tag, num(int(r.rate())), r.refusedCell(), pctf(r.FillAfter), lat(r), r.Plans)
		}
		if v, ok := rd.bestRatio(); ok {
			bestRatios = append(bestRatios, v)
			fmt.Fprintf(&b, "| **ratio held / fresh%s** | **%.2f** | goal ≥ 0.5 | | | |\n", tag, v)
		}
		for _, r := range []*arriveResult{rd.Arrive, rd.ArriveMinimal} {
			if r != nil {
				fmt.Fprintf(&b, "| %s%s | %s arrivals/s | %s | | %.1f / %.1f ms | |\n",
					r.Name, tag, num(int(r.rate())), r.refusedCell(), ms(r.P50), ms(r.P99))
			}
		}
		if v, ok := rd.arriveRatio(); ok {
			arriveRatios = append(arriveRatios, v)
			fmt.Fprintf(&b, "| **ratio arrivals API / minimal%s** | **%.2f** | | | | |\n", tag, v)
		}
	}
	if len(apiRatios) > 1 {
		fmt.Fprintf(&b, "| **median ratio API / pgbench** | **%.2f** | of %d rounds | | | |\n", median(apiRatios), len(apiRatios))
	}
	if len(confirmRatios) > 1 {
		fmt.Fprintf(&b, "| **median ratio confirm API / pgbench** | **%.2f** | of %d rounds | | | |\n", median(confirmRatios), len(confirmRatios))
	}
	if len(bestRatios) > 1 {
		fmt.Fprintf(&b, "| **median ratio held / fresh** | **%.2f** | of %d rounds | | | |\n", median(bestRatios), len(bestRatios))
	}
	if len(arriveRatios) > 1 {
		fmt.Fprintf(&b, "| **median ratio arrivals API / minimal** | **%.2f** | of %d rounds | | | |\n", median(arriveRatios), len(arriveRatios))
	}
	b.WriteString("\nWhere the CPU went in each measured window, in cores (2.00 = both cores busy throughout):\n\n")
	b.WriteString("| measurement | machine | holdbench | measured backends | pgbench | PostgreSQL aux | Redis | other PG backends | rest |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, rd := range rp.Rounds {
		tag := ""
		if len(rp.Rounds) > 1 {
			tag = fmt.Sprintf(" (%d)", i+1)
		}
		for _, m := range []struct {
			name string
			ok   bool
			cpu  func() cpuUse
		}{
			{"API exact one-seat holds", rd.API != nil, func() cpuUse { return rd.API.CPU }},
			{"pgbench", rd.Pgbench != nil, func() cpuUse { return rd.Pgbench.CPU }},
			{nameAt(rd.Decomposed, 0), len(rd.Decomposed) > 0, func() cpuUse { return rd.Decomposed[0].CPU }},
			{nameAt(rd.Decomposed, 1), len(rd.Decomposed) > 1, func() cpuUse { return rd.Decomposed[1].CPU }},
			{nameAt(rd.Decomposed, 2), len(rd.Decomposed) > 2, func() cpuUse { return rd.Decomposed[2].CPU }},
			{"API pay + webhook confirm", rd.ConfirmAPI != nil, func() cpuUse { return rd.ConfirmAPI.CPU }},
			{"pgbench, the confirm statements", rd.ConfirmPg != nil, func() cpuUse { return rd.ConfirmPg.CPU }},
			{"API best available 4, fresh", rd.BestFresh != nil, func() cpuUse { return rd.BestFresh.CPU }},
			{"API best available 4, held", rd.BestHeld != nil, func() cpuUse { return rd.BestHeld.CPU }},
			{"API arrivals", rd.Arrive != nil, func() cpuUse { return rd.Arrive.CPU }},
			{"minimal arrivals", rd.ArriveMinimal != nil, func() cpuUse { return rd.ArriveMinimal.CPU }},
		} {
			if m.ok {
				fmt.Fprintf(&b, "| %s%s | %s |\n", m.name, tag, cpuCells(m.cpu()))
			}
		}
	}
	b.WriteString("\nMeasured backends are the server's pool connections (or pgbench's); other PG backends " +
		"are mostly other databases' (tests running alongside); rest is the kernel and everything else.\n\n")
	for i, rd := range rp.Rounds {
		if len(rp.Rounds) > 1 {
			fmt.Fprintf(&b, "Round %d.\n\n", i+1)
		}
		for _, r := range []*apiResult{rd.API, rd.BestFresh, rd.BestHeld} {
			if r != nil {
				r.details(&b)
			}
		}
		for _, r := range []*confirmResult{rd.ConfirmAPI, rd.ConfirmPg} {
			if r != nil {
				r.details(&b)
			}
		}
		for _, r := range []*arriveResult{rd.Arrive, rd.ArriveMinimal} {
			if r != nil {
				r.details(&b)
			}
		}
		for _, p := range append([]*pgbenchResult{rd.Pgbench}, rd.Decomposed...) {
			if p == nil {
				continue
			}
			fmt.Fprintf(&b, "%s: %s transactions in %d s, %s claimed a seat; `%s`\n\n",
				p.Name, num(int(p.Transactions)), p.Seconds, num(p.Claimed), p.Command)
		}
	}
	fmt.Fprintf(&b, "Finished in %.0f s.\n", rp.Finished.Sub(rp.Started).Seconds())
	return b.String()
}

func ranOut(r bool) string {
	if r {
		return ", **all paid before the window ended**"
	}
	return ""
}

func (r *confirmResult) refusedCell() string { return countsCell(r.Refused, r.Errors) }

// countsCell lists refused answers by count and the transport errors: "none" if
// neither.
func countsCell(refused map[string]int64, errors int64) string {
	if len(refused) == 0 && errors == 0 {
		return "none"
	}
	var parts []string
	for k, v := range refused {
		parts = append(parts, fmt.Sprintf("%s × %s", num(int(v)), k))
	}
	slices.Sort(parts)
	if errors > 0 {
		parts = append(parts, fmt.Sprintf("%s transport errors", num(int(errors))))
	}
	return strings.Join(parts, ", ")
}

func (r *confirmResult) latency() string {
	if r.LatencyMS > 0 {
		return fmt.Sprintf("%.1f ms mean", r.LatencyMS)
	}
	return fmt.Sprintf("pay answered %.1f / %.1f ms", ms(r.P50), ms(r.P99))
}

func (r *confirmResult) details(b *strings.Builder) {
	fmt.Fprintf(b, "%s: %s confirmed in %.0f s, %s attempts answered in the window", r.Name, num(int(r.Confirmed)), r.Seconds, num(int(r.Attempts)))
	if r.FirstError != "" {
		fmt.Fprintf(b, " (first error: %s)", r.FirstError)
	}
	if r.Command != "" {
		fmt.Fprintf(b, "; `%s`", r.Command)
	}
	b.WriteString(".\n")
	if r.Check != "" {
		fmt.Fprintf(b, "**Check failed: %s.**\n", r.Check)
	}
	if r.Queries != nil && r.Confirmed > 0 {
		// The pay call and the webhook that confirms are two requests: per order is
		// the unit that compares with pgbench's one transaction.
		r.Queries.write(b, float64(r.Confirmed), "confirmed order")
	}
	b.WriteString("\n")
}

func nameAt(ps []*pgbenchResult, i int) string {
	if i < len(ps) {
		return ps[i].Name
	}
	return ""
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// details lists one API measurement's answers and, with -queries, its round trips.
func (r *apiResult) details(b *strings.Builder) {
	fmt.Fprintf(b, "%s", r.Kind)
	if r.SetupHeld > 0 {
		fmt.Fprintf(b, " (%s held before)", num(r.SetupHeld))
	}
	fmt.Fprintf(b, ": %s answers in %s: %s × 201", num(int(r.Requests)), r.Window, num(int(r.OK)))
	for _, k := range r.refusedKeys() {
		fmt.Fprintf(b, ", %s × %s", num(int(r.Refused[k])), k)
	}
	fmt.Fprintf(b, ", %s transport errors", num(int(r.Errors)))
	if r.FirstError != "" {
		fmt.Fprintf(b, " (first: %s)", r.FirstError)
	}
	if r.SessionsMade > 0 {
		fmt.Fprintf(b, "; %s sessions had to be created during the run", num(int(r.SessionsMade)))
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

// write lists the round trips of a window, per unit (a request, a confirmed order).
func (q *queryReport) write(b *strings.Builder, n float64, unit string) {
	pg, rds, pgTime := q.roundTrips()
	fmt.Fprintf(b, "\nRound trips per %s: %.2f to PostgreSQL (their latencies add up to %.2f ms), %.2f to Redis.\n\n",
		unit, float64(pg)/n, float64(pgTime.Microseconds())/1000/n, float64(rds)/n)
	fmt.Fprintf(b, "| round trip | per %s | mean ms |\n|---|---:|---:|\n", unit)
	for _, op := range q.Ops {
		mean := "–" // statements inside a batch have no time of their own
		if op.Total > 0 {
			mean = fmt.Sprintf("%.3f", float64(op.Total.Microseconds())/1000/float64(op.N))
		}
		fmt.Fprintf(b, "| %s | %.2f | %s |\n", op.Name, float64(op.N)/n, mean)
	}
}

func lat(r *apiResult) string {
	return fmt.Sprintf("%.1f / %.1f ms", ms(r.P50), ms(r.P99))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func cpuCells(c cpuUse) string {
	if !c.OK {
		return "n/a | | | | | | | "
	}
	return fmt.Sprintf("%.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f",
		c.Machine, c.Process, c.Backends, c.Pgbench, c.PGAux, c.Redis, c.OtherPG, c.Rest())
}

func pct(part, whole int64) string {
	if whole <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(part)/float64(whole))
}

func pctf(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }

// num writes n with thousands separators: 12,345.
func num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func (r *arriveResult) refusedCell() string {
	cell := countsCell(r.Refused, r.Errors)
	if r.FirstError != "" {
		cell += " (first: " + r.FirstError + ")"
	}
	return cell
}

// millionAMinute is the arrival rate of a million people in one minute.
const millionAMinute = 1e6 / 60

// details says what an arrival costs the machine, and what a million arrivals in a
// minute would ask of instances like this one.
func (r *arriveResult) details(b *strings.Builder) {
	if r.Arrivals == 0 || !r.CPU.OK {
		return
	}
	per := r.CPU.Machine / r.rate() * 1000
	fmt.Fprintf(b, "%s: %s arrivals in %.0f s, %.2f ms of the machine's CPU each (holdbench, its clients included, %.2f ms; PostgreSQL's backends %.2f ms; Redis %.2f ms); "+
		"a million in a minute (%s a second) is %.1f times this rate.\n\n",
		r.Name, num(int(r.Arrivals)), r.Window.Seconds(), per,
		r.CPU.Process/r.rate()*1000, r.CPU.Backends/r.rate()*1000, r.CPU.Redis/r.rate()*1000,
		num(int(math.Round(millionAMinute))), millionAMinute/r.rate())
	if r.Queries != nil {
		r.Queries.write(b, float64(r.Arrivals), "arrival")
		b.WriteString("\n")
	}
}
