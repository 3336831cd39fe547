package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// Chart geometry, in SVG units: the plot area inside margins for the axes' labels.
const (
	chartW, chartH       = 720, 240
	chartLeft, chartTop  = 44, 12
	chartRight, chartBot = 52, 28
)

// salesChart draws tickets sold per minute (bars, left axis) and the share of the
// house sold (line, right axis) over the window ending at now: server-rendered SVG,
// readable without script, described in words for screen readers.
//
// Its times are on the clocks of the event's zone loc.
func salesChart(byMinute []booking.MinuteCount, soldBefore, capacity int, from, now time.Time, loc *time.Location) views.Chart {
	from = from.Truncate(time.Minute)
	minutes := int(now.Sub(from)/time.Minute) + 1
	minutes = max(1, min(minutes, 24*60))
	counts := make([]int, minutes)
	for _, m := range byMinute {
		i := int(m.Minute.Sub(from) / time.Minute)
		if i < 0 || i >= minutes {
			continue
		}
		counts[i] += m.Tickets
	}
	total, peak, peakAt := countPeak(counts)
	yMax := niceCeil(peak)
	c, plotW, plotH := chartFrame()
	bw := plotW / float64(minutes)
	var line strings.Builder
	cum := soldBefore
	for i, n := range counts {
		x := float64(chartLeft) + float64(i)*bw
		if n > 0 {
			h := plotH * float64(n) / float64(yMax)
			c.Bars = append(c.Bars, views.ChartBar{X: f1(x + bw*0.1), Y: f1(float64(chartH-chartBot) - h),
				W: f1(max(bw*0.8, 0.5)), H: f1(h),
				Label: fmt.Sprintf("%s: %d", zone.Clock(from.Add(time.Duration(i)*time.Minute), loc), n)})
		}
		cum += n
		if capacity > 0 {
			y := float64(chartH-chartBot) - plotH*float64(min(cum, capacity))/float64(capacity)
			fmt.Fprintf(&line, "%s,%s ", f1(x+bw), f1(y))
		}
	}
	if capacity > 0 {
		y0 := float64(chartH-chartBot) - plotH*float64(min(soldBefore, capacity))/float64(capacity)
		c.Line = fmt.Sprintf("%s,%s %s", f1(float64(chartLeft)), f1(y0), strings.TrimSpace(line.String()))
	}
	for _, v := range []int{0, yMax / 2, yMax} {
		c.YTicks = append(c.YTicks, views.ChartTick{Pos: f1(float64(chartH-chartBot) - plotH*float64(v)/float64(yMax)), Label: strconv.Itoa(v)})
	}
	for _, p := range []int{0, 50, 100} {
		c.PctTicks = append(c.PctTicks, views.ChartTick{Pos: f1(float64(chartH-chartBot) - plotH*float64(p)/100), Label: strconv.Itoa(p) + "%"})
	}
	step := max(1, minutes/6)
	for i := 0; i < minutes; i += step {
		c.XTicks = append(c.XTicks, views.ChartTick{Pos: f1(float64(chartLeft) + float64(i)*bw),
			Label: from.Add(time.Duration(i) * time.Minute).In(loc).Format("15:04")})
	}
	c.Title = "Tickets sold per minute"
	switch {
	case total == 0:
		c.Desc = fmt.Sprintf("No tickets sold since %s.", zone.Clock(from, loc))
	default:
		c.Desc = fmt.Sprintf("%d tickets sold since %s, at most %d in one minute (%s).",
			total, zone.Clock(from, loc), peak, zone.Clock(from.Add(time.Duration(peakAt)*time.Minute), loc))
	}
	if capacity > 0 {
		c.Desc += fmt.Sprintf(" %d of %d sold (%d%%).", min(cum, capacity), capacity, 100*min(cum, capacity)/capacity)
	}
	return c
}

// countPeak is the sum of counts, the largest and where it is (the first, if several).
func countPeak(counts []int) (total, peak, peakAt int) {
	for i, n := range counts {
		total += n
		if n > peak {
			peak, peakAt = n, i
		}
	}
	return total, peak, peakAt
}

// chartFrame is an empty chart of the standard size, and the width and height of
// its plot area.
func chartFrame() (c views.Chart, plotW, plotH float64) {
	c = views.Chart{Width: chartW, Height: chartH, Left: chartLeft, Top: chartTop,
		Right: chartW - chartRight, Bottom: chartH - chartBot}
	return c, float64(chartW - chartLeft - chartRight), float64(chartH - chartTop - chartBot)
}

// niceCeil is the smallest of 1, 2, 5 × 10ⁿ at or above n (at least 1): an axis top.
func niceCeil(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
