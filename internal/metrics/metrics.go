// Package metrics is boxoffice's Prometheus registry: what the booking service decided
// (holds, refusals, sales, tickets, refunds), the waiting room, the live streams, and
// the PostgreSQL and Redis pools. The HTTP series (requests by route and status) are
// added by web, which owns Echo, on the same registry.
//
// The series are served on a listener of their own (METRICS_ADDR, Serve), never on
// the public handler. The counter names are a contract: the onsale simulator scrapes
// them and compares them with its own report.
//
// It imports no package of boxoffice: the domain packages are handed a *Metrics, or
// are read through the functions of Sources, by the composition root.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/IBM/pgxpoolprometheus"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/extra/redisprometheus/v9"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/groupcommit"
)

// Namespace starts the name of every series boxoffice defines itself.
const Namespace = "boxoffice"

// Metrics is one program's registry and the counters the domain packages move. Its
// methods implement booking.Counters and the waiting room's Admitted hook.
type Metrics struct {
	// Registry holds every series of the program. It is the program's own, not
	// Prometheus's global default, so that several programs in one process (tests)
	// each count their own.
	Registry *prometheus.Registry

	holds, holdConflicts, confirmed, tickets, refunds prometheus.Counter
	admitted, lapsed, reused                          *prometheus.CounterVec
}

// New returns a registry with the Go runtime's and the process's series and
// boxoffice's counters, all at zero.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	f := promauto.With(reg)
	counter := func(name, help string) prometheus.Counter {
		return f.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
	}
	return &Metrics{
		Registry:      reg,
		holds:         counter("holds_total", "Holds created (exact seats, best available and general admission)."),
		holdConflicts: counter("hold_conflicts_total", "Hold attempts refused with 409 because the seats were taken, being taken (busy), or not enough were left."),
		confirmed:     counter("orders_confirmed_total", "Orders confirmed (sales), by webhook, reconciliation or a free checkout."),
		tickets:       counter("tickets_issued_total", "Tickets issued by confirmed orders."),
		refunds:       counter("refunds_total", "Refunds the payment provider confirmed."),
		admitted: f.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "queue_admitted_total",
			Help: "Visitors this instance admitted from an event's waiting room.",
		}, []string{"event"}),
		lapsed: f.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "queue_lapsed_total",
			Help: "Admissions to an event's waiting room that this instance's admitter let lapse because nothing was held within the event's idle window.",
		}, []string{"event"}),
		reused: f.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "queue_reused_total",
			Help: "Admissions this instance's admitter made from an event's queue into slots that lapsed admissions gave back.",
		}, []string{"event"}),
	}
}

// HoldCreated counts a committed hold.
func (m *Metrics) HoldCreated() { m.holds.Inc() }

// HoldConflict counts a hold refused because its seats were taken or sold out.
func (m *Metrics) HoldConflict() { m.holdConflicts.Inc() }

// OrderConfirmed counts a sale and its tickets.
func (m *Metrics) OrderConfirmed(tickets int) {
	m.confirmed.Inc()
	m.tickets.Add(float64(tickets))
}

// Refunded counts a refund the provider confirmed.
func (m *Metrics) Refunded() { m.refunds.Inc() }

// QueueAdmitted counts visitors admitted from an event's waiting room.
func (m *Metrics) QueueAdmitted(eventID int64, n int) {
	m.admitted.WithLabelValues(strconv.FormatInt(eventID, 10)).Add(float64(n))
}

// QueueLapsed counts admissions that lapsed for want of a hold, and admissions from the
// queue into the slots they gave back (the waiting room's Lapsed hook).
func (m *Metrics) QueueLapsed(eventID int64, lapsed, reused int) {
	ev := strconv.FormatInt(eventID, 10)
	m.lapsed.WithLabelValues(ev).Add(float64(lapsed))
	m.reused.WithLabelValues(ev).Add(float64(reused))
}

// Queue is one event's waiting room at a scrape: its public room, or with Presale its
// presale's, whose settings are the public room's (so only its length and shoppers
// are reported).
type Queue struct {
	EventID int64
	Presale bool
	Waiting int64   // visitors in the queue
	Active  int64   // admitted visitors whose admission has not ended
	Rate    float64 // admissions per second, as configured
	Limit   float64 // admissions per second the room allows now: Rate, lowered while the application is past its latency bound
}

// Sources are what the gauges read when they are scraped.
type Sources struct {
	Pool  *pgxpool.Pool
	Redis redis.UniversalClient
	// SSEClients counts the live streams open in this process.
	SSEClients func() int
	// Queues reads the waiting rooms of the events whose room is on, and their
	// presales' rooms while they are on.
	Queues func(ctx context.Context) ([]Queue, error)
	// BestAvailable reads best available's counts (booking.Maps.BestAvailableCounts).
	BestAvailable func() (fromMap, mapMisses int64)
	// Load is the application's latency as a share of its bound (latency.Meter.Level).
	Load func() float64
	// DBGate reads the calls waiting for a pooled connection by their place in the
	// queue (dbgate.Gate.Waiting).
	DBGate func() (first, usual, later int)
	// SmallWrites reads the batched small writes' counts by kind (groupcommit): the
	// sessions', the Idempotency-Keys' claims and answers.
	SmallWrites func() map[string]groupcommit.Stats
	Log         *slog.Logger
}

// Watch registers the gauges read from src at each scrape: the pools' own statistics
// (pgxpool_*, boxoffice_redis_pool_*), the calls waiting at the pool's gate, the open
// live streams, best available's counts, and each queued event's waiting room.
func (m *Metrics) Watch(src Sources) error {
	var cs []prometheus.Collector
	if src.Pool != nil {
		cs = append(cs, pgxpoolprometheus.NewCollector(src.Pool, nil))
	}
	if src.Redis != nil {
		cs = append(cs, redisprometheus.NewCollector(Namespace, "redis", src.Redis))
	}
	if src.SSEClients != nil {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "sse_clients", Help: "Live seat streams open on this instance.",
		}, func() float64 { return float64(src.SSEClients()) }))
	}
	if src.DBGate != nil {
		for i, place := range []string{"first", "usual", "later"} {
			cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Namespace: Namespace, Name: "db_gate_waiting", ConstLabels: prometheus.Labels{"place": place},
				Help: "Calls waiting for a pooled PostgreSQL connection by their place in the queue: holds (first, in the pool's queue), and the usual and later calls at the gate.",
			}, func() float64 {
				f, u, l := src.DBGate()
				return float64([]int{f, u, l}[i])
			}))
		}
	}
	if src.SmallWrites != nil {
		cs = append(cs, smallWrites(src.SmallWrites)...)
	}
	if src.BestAvailable != nil {
		cs = append(cs,
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Namespace: Namespace, Name: "best_available_from_map_total",
				Help: "Best-available holds whose seats were chosen from this instance's seat map; the others were found by the search in the database.",
			}, func() float64 { n, _ := src.BestAvailable(); return float64(n) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Namespace: Namespace, Name: "best_available_map_misses_total",
				Help: "Best-available choices from the seat map that someone else had taken: the map was behind on them.",
			}, func() float64 { _, n := src.BestAvailable(); return float64(n) }),
		)
	}
	if src.Load != nil {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "latency_level",
			Help: "The 95th percentile latency of the sale's steps (holds, checkouts, payments) on this instance over the last 5 s, as a share of LATENCY_BOUND: at 1 or more the waiting rooms admit slower.",
		}, src.Load))
	}
	if src.Queues != nil {
		log := src.Log
		if log == nil {
			log = slog.Default()
		}
		cs = append(cs, &queueCollector{read: src.Queues, log: log})
	}
	for _, c := range cs {
		if err := m.Registry.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the registry in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry, Timeout: 10 * time.Second})
}

// ServeMux is what the metrics listener serves: /metrics, Go's profiler, and 404 for
// anything else.
func (m *Metrics) ServeMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	// Go's profiler shares the private listener: what a capacity run needs to see where
	// the time goes (go tool pprof http://METRICS_ADDR/debug/pprof/profile).
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}

// HoldConflicts is this program's count of holds refused with 409 so far, for the
// control room's rate.
func (m *Metrics) HoldConflicts() float64 {
	var d dto.Metric
	if err := m.holdConflicts.Write(&d); err != nil || d.Counter == nil {
		return 0
	}
	return d.Counter.GetValue()
}
