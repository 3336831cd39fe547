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
	// between is how many buyers were let in while it waited (after at, up to its own
	// admission): the places it did wait for, as far as the trace tells.
	between float64
}

type rule struct {
	name   string
	rate   func(s etaSample, limit, configured float64) float64 // admissions a second; 0: use the ETA shown
	notice bool                                                 // the wait includes benchkit.Notice
	// opens: the wait also includes what was left of the front door's settle after
	// the draw (the cursor opens then), as the front door's page adds it.
	opens bool
	// between: the wait is for the places the buyer did wait for (an oracle: it tells
	// a rule's error about the places from its error about the rate).
	between bool
}

// runETA is `onsale eta`: it replays the first waits a make onsale run showed in its
// queue under other rules for the admission rate, and says for what share of buyers
// each rule would have come within ±20 % of the wait that followed. It reads the
// simulator's per-buyer trace (onsale run -trace) and its JSON report (onsale run
// -json, for the configured rate and the server's admission limit second by second):
//
//	onsale eta -trace .data/onsale-trace.csv -report .data/onsale.json
//
// A run through the front door (-front) also replays the front door's own sum: the
// cursor opens its settle after the draw (the report's frontDoorSettleSeconds, or
// -settle), which the waits shown at the draw include.
//
// Each first ETA is replayed for the same number of admissions, at the moment it was
// shown, from the rate the room had measured then (the trace's eta_rate) and the
// limit the server held the room to (the report's timeline). "present" is the rule of
// the rate the room is held to (the lower of the measured rate and the limit); the
// rule the room uses is waitroom's own (ShownRate), not a copy of it, with the wait it
// adds to every ETA for the page to learn of its turn (Notice): "expected, and the
// notice", whose line agrees with "as shown", which checks the replay itself. The
// last line is an oracle: that rule, for the places the buyer did wait for (the
// buyers let in meanwhile, from the trace) instead of those the page counted; it
// tells an error of the places from an error of the rate.
func runETA(_ context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("onsale", "eta", env)
	trace := fs.String("trace", ".data/onsale-trace.csv", "the simulator's -trace")
	report := fs.String("report", ".data/onsale.json", "the simulator's -json")
	settle := fs.Duration("settle", -1, "the front door's settle after the draw (-1: the report's; 0: a run without the front door)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return replayETA(*trace, *report, settle.Seconds(), env.Stdout)
}

// replayETA replays the trace's first ETAs under each rule and prints the shares;
// settle is the front door's settle in seconds (< 0: the report's).
func replayETA(tracePath, reportPath string, settle float64, out io.Writer) error {
	var rep struct {
		Admission struct {
			Configured float64 `json:"configuredPerSecond"`
		} `json:"admission"`
		Timeline []struct {
			T     float64  `json:"t"`
			Limit *float64 `json:"admissionLimit"`
		} `json:"timeline"`
		Settle float64 `json:"frontDoorSettleSeconds"`
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
	if settle < 0 {
		settle = rep.Settle
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
	expected := func(s etaSample, l, R float64) float64 { return benchkit.ShownRate(s.measured, l, R) }
	present := func(s etaSample, l, _ float64) float64 { return below(s.measured, l, l) }
	rules := []rule{
		{name: "as shown"},
		{name: "present: min(measured, limit)", rate: present},
		{name: "present, and the notice", rate: present, notice: true},
		{name: "expected: halfway to the climb", rate: expected},
		{name: "expected, and the notice", rate: expected, notice: true},
		{name: "the climb alone", rate: func(s etaSample, l, R float64) float64 { return R * benchkit.ClimbMean(l/R) }},
		{name: "measured alone", rate: func(s etaSample, l, _ float64) float64 { return below(s.measured, math.Inf(1), l) }},
		{name: "configured", rate: func(_ etaSample, _, R float64) float64 { return R }},
	}
	if settle > 0 {
		rules = append(rules, rule{name: "front door: expected, notice, opening", rate: expected, notice: true, opens: true})
	}
	rules = append(rules, rule{name: "expected, notice; places let in (oracle)", rate: expected, notice: true, opens: settle > 0, between: true})
	fmt.Fprintf(out, "%d first ETAs (%d of the pre-queue), configured %.0f/s; within ±20 %% of the wait that followed:\n", len(samples), count(samples, true), R)
	fmt.Fprintf(out, "  %-40s %8s %10s %10s %12s\n", "rule", "all", "pre-queue", "arrived", "too short")
	for _, r := range rules {
		var in, short [2]int
		var n [2]int
		for _, s := range samples {
			eta := s.shown
			if r.rate != nil {
				places := s.places
				if r.between {
					places = s.between
				}
				eta = places / r.rate(s, limitAt(s.at), R)
				if r.notice {
					eta += benchkit.Notice.Seconds()
				}
				if r.opens {
					eta += max(settle-s.at, 0)
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
		fmt.Fprintf(out, "  %-40s %8s %10s %10s %12s\n", r.name, pct(in[0]+in[1], n[0]+n[1]), pct(in[0], n[0]), pct(in[1], n[1]), pct(short[0]+short[1], n[0]+n[1]))
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
	var admitted []float64 // every buyer's admission, in order
	for _, row := range rows[1:] {
		if v, err := strconv.ParseFloat(row[col["admitted"]], 64); err == nil {
			admitted = append(admitted, v)
		}
	}
	sort.Float64s(admitted)
	letIn := func(from, to float64) float64 {
		return float64(sort.SearchFloat64s(admitted, math.Nextafter(to, math.Inf(1))) - sort.SearchFloat64s(admitted, math.Nextafter(from, math.Inf(1))))
	}
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
		out = append(out, etaSample{at: at, shown: shown, actual: adm - at, places: places, measured: max(rate, 0),
			preQueue: row[col["pre_queue"]] == "true", between: letIn(at, adm)})
	}
	return out, nil
}
