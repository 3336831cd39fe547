package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
)

// writeText writes the report for people.
func (r *report) writeText(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	r.writeSale(p)
	r.writeQueue(p)
	r.writePricing(p)
	r.writeVerdict(p)
}

// printf prints one line of the report.
type printf func(format string, a ...any)

// writeSale writes the sale's headline, outcomes, counts, rates and latencies.
func (r *report) writeSale(p printf) {
	p("onsale of %q (event %d): %d seats and %d standing places, %d buyers (seed %d)",
		r.Event.Slug, r.Event.ID, r.Event.Seats, r.Event.Places, r.Buyers, r.Seed)
	if r.SoldOutSeconds != nil {
		all := "never"
		if r.AllSoldSeconds != nil {
			all = fmt.Sprintf("%.1f s", *r.AllSoldSeconds)
		}
		p("sold out %.1f s after the onsale (nothing left to hold); nothing held either: %s", *r.SoldOutSeconds, all)
	} else {
		p("not sold out; the sale ran %.1f s from the onsale", r.SaleSeconds)
	}
	if r.SeatsSoldSeconds != nil {
		p("every seat sold (standing places aside) %.1f s after the onsale", *r.SeatsSoldSeconds)
	}
	p("outcomes:")
	for _, k := range sortedKeys(r.Outcomes) {
		p("  %-26s %7d", k, r.Outcomes[k])
	}
	p("holds %d, hold 409s %d, orders confirmed %d, places sold %d",
		r.Counts.Holds, r.Counts.HoldConflicts, r.Counts.Confirmed, r.Counts.PlacesSold)
	p("per second over the sale (mean / peak): holds %.1f / %d, sales %.1f / %d, hold 409s %.1f / %d",
		r.Rates.Holds.Mean, r.Rates.Holds.Peak, r.Rates.Sales.Mean, r.Rates.Sales.Peak, r.Rates.Conflicts.Mean, r.Rates.Conflicts.Peak)
	p("latency, ms            n      p50      p95      p99      max")
	for _, k := range sortedKeys(r.Latency) {
		d := r.Latency[k]
		p("  %-10s %9d %8.1f %8.1f %8.1f %8.1f", k, d.N, d.P50, d.P95, d.P99, d.Max)
	}
	var waits []string
	for _, k := range sortedKeys(r.ConnWait) {
		waits = append(waits, fmt.Sprintf("%s %.1f / %.1f", k, r.ConnWait[k].P95, r.ConnWait[k].P99))
	}
	if len(waits) > 0 {
		p("  of which waiting for one of the simulator's own connections, p95 / p99: %s", strings.Join(waits, ", "))
	}
}

// writeQueue writes the queue's waits and ETAs, the admissions and their fairness,
// and the machine's speed.
func (r *report) writeQueue(p printf) {
	q := r.QueueWait
	p("queue wait from the onsale or arrival, s: n %d, p50 %.1f, p90 %.1f, p99 %.1f, max %.1f", q.N, q.P50, q.P90, q.P99, q.Max)
	for _, e := range []struct {
		what   string
		f      etaFit
		soldBy bool // a line of the split at the sell-out
	}{{"first ETA each buyer saw after the draw", r.ETA.First, false}, {"  of the pre-queue, at the draw", r.ETA.FirstPreQueue, false},
		{"  of those who came after the onsale", r.ETA.FirstArrived, false},
		{"  of those whose turn it showed before the sell-out", r.ETA.FirstTurnBeforeSellOut, true},
		{"  of those whose turn it showed after the sell-out (in as holds lapsed)", r.ETA.FirstTurnAfterSellOut, true},
		{"every ETA shown", r.ETA.Every, false}} {
		if e.soldBy && r.SoldOutSeconds == nil {
			continue // nothing sold out
		}
		p("%s, against the wait that followed: %d, %.0f%% within ±20%% (median error %.0f%%; %.0f%% too short, %.0f%% too long); of %d followed by 30 s or more, %.0f%%",
			e.what, e.f.N, 100*e.f.Within20, 100*e.f.MedianErr, 100*e.f.Short, 100*e.f.Long, e.f.N30, 100*e.f.Within2030)
	}
	if w := r.ETA.Warned; w.Buyers > 0 {
		p("told the tickets may be gone before their turn (more ahead than the unsold places are likely to serve), instead of a wait: %d buyers; %d before any wait was shown them, of whom %d were let in all the same and %d bought",
			w.Buyers, w.First, w.Admitted, w.Bought)
	}
	a := r.Admission
	p("admission: %d admitted, %.1f/s from the first to the last (busiest 30 s: %.1f/s, seen up to a poll late), configured %.1f/s; at most %d shopping at once (slots %d)",
		a.Admitted, a.Achieved, a.Peak30s, a.Configured, a.MaxShopping, a.Slots)
	if a.BySellOut > 0 {
		p("the sell-out's floor at the configured rate: %.1f s after the onsale, had the %d buyers admitted by the sell-out come at %.1f/s from the first admission (how many it took is the crowd's, not the server's)",
			a.FloorSeconds, a.BySellOut, a.Configured)
	}
	if l := a.Limit; l != nil {
		p("the server's admission limit over the sale (lowered while past its LATENCY_BOUND): mean %.1f/s, from %.1f to %.1f/s, below the configured rate %.0f%% of the time",
			l.Mean, l.Min, l.Max, 100*l.Below)
	}
	if sp := r.Speed; sp != nil {
		p("the machine's speed over the sale: gzip of 128 KB took %.1f / %.1f / %.1f ms of CPU at p10 / p50 / p90 of its seconds; over %.1f × p10 (two thirds of its fast seconds' speed or slower) %.0f%% of the time",
			sp.P10, sp.P50, sp.P90, slowFactor, 100*sp.Slow)
	}
	p("fairness (Spearman's rho of arrival and admission): after the onsale %.3f over %d buyers (1 is first come, first served); pre-queue %.3f over %d (near 0 is a fair draw)",
		r.Fairness.Rho, r.Fairness.AfterOnsale, r.Fairness.RhoPreQueue, r.Fairness.PreQueue)
	if l := r.Lapses; l != nil {
		p("turns unused: %d buyers walked away once admitted; the server let %.0f turns lapse with no seat held and gave %.0f of their slots to the next in line",
			l.Walked, l.Lapsed, l.Reused)
	}
	if k := r.Basket; k != nil {
		p("basket: %d buyers held a seat, then added seats one by one: %d add calls, %d seats added, add latency p50 %.0f ms, p99 %.0f ms; refused: %s",
			k.Buyers, k.Calls, k.Added, k.Latency.P50, k.Latency.P99, refusals(k.Refused))
	}
}

// writeVerdict writes the normal refusals, the errors, the server's counts and the
// invariants.
func (r *report) writeVerdict(p printf) {
	p("normal refusals:")
	for _, k := range sortedKeys(r.Expected) {
		p("  %-40s %7d", k, r.Expected[k])
	}
	for _, t := range []struct {
		name   string
		counts map[string]int
	}{{"errors", r.Errors}, {"sent again with the same Idempotency-Key (after a 502, a 503 or no answer)", r.Retried},
		{"refused by the rate limits", r.Limited}} {
		if len(t.counts) == 0 {
			p("%s: none", t.name)
			continue
		}
		p("%s:", t.name)
		for _, k := range sortedKeys(t.counts) {
			p("  %-40s %7d", k, t.counts[k])
		}
	}
	for _, m := range r.Metrics {
		switch {
		case m.Absent:
			p("metrics: %s absent (the simulator counted %d %s)", m.Metric, m.Count, m.Sim)
		case m.Match:
			p("metrics: %s +%.0f, the simulator counted %d %s: match", m.Metric, m.Delta, m.Count, m.Sim)
		default:
			p("metrics: %s +%.0f, the simulator counted %d %s: MISMATCH", m.Metric, m.Delta, m.Count, m.Sim)
		}
	}
	if len(r.Violations) == 0 {
		p("invariants: all hold")
	} else {
		p("INVARIANTS BROKEN:")
		for _, v := range r.Violations {
			p("  %s", v)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// distsMs is the distribution in milliseconds of each step's durations.
func distsMs(byStep map[string][]time.Duration) map[string]benchkit.Dist {
	out := make(map[string]benchkit.Dist, len(byStep))
	for step, ds := range byStep {
		ms := make([]float64, len(ds))
		for i, d := range ds {
			ms[i] = benchkit.Ms(d)
		}
		out[step] = benchkit.DistOf(ms)
	}
	return out
}

// refusals lists refusals by reason, "none" when there were none.
func refusals(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
