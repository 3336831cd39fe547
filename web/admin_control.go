package web

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/waitroom"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// The control room: one event's onsale at a glance, live. The page renders the
// figures once; a stream then sends them again every controlEvery as one HTML
// fragment that htmx swaps in (the SSE extension). Counts come from PostgreSQL (one
// snapshot query), the waiting room's from Redis; the 409 rate is this server's own
// counter, so with several instances it shows this one's share.

// controlEvery is how often the control room's figures are sent again.
const controlEvery = 2 * time.Second

// controlWindow is how far back the sales chart reaches at most.
const controlWindow = time.Hour

// controlSample is what the stream remembers between two rounds, to turn counters
// into rates.
type controlSample struct {
	at        time.Time
	conflicts float64
}

// controlFigures gathers the figures of an event. prev, if set, is the last round's
// sample, for the 409 rate.
func (s *server) controlFigures(ctx context.Context, ev booking.Event, prev *controlSample) (views.ControlFigures, error) {
	now := time.Now()
	c, err := s.Desk.Control(ctx, ev.ID)
	if err != nil {
		return views.ControlFigures{}, err
	}
	f := views.ControlFigures{
		EventID:      ev.ID,
		Capacity:     c.Seats + c.GACapacity,
		Sold:         c.SeatsSold + c.GASold,
		Held:         c.SeatsHeld + c.GAHeld,
		LiveHolds:    c.LiveHolds,
		Orders:       c.OrdersConfirmed,
		Revenue:      s.Money.Format(int(c.RevenueCents)),
		PerMinute:    c.TicketsLastMinute,
		QueueOn:      c.QueueEnabled,
		Paused:       c.QueuePaused,
		Slots:        c.QueueSlots,
		RateSetting:  strconv.FormatFloat(c.QueueRate, 'f', -1, 64),
		ConflictRate: "–",
		Updated:      zone.ClockSeconds(now, ev.Zone),
	}
	if f.Capacity > 0 {
		f.SoldPct = 100 * f.Sold / f.Capacity
	}
	if c.QueueEnabled {
		qc, err := s.Queue.Counts(ctx, ev.ID)
		if err != nil {
			f.QueueError = "The waiting room does not answer (Redis): its figures are unknown; admitted shoppers carry on."
		} else {
			f.Waiting, f.Active, f.QueueKnown = int(qc.Waiting), int(qc.Active), true
			f.Lapsed, f.Reused = int(qc.Lapsed), int(qc.Reused)
		}
		f.Idle = idleText(waitroom.IdleWindow(waitroom.Settings{Idle: c.QueueIdle}))
		if now := s.Queue.Limited(waitroom.Settings{Rate: c.QueueRate}).Rate; now < c.QueueRate {
			f.RateNow = strconv.FormatFloat(now, 'f', 1, 64)
		}
	}
	if f.Presale, err = s.controlPresale(ctx, ev); err != nil {
		return f, err
	}
	if ev.VerifiedOnly {
		vc, err := s.verifyCounts(ctx, ev)
		if err != nil {
			return f, err
		}
		f.Verified, f.Registered, f.Confirmed = true, vc.Registered, vc.Confirmed
	}
	if prev != nil {
		n := s.Metrics.HoldConflicts()
		if dt := now.Sub(prev.at).Minutes(); dt > 0 && !prev.at.IsZero() {
			f.ConflictRate = strconv.Itoa(int(math.Round((n - prev.conflicts) / dt)))
		}
		prev.at, prev.conflicts = now, n
	}
	from := now.Add(-controlWindow)
	if ev.OnsaleAt.After(from) && ev.OnsaleAt.Before(now) {
		from = ev.OnsaleAt
	}
	byMinute, err := s.Desk.TicketsByMinute(ctx, ev.ID, from.Truncate(time.Minute))
	if err != nil {
		return f, err
	}
	inWindow := 0
	for _, m := range byMinute {
		inWindow += m.Tickets
	}
	f.Chart = salesChart(byMinute, max(0, f.Sold-inWindow), f.Capacity, from, now, ev.Zone)
	return f, nil
}

// controlPresale is the presale's waiting room while it is on, nil otherwise: its
// queue and shoppers from Redis (unknown when Redis does not answer, as the public
// room's), the draw (its earliest code's start) and its last code's end.
func (s *server) controlPresale(ctx context.Context, ev booking.Event) (*views.ControlPresale, error) {
	qe, p, on, err := s.presaleRoom(ctx, ev)
	if err != nil || !on {
		return nil, err
	}
	_, ends := p.Window()
	out := &views.ControlPresale{Draw: zone.Short(qe.OnsaleAt, ev.Zone), Ends: zone.Short(ends, ev.Zone)}
	if n, err := s.Queue.Counts(ctx, qe.ID); err == nil {
		out.Known, out.Waiting, out.Active = true, int(n.Waiting), int(n.Active)
	}
	return out, nil
}

// showControl is the control room page.
func (s *server) showControl(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	id := ev.ID
	f, err := s.controlFigures(c.Request().Context(), ev, nil)
	if err != nil {
		return err
	}
	p := adminPage(c, "Control room · "+ev.Name)
	panel := controlPanel(p.CSRFToken, id, f.Paused, f.Slots, f.RateSetting)
	panel.Notice = controlNotices[c.QueryParam("done")]
	return render(c, http.StatusOK, "no-store", views.AdminControlPage(views.Control{AdminPage: p, EventName: ev.Name,
		Stream: "/admin/events/" + strconv.FormatInt(id, 10) + "/control/stream", Figures: f, Panel: panel}))
}

// streamControl sends the figures every controlEvery until the page goes or the
// server shuts down.
func (s *server) streamControl(c echo.Context) error {
	ctx := c.Request().Context()
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	id := ev.ID
	if ok, err := startSSE(c, controlEvery); !ok {
		return err
	}
	done := s.Live.Done()
	prev := &controlSample{at: time.Now(), conflicts: s.Metrics.HoldConflicts()}
	tick := time.NewTicker(controlEvery)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil
		case <-done:
			return nil
		}
		qctx, cancel := context.WithTimeout(ctx, controlEvery)
		if !s.staffStillIn(qctx, c, boxOffice...) {
			// Logged out, disabled or downgraded since the stream began: it ends, and
			// the browser's reconnection meets the login.
			cancel()
			return nil
		}
		f, err := s.controlFigures(qctx, ev, prev)
		cancel()
		buf.Reset()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.Log.WarnContext(ctx, "control room figures", "event", id, "err", err)
			buf.WriteString(": figures unavailable\n\n") // a comment: the page keeps the last figures
		} else {
			var html bytes.Buffer
			if err := views.ControlTiles(f).Render(ctx, &html); err != nil {
				return nil
			}
			buf.WriteString("event: figures\n")
			writeData(&buf, html.Bytes())
		}
		if _, err := c.Response().Write(buf.Bytes()); err != nil {
			return nil
		}
		c.Response().Flush()
	}
}
