package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The server's counters (Prometheus text format on METRICS_ADDR) that the simulator's
// own counts should match.
var metricNames = []struct{ metric, sim string }{
	{"boxoffice_holds_total", "holds"},
	{"boxoffice_hold_conflicts_total", "hold 409s"},
	{"boxoffice_orders_confirmed_total", "orders confirmed"},
}

// scrape reads a /metrics page and sums each sample's value by metric name, over all
// label sets.
func scrape(ctx context.Context, c *http.Client, url string) (map[string]float64, error) {
	fams, err := fetchMetrics(ctx, c, url)
	if err != nil {
		return nil, err
	}
	return sums(fams), nil
}

// limitMetric is the admissions per second the server's waiting room allows at the
// moment: its configured rate, lowered while the server is past its latency bound.
const limitMetric = "boxoffice_queue_admission_limit"

// eventGauge reads one event's value of a gauge from a /metrics page; false when the
// page has none.
func eventGauge(ctx context.Context, c *http.Client, url, name string, eventID int64) (float64, bool, error) {
	fams, err := fetchMetrics(ctx, c, url)
	if err != nil {
		return 0, false, err
	}
	v, ok := gaugeOf(fams, name, strconv.FormatInt(eventID, 10))
	return v, ok, nil
}

// fetchMetrics reads a /metrics page with Prometheus's own text-format parser.
func fetchMetrics(ctx context.Context, c *http.Client, url string) (map[string]*dto.MetricFamily, error) {
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
	return families(resp.Body)
}

func families(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return fams, nil
}

// gaugeOf finds the gauge name's sample labelled event="event".
func gaugeOf(fams map[string]*dto.MetricFamily, name, event string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "event" && l.GetValue() == event && m.Gauge != nil {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// sums sums each metric's samples (counters, gauges, untyped) over all label sets.
func sums(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := make(map[string]float64, len(fams))
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch {
			case m.Counter != nil:
				out[name] += m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[name] += m.GetGauge().GetValue()
			case m.Untyped != nil:
				out[name] += m.GetUntyped().GetValue()
			}
		}
	}
	return out
}

// lapsesJSON is what became of the turns nobody used: the buyers who walked away once
// admitted, and, as the server counted them over the run, the turns that lapsed with
// no seat held and the admissions from the queue into the slots those gave back.
type lapsesJSON struct {
	Walked int     `json:"admittedNeverHeld"`
	Lapsed float64 `json:"lapsed"`
	Reused float64 `json:"reused"`
}

// lapsesOf reads the lapses' counters' change over the run; nil without both scrapes
// or when the server has no such counters.
func lapsesOf(before, after map[string]float64, walked int) *lapsesJSON {
	lapsed, ok := after["boxoffice_queue_lapsed_total"]
	if before == nil || !ok {
		return nil
	}
	return &lapsesJSON{Walked: walked, Lapsed: lapsed - before["boxoffice_queue_lapsed_total"],
		Reused: after["boxoffice_queue_reused_total"] - before["boxoffice_queue_reused_total"]}
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
