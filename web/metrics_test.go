package web_test

import (
	"context"
	"crypto/rand"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"boxoffice/internal/booking"
)

// metricValue sums the series of a metric in reg whose labels include labels.
func metricValue(t testing.TB, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// decisionCounters are the counters the booking service moves.
var decisionCounters = []string{
	"boxoffice_holds_total", "boxoffice_hold_conflicts_total", "boxoffice_orders_confirmed_total",
	"boxoffice_tickets_issued_total", "boxoffice_refunds_total",
}

func decisions(t testing.TB, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, name := range decisionCounters {
		got[name] = metricValue(t, reg, name, nil)
	}
	return got
}

// waitDecisions waits until the counters read want. Confirmations and refunds are
// counted after their transaction commits, which a buyer polling the order may see a
// moment earlier; a counter that moves by too much, or not at all, fails.
func waitDecisions(t *testing.T, reg prometheus.Gatherer, step string, want map[string]float64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := decisions(t, reg)
		if maps.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: got %v, want %v", step, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMetricsCountDecisions: each counter moves by exactly what happened, counted
// where booking decides: a hold, a hold refused 409, a sale confirmed by the
// provider's webhook with its two tickets, the same webhook replayed (nothing), and a
// second payment of the confirmed order refunded (a refund, no second sale). The HTTP
// series name routes by pattern.
func TestMetricsCountDecisions(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	reg := app.App.Metrics.Registry
	a, b := app.newClient(t), app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	want := decisions(t, reg)
	for name, v := range want {
		if v != 0 {
			t.Fatalf("%s: got %v before anything happened, want 0", name, v)
		}
	}
	step := func(what string, changes map[string]float64) {
		t.Helper()
		for k, d := range changes {
			want[k] += d
		}
		waitDecisions(t, reg, what, want)
	}

	h := a.hold(app.EventID, seats[0], seats[1])
	step("a hold", map[string]float64{"boxoffice_holds_total": 1})

	if st := b.do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"seatIds": []int64{seats[1]}}, nil); st != http.StatusConflict {
		t.Fatalf("hold of a held seat: got %d, want 409", st)
	}
	step("a hold refused", map[string]float64{"boxoffice_hold_conflicts_total": 1})
	holds409 := metricValue(t, reg, "boxoffice_http_requests_total", map[string]string{
		"url": "/api/v1/events/:id/holds", "method": "POST", "code": "409",
	})
	if holds409 != 1 {
		t.Errorf("boxoffice_http_requests_total for the route's 409s: got %v, want 1", holds409)
	}

	co := a.checkout(h.HoldID)
	a.pay(co.OrderID, "")
	waitOrder(t, a, co.OrderID, booking.StatusConfirmed)
	step("a sale", map[string]float64{"boxoffice_orders_confirmed_total": 1, "boxoffice_tickets_issued_total": 2})

	// The provider sends the same event again. The webhook route's count moves once the
	// handler has answered, so the replay has been acted on when it does.
	webhooks := func() float64 {
		return metricValue(t, reg, "boxoffice_http_requests_total", map[string]string{"url": "/api/v1/payments/webhook"})
	}
	before := webhooks()
	own, _ := paymentOf(t, app.Pool, co.OrderID)
	if err := app.Provider.Resend(context.Background(), own); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); webhooks() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the replayed webhook never reached the server")
		}
	}
	step("a replayed webhook", nil)

	// A second payment of the confirmed order sells nothing and is refunded.
	if _, err := app.Provider.Charge(context.Background(), booking.ChargeRequest{
		Key: "elsewhere_" + rand.Text(), OrderID: co.OrderID, EventID: app.EventID,
		AmountCents: int64(co.AmountCents), Method: cardOK,
	}); err != nil {
		t.Fatal(err)
	}
	waitOrderWhere(t, a, co.OrderID, "the second payment refunded", refundsDone(1))
	step("a refund", map[string]float64{"boxoffice_refunds_total": 1})
	app.settle(t)
	waitDecisions(t, reg, "the end", want)
}

// TestMetricsBestAvailableFromMap: a best-available hold made while the process keeps
// the event's seat map counts as chosen from the map; one made before any map was
// read counts nothing there (the search in the database found it).
func TestMetricsBestAvailableFromMap(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	reg := app.App.Metrics.Registry
	const fromMap, misses = "boxoffice_best_available_from_map_total", "boxoffice_best_available_map_misses_total"
	best := func(c *client) {
		t.Helper()
		if st := c.do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"quantity": 2}, nil); st != http.StatusCreated {
			t.Fatalf("best available 2: got %d, want 201", st)
		}
	}
	best(app.newClient(t)) // no map read yet: the database's search
	if got := metricValue(t, reg, fromMap, nil); got != 0 {
		t.Errorf("%s before any map was read: got %v, want 0", fromMap, got)
	}
	c := app.newClient(t)
	if st := c.do("GET", "/api/v1/events/"+itoa(app.EventID)+"/seatmap", nil, nil); st != http.StatusOK {
		t.Fatalf("seat map: got %d", st)
	}
	best(c)
	if got := metricValue(t, reg, fromMap, nil); got != 1 {
		t.Errorf("%s after a hold chosen from the map: got %v, want 1", fromMap, got)
	}
	if got := metricValue(t, reg, misses, nil); got != 0 {
		t.Errorf("%s: got %v, want 0 (nobody else took the map's choice)", misses, got)
	}
}

// TestLoadHearsTheSale: the waiting room's load meter hears each step of the sale that
// changes something (a hold, a checkout, a payment; refusals too) and nothing else:
// not a join, a look, or reading a hold. /metrics shows the level it makes of them and
// the room's admission limit.
func TestLoadHearsTheSale(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue)
	roomOn(t, app, app.EventID, 10, 100, time.Minute)
	meter := app.App.Load
	c := app.newClient(t)
	check := func(what string, steps int64) {
		t.Helper()
		if got := meter.Seen(); got != steps {
			t.Fatalf("after %s: the meter saw %d steps, want %d", what, got, steps)
		}
	}
	check("nothing", 0)
	if q := c.queue("POST", app.EventID); !q.Admitted {
		t.Fatalf("join: got %+v, want admitted", q)
	}
	c.queue("GET", app.EventID)
	check("a join and a look", 0)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	h := c.hold(app.EventID, seats[0])
	check("a hold", 1)
	if st := c.do("GET", "/api/v1/holds/"+h.HoldID, nil, nil); st != http.StatusOK {
		t.Fatalf("reading the hold: got %d", st)
	}
	check("reading the hold", 1)
	if st := app.newClient(t).do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"seatIds": []int64{seats[0]}}, nil); st != http.StatusTooManyRequests {
		t.Fatalf("a hold without admission: got %d, want 429", st)
	}
	check("a hold refused", 2)
	c.checkout(h.HoldID)
	check("a checkout", 3)
	if got := metricValue(t, app.App.Metrics.Registry, "boxoffice_queue_admission_limit", map[string]string{"event": itoa(app.EventID)}); got != 100 {
		t.Errorf("boxoffice_queue_admission_limit: got %v, want 100 (the configured rate: nothing is slow)", got)
	}
	if got := metricValue(t, app.App.Metrics.Registry, "boxoffice_latency_level", nil); got != meter.Level() {
		t.Errorf("boxoffice_latency_level: got %v, want the meter's %v", got, meter.Level())
	}
}
