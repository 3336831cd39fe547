package web

import (
	"fmt"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// chartDays is how many days the dashboard's chart shows, today the last.
const chartDays = 14

// salesDashboard is the box office's figures on the landing page: today's sales and
// each event's, with tickets sold per day over the last two weeks. Days are on the
// house's clocks for the chart and the totals' heading, on each venue's for its
// event's "today".
func (s *server) salesDashboard(c echo.Context) (views.SalesDashboard, error) {
	ctx := c.Request().Context()
	sales, err := s.Desk.Sales(ctx)
	if err != nil {
		return views.SalesDashboard{}, err
	}
	loc, err := s.Catalog.HouseZone(ctx)
	if err != nil {
		return views.SalesDashboard{}, err
	}
	now := time.Now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	from := today.AddDate(0, 0, -(chartDays - 1))
	events := make([]int64, len(sales))
	for i, e := range sales {
		events[i] = e.EventID
	}
	days, err := s.Desk.TicketsByDay(ctx, events, from, loc)
	if err != nil {
		return views.SalesDashboard{}, err
	}
	d := views.SalesDashboard{Shown: true, Today: zone.Day(now, loc), Chart: dailyChart(days, from, loc)}
	todayCents := 0
	for _, e := range sales {
		d.TodayTickets += e.TicketsToday
		todayCents += e.RevenueTodayCents
		d.Events = append(d.Events, views.EventSalesRow{Name: e.Name, When: zone.Short(e.StartsAt, e.Zone),
			Tickets: e.Tickets, TicketsToday: e.TicketsToday, Left: e.Left(), Capacity: e.Capacity,
			Revenue: s.Money.Format(e.RevenueCents), RevenueToday: s.Money.Format(e.RevenueTodayCents),
			Fees: s.Money.Format(e.FeeCents), Tax: s.Money.Format(e.TaxCents)})
	}
	d.TodayRevenue = s.Money.Format(todayCents)
	return d, nil
}

// dailyChart draws valid tickets issued per day (bars) for chartDays days from from:
// server-rendered SVG, described in words for screen readers.
func dailyChart(days []booking.DayCount, from time.Time, loc *time.Location) views.Chart {
	counts := make([]int, chartDays)
	for _, d := range days {
		// Whole days apart on the zone's clocks (a DST day is 23 or 25 hours).
		dt := d.Day.In(loc)
		i := int(time.Date(dt.Year(), dt.Month(), dt.Day(), 12, 0, 0, 0, time.UTC).Sub(
			time.Date(from.Year(), from.Month(), from.Day(), 12, 0, 0, 0, time.UTC)) / (24 * time.Hour))
		if i >= 0 && i < chartDays {
			counts[i] += d.Tickets
		}
	}
	total, peak, peakAt := countPeak(counts)
	yMax := niceCeil(peak)
	c, plotW, plotH := chartFrame()
	c.Title = "Tickets sold per day"
	bw := plotW / chartDays
	day := func(i int) time.Time { return from.AddDate(0, 0, i) }
	for i, n := range counts {
		x := float64(chartLeft) + float64(i)*bw
		if n > 0 {
			h := plotH * float64(n) / float64(yMax)
			c.Bars = append(c.Bars, views.ChartBar{X: f1(x + bw*0.15), Y: f1(float64(chartH-chartBot) - h),
				W: f1(bw * 0.7), H: f1(h), Label: fmt.Sprintf("%s: %d", day(i).Format("Mon 2 Jan"), n)})
		}
		if i%2 == chartDays%2 || i == chartDays-1 {
			c.XTicks = append(c.XTicks, views.ChartTick{Pos: f1(x + bw*0.15), Label: day(i).Format("2 Jan")})
		}
	}
	for _, v := range []int{0, yMax / 2, yMax} {
		c.YTicks = append(c.YTicks, views.ChartTick{Pos: f1(float64(chartH-chartBot) - plotH*float64(v)/float64(yMax)), Label: strconv.Itoa(v)})
	}
	if total == 0 {
		c.Desc = fmt.Sprintf("No tickets sold since %s.", day(0).Format("2 Jan 2006"))
	} else {
		c.Desc = fmt.Sprintf("%d tickets sold in the last %d days, since %s; at most %d on one day (%s).",
			total, chartDays, day(0).Format("2 Jan 2006"), peak, day(peakAt).Format("Mon 2 Jan"))
	}
	return c
}
