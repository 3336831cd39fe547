package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"

	"boxoffice/internal/benchkit"
)

// etaSample is one buyer's first ETA and the wait that followed it.
type etaSample struct {
	at, shown, actual float64 // seconds from the onsale; the ETA; the wait that followed
	places            float64 // admissions it was for, the buyer's own included
	measured          float64 // the room's measured rate then (0: none yet, or no board seen)
	preQueue          bool
}

type rule struct {
	name   string
	rate   func(s etaSample, limit, configured float64) float64 // admissions a second; 0: use the ETA shown
	notice bool                                                 // the wait includes benchkit.Notice
}

// runETA is `onsale eta`: it replays the first waits a make onsale run showed in its
// queue under other rules for the admission rate, and says for what share of buyers
// each rule would have come within ±20 % of the wait that followed. It reads the
// simulator's per-buyer trace (onsale run -trace) and its JSON report (onsale run
// -json, for the configured rate and the server's admission limit second by second):
//
//	onsale eta -trace .data/onsale-trace.csv -report .data/onsale.json
//
// Each first ETA is replayed for the same number of admissions, at the moment it was
// shown, from the rate the room had measured then (the trace's eta_rate) and the
// limit the server held the room to (the report's timeline). "present" is the rule of
// the rate the room is held to (the lower of the measured rate and the limit); the
// rule the room uses is waitroom's own (ShownRate), not a copy of it, with the wait it
// adds to every ETA for the page to learn of its turn (Notice): "expected, and the
// notice", whose line agrees with "as shown", which checks the replay itself.
func runETA(_ context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("onsale", "eta", env)
	trace := fs.String("trace", ".data/onsale-trace.csv", "the simulator's -trace")
	report := fs.String("report", ".data/onsale.json", "the simulator's -json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return replayETA(*trace, *report, env.Stdout)
}

// replayETA replays the trace's first ETAs under each rule and prints the shares.
func replayETA(tracePath, reportPath string, out io.Writer) error {
	var rep struct {
		Admission struct {
			Configured float64 `json:"configuredPerSecond"`
		} `json:"admission"`
		Timeline []struct {
			T     float64  `json:"t"`
			Limit *float64 `json:"admissionLimit"`
		} `json:"timeline"`
	}
	b, err := os.ReadFile(reportPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", reportPath, err)
	}
	R := rep.Admission.Configured
	if R <= 0 {
		return errors.New("the report has no configured admission rate")
	}
	limitAt := func(t float64) float64 {
		i := sort.Search(len(rep.Timeline), func(i int) bool { return rep.Timeline[i].T > t }) - 1
		if i < 0 || rep.Timeline[max(i, 0)].Limit == nil {
			return R
		}
		return *rep.Timeline[i].Limit
	}
	samples, err := readTrace(tracePath)
	if err != nil {
		return err
	}
	// below is the lower of the measured rate m and x, or without a measurement, or.
	below := func(m, x, or float64) float64 {
		if m > 0 {
			return min(m, x)
		}
		return or
	}
	rules := []rule{
		{"as shown", nil, false},
		{"present: min(measured, limit)", func(s etaSample, l, _ float64) float64 { return below(s.measured, l, l) }, false},
		{"expected: halfway to the climb", func(s etaSample, l, R float64) float64 { return benchkit.ShownRate(s.measured, l, R) }, false},
		{"expected, and the notice", func(s etaSample, l, R float64) float64 { return benchkit.ShownRate(s.measured, l, R) }, true},
		{"the climb alone", func(s etaSample, l, R float64) float64 { return R * benchkit.ClimbMean(l/R) }, false},
		{"measured alone", func(s etaSample, l, _ float64) float64 { return below(s.measured, math.Inf(1), l) }, false},
		{"configured", func(_ etaSample, _, R float64) float64 { return R }, false},
	}
	fmt.Fprintf(out, "%d first ETAs (%d of the pre-queue), configured %.0f/s; within ±20 %% of the wait that followed:\n", len(samples), count(samples, true), R)
	fmt.Fprintf(out, "  %-32s %8s %10s %10s %12s\n", "rule", "all", "pre-queue", "arrived", "too short")
	for _, r := range rules {
		var in, short [2]int
		var n [2]int
		for _, s := range samples {
			eta := s.shown
			if r.rate != nil {
				eta = s.places / r.rate(s, limitAt(s.at), R)
				if r.notice {
					eta += benchkit.Notice.Seconds()
				}
			}
			k := 1
			if s.preQueue {
				k = 0
			}
			n[k]++
			e := (eta - s.actual) / max(s.actual, 1)
			if math.Abs(e) <= 0.2 {
				in[k]++
			} else if e < 0 {
				short[k]++
			}
		}
		pct := func(a, b int) string { return fmt.Sprintf("%.1f %%", 100*float64(a)/float64(max(b, 1))) }
		fmt.Fprintf(out, "  %-32s %8s %10s %10s %12s\n", r.name, pct(in[0]+in[1], n[0]+n[1]), pct(in[0], n[0]), pct(in[1], n[1]), pct(short[0]+short[1], n[0]+n[1]))
	}
	return nil
}

func count(ss []etaSample, pre bool) int {
	n := 0
	for _, s := range ss {
		if s.preQueue == pre {
			n++
		}
	}
	return n
}

// readTrace reads the buyers admitted after a first ETA for a known number of places.
func readTrace(path string) ([]etaSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, name := range []string{"pre_queue", "admitted", "eta_at", "eta_seconds", "eta_places", "eta_rate"} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("%s: no column %s (a trace from an older simulator?)", path, name)
		}
	}
	var out []etaSample
	for _, row := range rows[1:] {
		num := func(name string) (float64, bool) {
			v, err := strconv.ParseFloat(row[col[name]], 64)
			return v, err == nil
		}
		adm, ok1 := num("admitted")
		at, ok2 := num("eta_at")
		shown, ok3 := num("eta_seconds")
		places, ok4 := num("eta_places")
		rate, ok5 := num("eta_rate")
		if !(ok1 && ok2 && ok3 && ok4 && ok5) || places <= 0 {
			continue // not admitted, or no ETA for a known number of places
		}
		if i, ok := col["warned"]; ok && row[i] == "first" {
			continue // told the tickets may be gone before any wait: as the report
		}
		out = append(out, etaSample{at: at, shown: shown, actual: adm - at, places: places, measured: max(rate, 0), preQueue: row[col["pre_queue"]] == "true"})
	}
	return out, nil
}
