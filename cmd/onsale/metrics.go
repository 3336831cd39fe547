package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The server's counters (Prometheus text format on METRICS_ADDR) that the simulator's
// own counts should match.
var metricNames = []struct{ metric, sim string }{
	{"boxoffice_holds_total", "holds"},
	{"boxoffice_hold_conflicts_total", "hold 409s"},
	{"boxoffice_orders_confirmed_total", "orders confirmed"},
}

// scrape reads a /metrics page and sums each sample's value by metric name, over all
// label sets. A tiny parser of the text format is enough for counters: one sample per
// line, `name{labels} value [timestamp]`, comments starting with #.
func scrape(ctx context.Context, c *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if strings.HasPrefix(rest, "{") {
			// Label values may hold spaces and braces, quoted; the set ends at the
			// last closing brace.
			j := strings.LastIndexByte(rest, '}')
			if j < 0 {
				return nil, fmt.Errorf("metrics: bad line %q", line)
			}
			rest = rest[j+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil, fmt.Errorf("metrics: no value in %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: bad value in %q", line)
		}
		out[name] += v
	}
	return out, sc.Err()
}

// metricJSON compares one server counter's change over the run with the simulator's
// own count of the same thing.
type metricJSON struct {
	Metric string  `json:"metric"`
	Delta  float64 `json:"delta"`
	Sim    string  `json:"simCount"`
	Count  int     `json:"count"`
	Absent bool    `json:"absent,omitempty"`
	Match  bool    `json:"match"`
}

// compareMetrics lines the counters' deltas up against the simulator's counts. A
// counter the server does not export is reported absent, not as a mismatch.
func compareMetrics(before, after map[string]float64, r *report) []metricJSON {
	if before == nil || after == nil {
		return nil
	}
	counts := map[string]int{"holds": r.Counts.Holds, "hold 409s": r.Counts.HoldConflicts, "orders confirmed": r.Counts.Confirmed}
	var out []metricJSON
	for _, m := range metricNames {
		a, okA := after[m.metric]
		b := before[m.metric]
		mj := metricJSON{Metric: m.metric, Sim: m.sim, Count: counts[m.sim], Absent: !okA}
		if okA {
			mj.Delta = a - b
			mj.Match = int(mj.Delta) == mj.Count
		}
		out = append(out, mj)
	}
	return out
}
