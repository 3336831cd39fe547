package main

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// writeSVG draws the timeline: queue length and active shoppers (left scale, people),
// seats held and sold (right scale, seats), against seconds from the onsale. A plain
// SVG a browser or an editor opens; no library needed for four lines.
func (r *report) writeSVG(w io.Writer) error {
	const (
		width, height = 900, 420
		left, right   = 70, 70
		top, bottom   = 40, 50
	)
	tl := r.Timeline
	if len(tl) == 0 {
		_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="60"><text x="10" y="30">no samples</text></svg>`, width)
		return err
	}
	t0, t1 := tl[0].T, tl[len(tl)-1].T
	if t1 <= t0 {
		t1 = t0 + 1
	}
	var people, seats float64 = 1, 1
	for _, s := range tl {
		people = max(people, float64(s.Queued), float64(s.Active))
		seats = max(seats, float64(s.Held), float64(s.Sold))
	}
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	x := func(t float64) float64 { return left + (t-t0)/(t1-t0)*pw }
	yP := func(v float64) float64 { return top + ph - v/people*ph }
	yS := func(v float64) float64 { return top + ph - v/seats*ph }
	line := func(color string, y func(sample) float64) string {
		var b strings.Builder
		for i, s := range tl {
			if i == 0 {
				b.WriteString("M")
			} else {
				b.WriteString(" L")
			}
			fmt.Fprintf(&b, "%.1f %.1f", x(s.T), y(s))
		}
		return fmt.Sprintf(`<path d="%s" fill="none" stroke="%s" stroke-width="2"/>`, b.String(), color)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">%s: %d buyers</text>`+"\n", left, html.EscapeString(r.Event.Slug), r.Buyers)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", left, top, pw, ph)
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		y := top + ph - f*ph
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">%.0f</text>`, left-6, y+4, f*people)
		fmt.Fprintf(&b, `<text x="%d" y="%.0f">%.0f</text>`+"\n", width-right+6, y+4, f*seats)
	}
	for i := 0; i <= 6; i++ {
		t := t0 + float64(i)/6*(t1-t0)
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">%+.0f s</text>`+"\n", x(t), height-bottom+18, t)
	}
	if t0 < 0 && t1 > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#bbb" stroke-dasharray="4 4"/><text x="%.1f" y="%d" fill="#777">onsale</text>`+"\n",
			x(0), top, x(0), top+ph, x(0)+4, top+14)
	}
	b.WriteString(line("#d95f02", func(s sample) float64 { return yP(float64(s.Queued)) }) + "\n")
	b.WriteString(line("#7570b3", func(s sample) float64 { return yP(float64(s.Active)) }) + "\n")
	b.WriteString(line("#e7298a", func(s sample) float64 { return yS(float64(s.Held)) }) + "\n")
	b.WriteString(line("#1b9e77", func(s sample) float64 { return yS(float64(s.Sold)) }) + "\n")
	legend := []struct{ color, label string }{
		{"#d95f02", "queue length (left)"}, {"#7570b3", "active shoppers (left)"},
		{"#e7298a", "seats held (right)"}, {"#1b9e77", "seats sold (right)"},
	}
	for i, l := range legend {
		lx := left + i*190
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			lx, height-14, l.color, lx+18, height-9, l.label)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
