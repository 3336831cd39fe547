package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"boxoffice/internal/benchkit"
)

// config is the simulation's settings, from the flags.
type config struct {
	URL        string        // the boxoffice to drive
	Event      string        // the event's slug or id
	Buyers     int           // how many buyers come
	Duration   time.Duration // hard limit of the buying; checks and report follow within twice Settle
	Settle     time.Duration // how long paid orders may take to settle after the buying; the checks after have as long
	AllowHost  string        // a host other than loopback that may be driven
	CPUProfile string        // where to write the simulator's own CPU profile
	Trace      string        // where to write one CSV line per buyer (writeTrace)

	Early       float64       // share of buyers arriving before the onsale, into the pre-queue
	EarlyWindow time.Duration // how long before the onsale the early ones arrive
	Burst       time.Duration // mean delay after the onsale of the others (exponential)

	Poll       time.Duration // how often a waiting buyer's page asks where it stands, when the server sets no pace
	OrderPoll  time.Duration // how often a paid buyer's order page asks for the tickets
	Think      time.Duration // mean pause between two steps of a buyer
	TicketWait time.Duration // how long a paid buyer waits for the tickets
	MapEvery   time.Duration // how often the crowd's seat map is fetched again
	Timeout    time.Duration // per request

	Specific float64  // share choosing their seats on the map (the rest of Best+Specific: standing)
	Best     float64  // share asking for the best available
	MaxQty   int      // a buyer wants 1 to MaxQty seats
	Abandon  float64  // share leaving after the hold (half release, half close the tab)
	Idle     float64  // share of admitted buyers who never hold: their turn lapses
	Basket   float64  // share of seat buyers who hold one seat, then add the others one by one
	Decline  float64  // share paying with a declined card first
	Late     float64  // share whose payment's webhook comes late
	Types    float64  // share of holders who set a seat to a type other than the default
	Voucher  float64  // share of holders who enter a voucher, one of Codes
	Codes    []string // the vouchers they enter
	Front    bool     // buyers take a place token (…/queue/place) and claim at their turn, no session before

	Rate  float64 // the waiting room's admission rate, to compare; read from the database when given
	Slots int     // its shoppers at a time, likewise

	DB        string        // PostgreSQL URL for the SQL checks; empty: API checks only
	Metrics   string        // Prometheus /metrics URL to compare counts with; empty: none
	Keys      bool          // an Idempotency-Key on each hold, add, checkout and pay, and one repeat with it (send)
	Tidy      time.Duration // the server's TIDY_INTERVAL
	TidyGrace time.Duration // time a tidy-up round itself may take

	Conns     int           // connections at most for the waiting buyers together
	ShopConns int           // connections at most for the admitted buyers together
	Seed      uint64        // randomness; 0 draws one
	Progress  time.Duration // how often the progress line is printed
}

// sim is one run.
type sim struct {
	cfg       config
	event     eventJSON
	eventPath string
	shopRT    *http.Transport // the admitted shoppers' connections
	seats     seatBoard
	qboard    queueBoard
	count     *counters
	gauge     struct{ queued, active, holding, sold atomic.Int64 }
	// limit is the server's admission limit (limitMetric) at its last reading, as
	// math.Float64bits; 0: not read.
	limit atomic.Uint64
	// probe is the fixed work's CPU at its last reading, ms (speed.go), as
	// math.Float64bits; 0: not read.
	probe atomic.Uint64
	start time.Time

	latMu    sync.Mutex
	lat      map[string][]time.Duration
	connWait map[string][]time.Duration // the part of lat waiting for a connection here

	tlMu        sync.Mutex
	timeline    []sample
	soldOutAt   time.Time // the map first showed nothing available (some seats may be held)
	allSoldAt   time.Time // … and nothing held either
	seatsSoldAt time.Time // the map first showed every seat sold (standing places aside)
}

// sample is the state of the sale at one moment, for the chart.
type sample struct {
	T         float64 `json:"t"` // seconds since the onsale (negative before)
	Queued    int64   `json:"queued"`
	Active    int64   `json:"activeShoppers"`
	Held      int     `json:"seatsHeld"`
	Sold      int     `json:"seatsSold"`
	Available int     `json:"seatsAvailable"`
	GALeft    int     `json:"placesLeft"`
	// Limit is the admissions per second the server's waiting room allowed at its
	// last reading (with -metrics; 0: not known).
	Limit float64 `json:"admissionLimit,omitempty"`
	// ProbeMs is the CPU the fixed work (gzip of 128 KB) took at its last reading,
	// ms: the machine's speed (speed.go; 0: not known).
	ProbeMs float64 `json:"probeCpuMs,omitempty"`
}

// latency records a step's latency.
func (s *sim) latency(step string, d time.Duration) {
	s.latMu.Lock()
	s.lat[step] = append(s.lat[step], d)
	s.latMu.Unlock()
}

// called records a call's latency and the part of it spent waiting for one of the
// simulator's own connections.
func (s *sim) called(step string, a answer) {
	s.latMu.Lock()
	s.lat[step] = append(s.lat[step], a.Took)
	s.connWait[step] = append(s.connWait[step], a.ConnWait)
	s.latMu.Unlock()
}

// counters count events per second (for rates), answers that are a normal part of an
// onsale (expected) and those that are not (unexpected: errors).
type counters struct {
	start time.Time
	mu    sync.Mutex
	unexp map[string]int
	exp   map[string]int
	sec   map[string][]int // by whole second since start
	total map[string]int
	// retried counts the calls sent again with their Idempotency-Key, by step and
	// their first and last answers (send).
	retried map[string]int
	errs    atomic.Int64
}

func newCounters(start time.Time) *counters {
	return &counters{start: start, unexp: map[string]int{}, exp: map[string]int{}, sec: map[string][]int{}, total: map[string]int{},
		retried: map[string]int{}}
}

func (c *counters) retry(kind string) {
	c.mu.Lock()
	c.retried[kind]++
	c.mu.Unlock()
}

func (c *counters) event(name string) {
	i := int(time.Since(c.start) / time.Second)
	c.mu.Lock()
	s := c.sec[name]
	for len(s) <= i {
		s = append(s, 0)
	}
	s[i]++
	c.sec[name] = s
	c.total[name]++
	c.mu.Unlock()
}

func (c *counters) expected(kind string) {
	c.mu.Lock()
	c.exp[kind]++
	c.mu.Unlock()
}

func (c *counters) unexpected(kind string) {
	c.errs.Add(1)
	c.mu.Lock()
	c.unexp[kind]++
	c.mu.Unlock()
}

// checkHost refuses to drive anything but this machine, unless the host is allowed by
// name: a load generator pointed at the wrong place is an attack.
func checkHost(raw, allow string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", raw)
	}
	h := u.Hostname()
	if allow != "" && h == allow {
		return u, nil
	}
	if h == "localhost" {
		return u, nil
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return u, nil
	}
	return nil, fmt.Errorf("%s is not a loopback address: refusing to load it (name it with -allow-host %s if it is yours)", h, h)
}

// simulate runs the crowd against the server, then checks and measures.
func simulate(ctx context.Context, cfg config, progress io.Writer) (*report, error) {
	base, err := checkHost(cfg.URL, cfg.AllowHost)
	if err != nil {
		return nil, err
	}
	if cfg.Metrics != "" {
		if _, err := checkHost(cfg.Metrics, cfg.AllowHost); err != nil {
			return nil, err
		}
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	// Two pools of connections: one for the waiting room's calls, one for admitted
	// shoppers. People's browsers do not wait for each other's connections; sharing one
	// pool would put a shopper's hold behind thousands of queue polls in this process
	// and measure the simulator rather than the server. The shoppers' pool has about a
	// connection for each shopper the room lets in at once (-shop-conns): with the
	// shop's steps a pool of 256 kept every connection busy, and a hold waited for one
	// in this process up to half a second at the p99.
	transport := func(conns int) *http.Transport {
		return &http.Transport{
			Proxy: nil, MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns, MaxIdleConns: conns,
			IdleConnTimeout: 30 * time.Second,
		}
	}
	rt := transport(cfg.Conns)
	defer rt.CloseIdleConnections()
	origin := base.Scheme + "://" + base.Host
	s := &sim{cfg: cfg, lat: map[string][]time.Duration{}, connWait: map[string][]time.Duration{}, shopRT: transport(cfg.ShopConns)}
	defer s.shopRT.CloseIdleConnections()
	admin := newClient(origin, rt, cfg.Timeout)
	if err := s.findEvent(ctx, admin); err != nil {
		return nil, err
	}
	var db *sqlCheck
	if cfg.DB != "" {
		if db, err = openSQL(ctx, cfg.DB); err != nil {
			return nil, err
		}
		defer db.Close()
		if err := db.roomSettings(ctx, s.event.ID, &s.cfg); err != nil {
			return nil, err
		}
	}
	var before map[string]float64
	if cfg.Metrics != "" {
		before, err = scrape(ctx, admin.http, cfg.Metrics)
		if err != nil {
			fmt.Fprintf(progress, "metrics: %v (counts not compared)\n", err)
		}
	}
	first, err := s.seats.fetch(ctx, admin, s.eventPath)
	if err != nil {
		return nil, fmt.Errorf("the seat map: %w", err)
	}
	buyers, onsale := s.crowd(origin, rt)
	ended := s.play(ctx, admin, progress, buyers, onsale)
	return s.check(ctx, admin, progress, db, before, buyers, runSpan{onsale, ended}, first)
}

// crowd makes the buyers: some arrive early, into the pre-queue, the rest in a burst
// from the onsale. It starts the sale's clock and returns the onsale (now, if it has
// passed).
func (s *sim) crowd(origin string, rt http.RoundTripper) ([]*buyer, time.Time) {
	cfg := s.cfg
	now := time.Now()
	s.start = now
	s.count = newCounters(now)
	onsale := s.event.OnsaleAt
	if onsale.Before(now) {
		onsale = now
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	buyers := make([]*buyer, cfg.Buyers)
	for i := range buyers {
		var at time.Time
		if window := min(cfg.EarlyWindow, onsale.Sub(now)); window > 0 && rng.Float64() < cfg.Early {
			at = onsale.Add(-time.Duration(rng.Float64() * float64(window)))
		} else {
			at = onsale.Add(time.Duration(math.Min(rng.ExpFloat64(), 5) * float64(cfg.Burst)))
		}
		buyers[i] = &buyer{id: i + 1, arrival: at, sim: s, c: newClient(origin, rt, cfg.Timeout),
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+2))}
		buyers[i].c.addr = buyerAddr(i + 1)
	}
	return buyers, onsale
}

// play runs every buyer's visit, and the watch of the sale beside them, until all are
// done or the time limit; it returns when the buying ended.
func (s *sim) play(ctx context.Context, admin *client, progress io.Writer, buyers []*buyer, onsale time.Time) time.Time {
	runCtx, stopRun := context.WithTimeout(ctx, s.cfg.Duration)
	defer stopRun()
	watchCtx, stopWatch := context.WithCancel(runCtx)
	var watch sync.WaitGroup
	watch.Go(func() { s.watch(watchCtx, admin, progress, onsale) })
	var wg sync.WaitGroup
	for _, b := range buyers {
		wg.Go(func() {
			b.visit(runCtx)
			if b.outcome == "" {
				b.outcome = outFailed
			}
		})
	}
	wg.Wait()
	ended := time.Now()
	stopWatch()
	watch.Wait()
	s.lastLook(ctx, admin, onsale)
	return ended
}

// runSpan is the sale's time: from the onsale to the end of the buying.
type runSpan struct{ onsale, ended time.Time }

// check waits, bounded by Settle, for the orders whose payment went through (or may
// have: its answer never came) to settle (late webhooks, buyers cut off by the time
// limit); then the map, the orders and the database must agree. The reads after the
// wait have a deadline of their own, Settle again: a wait that used up its time (an
// order whose webhook never comes) must not cut them short. It sums the run up in a
// report.
func (s *sim) check(ctx context.Context, admin *client, progress io.Writer, db *sqlCheck, before map[string]float64,
	buyers []*buyer, span runSpan, first *board) (*report, error) {
	cfg := s.cfg
	settleCtx, stopSettle := context.WithTimeout(ctx, cfg.Settle)
	orders := s.settle(settleCtx, buyers)
	stopSettle()
	checkCtx, stopCheck := context.WithTimeout(ctx, cfg.Settle)
	defer stopCheck()
	r := &report{}
	// The map may be a second stale (API contract): read it once that second is over.
	sleep(checkCtx, time.Second+100*time.Millisecond)
	last, err := s.seats.fetch(checkCtx, admin, s.eventPath)
	if err != nil {
		r.Violations = append(r.Violations, "the final seat map could not be read: "+err.Error())
	} else {
		r.Violations = append(r.Violations, apiViolations(buyers, orders, last)...)
	}
	var bad []string
	r.Pricing, bad = pricingOf(buyers, orders)
	r.Violations = append(r.Violations, bad...)
	if db != nil {
		v, err := db.violations(checkCtx, s.event.ID, cfg.Tidy+cfg.TidyGrace)
		if err != nil {
			r.Violations = append(r.Violations, "the SQL checks failed to run: "+err.Error())
		}
		r.Violations = append(r.Violations, v...)
		r.Violations = append(r.Violations, s.moneyAgrees(checkCtx, db, r.Pricing)...)
	}
	var after map[string]float64
	if before != nil {
		after, err = scrape(checkCtx, admin.http, cfg.Metrics)
		if err != nil {
			fmt.Fprintf(progress, "metrics: %v (counts not compared)\n", err)
		}
	}
	s.fill(r, buyers, span.onsale, span.ended, first)
	r.Metrics = compareMetrics(before, after, r)
	r.Lapses = lapsesOf(before, after, r.Outcomes[outIdle])
	r.Basket = basketOf(buyers, r.Latency["add"])
	if cfg.Trace != "" {
		if err := benchkit.WriteFile(cfg.Trace, func(w io.Writer) error { return writeTrace(w, buyers, span.onsale) }); err != nil {
			return r, err
		}
	}
	return r, nil
}

// findEvent finds the event by slug or id in the list of events.
func (s *sim) findEvent(ctx context.Context, c *client) error {
	var events []eventJSON
	a, err := c.do(ctx, http.MethodGet, "/api/v1/events", nil, &events)
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK {
		return &statusError{"the list of events", a}
	}
	for _, e := range events {
		if e.Slug == s.cfg.Event || strconv.FormatInt(e.ID, 10) == s.cfg.Event {
			s.event, s.eventPath = e, strconv.FormatInt(e.ID, 10)
			return nil
		}
	}
	return fmt.Errorf("no event %q on sale at %s", s.cfg.Event, s.cfg.URL)
}

// settle waits, within ctx, until every order paid for has its tickets or its refund,
// and returns each buyer's order as it then stands (by buyer index). An order whose
// pay call was never answered is waited for too: the charge may have gone through,
// and its tickets then count on the final map.
func (s *sim) settle(ctx context.Context, buyers []*buyer) map[int]orderJSON {
	out := make(map[int]orderJSON)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, s.cfg.Conns))
	for i, b := range buyers {
		if b.orderID == 0 {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for {
				var o orderJSON
				a, err := b.c.do(ctx, http.MethodGet, "/api/v1/orders/"+strconv.FormatInt(b.orderID, 10), nil, &o)
				if err == nil && a.Status == http.StatusOK {
					mu.Lock()
					out[i] = o
					mu.Unlock()
					if !(b.paid || b.payUnanswered) || o.Status != "pending" {
						return
					}
				}
				if !sleep(ctx, 500*time.Millisecond) {
					return
				}
			}
		})
	}
	wg.Wait()
	return out
}

var errViolations = errors.New("invariants broken")
