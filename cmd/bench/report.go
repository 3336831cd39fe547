package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
)

// report is everything one run found, printed as markdown: the run's circumstances,
// one table of rates and ratios (.ci/bench.sh sums it up), where the CPU went in each
// measured window, and the details.
type report struct {
	Started, Finished     time.Time
	Title, Command        string
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

	notes   []string // the benchmark's own lines of the header
	rows    []string // the table's, in the order measured
	ratios  []ratioSeries
	cpu     []cpuRow
	details strings.Builder
}

// ratioSeries is one ratio's value in each round, for its median.
type ratioSeries struct {
	name   string
	values []float64
}

type cpuRow struct {
	name string
	use  benchkit.CPUUse
}

// row adds a row to the table: its cells, in the table's columns.
func (rp *report) row(cells ...string) {
	rp.rows = append(rp.rows, "| "+strings.Join(cells, " | ")+" |")
}

// ratio adds a ratio's row in bold, with a note (its goal), and keeps it for the
// median of the rounds.
func (rp *report) ratio(name, tag string, v float64, note string) {
	rp.row(fmt.Sprintf("**%s%s**", name, tag), fmt.Sprintf("**%.2f**", v), note, "", "", "")
	for i := range rp.ratios {
		if rp.ratios[i].name == name {
			rp.ratios[i].values = append(rp.ratios[i].values, v)
			return
		}
	}
	rp.ratios = append(rp.ratios, ratioSeries{name, []float64{v}})
}

// side is one side of a comparison, as the report shows it: its row in the table,
// its measured window's CPU, and its details.
type side interface {
	row(rp *report, tag string)
	cpuUse() (name string, use benchkit.CPUUse)
	details(b *strings.Builder)
}

// compare adds a measurement and its ceiling (or the other side it is set against):
// their rows, then ratio v in bold when ok, then their CPU and details.
func (rp *report) compare(tag string, a, b side, ratio string, v float64, ok bool, note string) {
	a.row(rp, tag)
	b.row(rp, tag)
	if ok {
		rp.ratio(ratio, tag, v, note)
	}
	rp.measured(tag, a, b)
}

// measured adds the CPU and details of sides beyond their rows.
func (rp *report) measured(tag string, sides ...side) {
	for _, s := range sides {
		name, use := s.cpuUse()
		rp.cpu = append(rp.cpu, cpuRow{name + tag, use})
		s.details(&rp.details)
	}
}

func (rp *report) markdown() string {
	var b strings.Builder
	rp.header(&b)
	b.WriteString("\n| measurement | rate | refused | event held after | latency p50 / p99 | planner |\n")
	b.WriteString("|---|---:|---|---:|---:|---|\n")
	for _, r := range rp.rows {
		b.WriteString(r + "\n")
	}
	for _, s := range rp.ratios {
		if len(s.values) > 1 {
			fmt.Fprintf(&b, "| **median %s** | **%.2f** | of %d rounds | | | |\n", s.name, benchkit.Median(s.values), len(s.values))
		}
	}
	b.WriteString("\nWhere the CPU went in each measured window, in cores (2.00 = both cores busy throughout):\n\n")
	b.WriteString("| measurement | machine | bench | measured backends | pgbench | PostgreSQL aux | Redis | other PG backends | rest |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range rp.cpu {
		fmt.Fprintf(&b, "| %s | %s |\n", c.name, cpuCells(c.use))
	}
	b.WriteString("\nMeasured backends are the server's pool connections (or pgbench's); other PG backends " +
		"are mostly other databases' (tests running alongside); rest is the kernel and everything else.\n\n")
	b.WriteString(rp.details.String())
	fmt.Fprintf(&b, "Finished in %.0f s.\n", rp.Finished.Sub(rp.Started).Seconds())
	return b.String()
}

// header is the run's circumstances: the command, the machine, the code, the load
// and the settings every measurement shares.
func (rp *report) header(b *strings.Builder) {
	o := rp.Opts
	fmt.Fprintf(b, "## %s, %s\n\n", rp.Title, rp.Started.UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(b, "- command: `%s`\n", rp.Command)
	fmt.Fprintf(b, "- machine: %d CPUs (nproc), %s; PostgreSQL %s; %s\n", rp.CPUs, rp.GoVersion, rp.PGVersion, rp.PgbenchVersion)
	fmt.Fprintf(b, "- code: %s\n", rp.Revision)
	fmt.Fprintf(b, "- load average (1, 5, 15 min): %s before, %s after\n", rp.LoadBefore, rp.LoadAfter)
	fmt.Fprintf(b, "- %d clients; %s warm-up, then %s measured, per measurement; server pool %d connections\n",
		o.clients, o.warmup, o.duration, o.pool)
	for _, n := range rp.notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
	if rp.Sessions > 0 {
		fmt.Fprintf(b, "- %s buyer sessions created before timing, in %.1f s (a fresh session every 10 seats)\n",
			benchkit.Thousands(rp.Sessions), rp.SessionSetup.Seconds())
	}
	if o.settle && rp.SettleFailed {
		fmt.Fprintf(b, "- -settle: after %.0f s the planner's statistics still did not know every event; measured anyway\n", rp.Settled.Seconds())
	} else if o.settle && rp.Settled > 0 {
		fmt.Fprintf(b, "- -settle: waited %.0f s until the planner's statistics knew every event (nothing here runs ANALYZE)\n", rp.Settled.Seconds())
	}
	if o.queries {
		b.WriteString("- -queries: every round trip was traced and counted (costs a little throughput)\n")
	}
}

// countsCell lists refused answers by count and the transport errors: "none" if
// neither.
func countsCell(refused map[string]int64, errors int64) string {
	if len(refused) == 0 && errors == 0 {
		return "none"
	}
	var parts []string
	for k, v := range refused {
		parts = append(parts, fmt.Sprintf("%s × %s", benchkit.Thousands(v), k))
	}
	slices.Sort(parts)
	if errors > 0 {
		parts = append(parts, fmt.Sprintf("%s transport errors", benchkit.Thousands(errors)))
	}
	return strings.Join(parts, ", ")
}

// write lists the round trips of a window, per unit (a request, a confirmed order).
func (q *queryReport) write(b *strings.Builder, n float64, unit string) {
	pg, rds, pgTime := q.roundTrips()
	fmt.Fprintf(b, "\nRound trips per %s: %.2f to PostgreSQL (their latencies add up to %.2f ms), %.2f to Redis.\n\n",
		unit, float64(pg)/n, benchkit.Ms(pgTime)/n, float64(rds)/n)
	fmt.Fprintf(b, "| round trip | per %s | mean ms |\n|---|---:|---:|\n", unit)
	for _, op := range q.Ops {
		mean := "–" // statements inside a batch have no time of their own
		if op.Total > 0 {
			mean = fmt.Sprintf("%.3f", benchkit.Ms(op.Total)/float64(op.N))
		}
		fmt.Fprintf(b, "| %s | %.2f | %s |\n", op.Name, float64(op.N)/n, mean)
	}
}

// latency is a latency cell: p50 / p99.
func latency(p50, p99 time.Duration) string {
	return fmt.Sprintf("%.1f / %.1f ms", benchkit.Ms(p50), benchkit.Ms(p99))
}

func cpuCells(c benchkit.CPUUse) string {
	if !c.OK {
		return "n/a | | | | | | | "
	}
	return fmt.Sprintf("%.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f",
		c.Machine, c.Process, c.Backends, c.Child, c.PGAux, c.Redis, c.OtherPG, c.Rest())
}

func pctf(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }

// rate is a rate cell: the whole number per second, with its unit.
func rate(perSecond float64, unit string) string {
	return benchkit.Thousands(int(perSecond)) + " " + unit
}
