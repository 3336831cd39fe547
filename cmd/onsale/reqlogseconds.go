package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"
)

// seconds is a route's requests second by second of the log: how many ended in each,
// how slow they were, where their time went, and how many of the route's slowest 1 %
// each holds. A p99 missed in a few seconds (a sell-out, a periodic stall: autovacuum
// at its naptime) reads differently from one missed a little in every second.
type seconds struct {
	Route string
	P99   float64 // ms, over the whole log
	Rows  []second
}

type second struct {
	At       int // whole seconds after the log's first request line
	N        int
	P50, P99 float64 // ms
	Max      float64
	Avg      spentOn
	Slower   int // of N, those slower than the route's P99
}

// secondsOf groups es, a route's requests sorted by latency, by the second after from
// in which each was logged (as it ended).
func secondsOf(route string, es []entry, from time.Time) seconds {
	p99 := percentile(es, 0.99)
	by := map[int][]entry{}
	for _, e := range es { // fastest first, so each second's list is sorted too
		k := int(e.Time.Sub(from) / time.Second)
		by[k] = append(by[k], e)
	}
	out := seconds{Route: route, P99: msOf(p99)}
	for k, in := range by {
		r := second{At: k, N: len(in), P50: msOf(percentile(in, 0.5)), P99: msOf(percentile(in, 0.99)),
			Max: msOf(in[len(in)-1].Latency), Avg: average(in)}
		for _, e := range in {
			if e.Latency > p99 {
				r.Slower++
			}
		}
		out.Rows = append(out.Rows, r)
	}
	slices.SortFunc(out.Rows, func(a, b second) int { return cmp.Compare(a.At, b.At) })
	return out
}

// writeSeconds prints s as a table, a line per second with a request, then the
// seconds that hold most of the slowest 1 %.
func writeSeconds(w io.Writer, s seconds) {
	fmt.Fprintf(w, "%s: second by second (from the log's first request), and how many were slower than its p99 (%.1f ms)\n", s.Route, s.P99)
	fmt.Fprintf(w, "%6s %6s %7s %7s %7s | %-40s | %s\n", "second", "n", "p50", "p99", "max", "average: latency wait db batch redis rest trips", "slower")
	slowest := 0
	for _, r := range s.Rows {
		fmt.Fprintf(w, "%6d %6d %7.1f %7.1f %7.1f | %s | %d\n", r.At, r.N, r.P50, r.P99, r.Max, cols(r.Avg), r.Slower)
		slowest += r.Slower
	}
	if slowest == 0 {
		return
	}
	worst := slices.Clone(s.Rows)
	slices.SortStableFunc(worst, func(a, b second) int { return cmp.Compare(b.Slower, a.Slower) })
	fmt.Fprintf(w, "the %d slower than the p99 ended in", slowest)
	for i, r := range worst {
		if i == 10 || r.Slower == 0 {
			break
		}
		fmt.Fprintf(w, " %d s (%d)", r.At, r.Slower)
	}
	fmt.Fprintln(w)
}
