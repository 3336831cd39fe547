package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"boxoffice/internal/benchkit"
)

// chartPanel is one strip of the chart: one quantity over the sale on a scale of its
// own, so that the few hundred shoppers are not drawn flat under the queue's
// thousands, nor the held seats under the sold.
type chartPanel struct {
	title string
	color string
	value func(sample) float64
	// ref, when above 0, is drawn as a dashed line labelled refLabel (the seats on
	// sale, the configured admission rate).
	ref      float64
	refLabel string
}

// The chart's geometry, in SVG pixels.
const (
	chartWidth  = 900
	chartLeft   = 80 // room for the scale's labels ("50,000")
	chartRight  = 24
	chartHead   = 58 // the title and the summary line
	panelTitle  = 22 // a panel's title, above its plot
	panelHeight = 96
	panelGap    = 14
	chartFoot   = 34 // the time scale's labels
)

// writeSVG draws the sale over time as stacked panels sharing the time axis: the
// queue's length, the shoppers admitted and not done, the waiting room's admission
// limit (when the server's metrics were read), and the seats held and sold. Each
// panel has round-numbered scale lines; dashed lines mark the onsale and the
// sell-out. A plain SVG a browser or an editor opens; it names itself for screen
// readers (role="img", a title and a description with the run's headline figures).
func (r *report) writeSVG(w io.Writer) error {
	tl := r.Timeline
	if len(tl) == 0 {
		_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="60" role="img" aria-label="no samples"><text x="10" y="30">no samples</text></svg>`+"\n", chartWidth)
		return err
	}
	panels := r.chartPanels()
	t0, t1 := tl[0].T, tl[len(tl)-1].T
	if t1 <= t0 {
		t1 = t0 + 1
	}
	pw := float64(chartWidth - chartLeft - chartRight)
	x := func(t float64) float64 { return chartLeft + (t-t0)/(t1-t0)*pw }
	height := chartHead + len(panels)*(panelTitle+panelHeight+panelGap) + chartFoot

	var b strings.Builder
	title := fmt.Sprintf("%s: %s buyers", r.Event.Slug, benchkit.Thousands(float64(r.Buyers)))
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12" role="img" aria-labelledby="chart-title chart-desc">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, `<title id="chart-title">%s</title>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&b, `<desc id="chart-desc">%s</desc>`+"\n", html.EscapeString(r.chartSummary()))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartWidth, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", chartLeft, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%d" y="42" fill="#444">%s</text>`+"\n", chartLeft, html.EscapeString(r.chartSummary()))

	xTicks := timeTicks(t0, t1)
	top := chartHead
	for _, p := range panels {
		plotTop := float64(top + panelTitle)
		hi := p.ref
		for _, s := range tl {
			hi = max(hi, p.value(s))
		}
		step, scaleTop := niceScale(hi, 4)
		y := func(v float64) float64 { return plotTop + panelHeight - v/scaleTop*panelHeight }
		fmt.Fprintf(&b, `<g aria-hidden="true"><text x="%d" y="%d" font-weight="bold" fill="%s">%s</text>`+"\n", chartLeft, top+15, p.color, html.EscapeString(p.title))
		for v := 0.0; v <= scaleTop+step/2; v += step {
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/><text class="scale" x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
				chartLeft, y(v), chartWidth-chartRight, y(v), chartLeft-6, y(v)+4, benchkit.Thousands(v))
		}
		for _, t := range xTicks {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x(t), plotTop, x(t), plotTop+panelHeight)
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%.0f" width="%.0f" height="%d" fill="none" stroke="#999"/>`+"\n", chartLeft, plotTop, pw, panelHeight)
		if p.ref > 0 {
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-dasharray="6 4" opacity="0.6"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">%s %s</text>`+"\n",
				chartLeft, y(p.ref), chartWidth-chartRight, y(p.ref), p.color, chartWidth-chartRight-4, y(p.ref)-4, html.EscapeString(p.refLabel), benchkit.Thousands(p.ref))
		}
		markers(&b, r, x, t0, t1, plotTop, top == chartHead)
		fmt.Fprintf(&b, `<path class="series" d="%s" fill="none" stroke="%s" stroke-width="2"/></g>`+"\n", path(tl, x, func(s sample) float64 { return y(p.value(s)) }), p.color)
		top += panelTitle + panelHeight + panelGap
	}
	axisY := top - panelGap + 16
	for _, t := range xTicks {
		fmt.Fprintf(&b, `<text class="time" x="%.1f" y="%d" text-anchor="middle" aria-hidden="true">%s</text>`+"\n", x(t), axisY, secondsLabel(t))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#555" aria-hidden="true">from the onsale</text>`+"\n", chartWidth-chartRight, axisY+14)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// chartPanels are the chart's strips: the queue, the shoppers, the room's limit
// when the server's metrics were read, the seats held and sold.
func (r *report) chartPanels() []chartPanel {
	panels := []chartPanel{
		{title: "waiting in the queue", color: "#d95f02", value: func(s sample) float64 { return float64(s.Queued) }},
		{title: "shopping (admitted, not done)", color: "#7570b3", value: func(s sample) float64 { return float64(s.Active) }},
	}
	for _, s := range r.Timeline {
		if s.Limit > 0 {
			panels = append(panels, chartPanel{
				title: "the waiting room's admission limit, a second", color: "#66a61e",
				value: func(s sample) float64 { return s.Limit },
				ref:   r.Admission.Configured, refLabel: "configured",
			})
			break
		}
	}
	panels = append(panels,
		chartPanel{title: "seats held", color: "#e7298a", value: func(s sample) float64 { return float64(s.Held) }},
		chartPanel{
			title: "seats sold", color: "#1b9e77", value: func(s sample) float64 { return float64(s.Sold) },
			ref: float64(r.Event.Seats), refLabel: "on sale",
		},
	)
	return panels
}

// markers draws the onsale's and the sell-out's dashed lines across one panel,
// naming them on the first.
func markers(b *strings.Builder, r *report, x func(float64) float64, t0, t1, plotTop float64, named bool) {
	mark := func(t float64, label, color string) {
		if t < t0 || t > t1 {
			return
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4 4"/>`+"\n", x(t), plotTop, x(t), plotTop+panelHeight, color)
		if named {
			fmt.Fprintf(b, `<text class="marker" x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", x(t)+4, plotTop+13, color, html.EscapeString(label))
		}
	}
	mark(0, "onsale", "#888")
	if r.SoldOutSeconds != nil {
		mark(*r.SoldOutSeconds, fmt.Sprintf("sold out %s", secondsLabel(*r.SoldOutSeconds)), "#b2182b")
	}
}

// path is the SVG path through the samples.
func path(tl []sample, x func(float64) float64, y func(sample) float64) string {
	var b strings.Builder
	for i, s := range tl {
		if i > 0 {
			b.WriteString(" L")
		} else {
			b.WriteString("M")
		}
		fmt.Fprintf(&b, "%.1f %.1f", x(s.T), y(s))
	}
	return b.String()
}

// chartSummary is the run in one line: what the chart shows, for its description
// and its subtitle.
func (r *report) chartSummary() string {
	var peakQ int64
	var peakQAt float64
	for _, s := range r.Timeline {
		if s.Queued > peakQ {
			peakQ, peakQAt = s.Queued, s.T
		}
	}
	parts := []string{fmt.Sprintf("%s seats and %s standing places", benchkit.Thousands(float64(r.Event.Seats)), benchkit.Thousands(float64(r.Event.Places)))}
	if peakQ > 0 {
		parts = append(parts, fmt.Sprintf("the queue peaked at %s (%s)", benchkit.Thousands(float64(peakQ)), secondsLabel(peakQAt)))
	}
	if r.SoldOutSeconds != nil {
		parts = append(parts, fmt.Sprintf("sold out %.1f s after the onsale", *r.SoldOutSeconds))
	} else {
		parts = append(parts, "not sold out")
	}
	parts = append(parts, fmt.Sprintf("%s places sold", benchkit.Thousands(float64(r.Counts.PlacesSold))))
	return strings.Join(parts, "; ")
}

// niceScale is the scale for values up to hi in at most n steps of a round size (1,
// 2, 2.5 or 5 times a power of ten): the step and the scale's top, a whole number of
// steps at or above hi.
func niceScale(hi float64, n int) (step, top float64) {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return 1, float64(n)
	}
	mag := math.Pow(10, math.Floor(math.Log10(hi/float64(n))))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if math.Ceil(hi/step-1e-9) <= float64(n) {
			break
		}
	}
	return step, math.Ceil(hi/step-1e-9) * step
}

// timeTicks are round times (a multiple of 5 s up to 20 min) between t0 and t1, about
// eight at most, the onsale (0) among them when it falls within.
func timeTicks(t0, t1 float64) []float64 {
	span := t1 - t0
	step := 1200.0
	for _, s := range []float64{5, 10, 15, 30, 60, 120, 300, 600} {
		if span/s <= 8 {
			step = s
			break
		}
	}
	var ticks []float64
	for t := math.Ceil(t0/step) * step; t <= t1+1e-9; t += step {
		if t == 0 {
			t = 0 // not −0, which Ceil gives for a t0 within a step below 0
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// secondsLabel is a time from the onsale: "+60 s", "0 s", "−30 s".
func secondsLabel(t float64) string {
	s := strconv.FormatFloat(math.Abs(t), 'f', -1, 64)
	if math.Abs(t-math.Round(t)) > 1e-9 {
		s = strconv.FormatFloat(math.Abs(t), 'f', 1, 64)
	}
	switch {
	case t > 0:
		return "+" + s + " s"
	case t < 0:
		return "−" + s + " s"
	}
	return "0 s"
}
