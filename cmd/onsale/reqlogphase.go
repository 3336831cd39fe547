package main

import (
	"fmt"
	"io"
	"time"
)

// phases is when in the second a route's requests started, by tenth of a second:
// how many started in each tenth and what share of them were slower than the route's
// p99. A share that climbs in a few tenths points at something that happens once a
// second at that moment (a ticker of the server, a crowd that reads a page every
// second), where an even one points at nothing periodic.
type phases struct {
	Route  string
	P99    float64 // ms
	N      [10]int
	Slower [10]int // of N, those slower than P99
}

// phasesOf sums up route's requests, es, sorted by latency (as byRoute gives them).
func phasesOf(route string, es []entry) phases {
	p99 := percentile(es, 0.99)
	p := phases{Route: route, P99: msOf(p99)}
	for _, e := range es {
		start := e.Time.Add(-time.Duration(e.Latency)) // the line is written at the end
		k := start.Nanosecond() / 1e8
		p.N[k]++
		if e.Latency > p99 {
			p.Slower[k]++
		}
	}
	return p
}

// writePhases prints p as a table, a line per tenth of the second.
func writePhases(w io.Writer, p phases) {
	fmt.Fprintf(w, "%s: when in the second its requests started, and the share slower than its p99 (%.1f ms)\n", p.Route, p.P99)
	fmt.Fprintf(w, "%-8s %8s %8s\n", "tenth", "started", "slower")
	for k := range p.N {
		share := 0.0
		if p.N[k] > 0 {
			share = 100 * float64(p.Slower[k]) / float64(p.N[k])
		}
		fmt.Fprintf(w, "%.1f-%.1f s %6d %7.2f%%\n", float64(k)/10, float64(k+1)/10, p.N[k], share)
	}
}
