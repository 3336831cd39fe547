package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// report is what a run found: the figures a capacity plan needs and the invariants'
// verdict. It is written as text, as JSON and as an SVG chart.
type report struct {
	Event struct {
		ID       int64     `json:"id"`
		Slug     string    `json:"slug"`
		OnsaleAt time.Time `json:"onsaleAt"`
		Seats    int       `json:"seats"`
		Places   int       `json:"standingPlaces"`
	} `json:"event"`
	Buyers   int            `json:"buyers"`
	Seed     uint64         `json:"seed"`
	Outcomes map[string]int `json:"outcomes"`
	// SoldOutSeconds is the time from the onsale until the map first showed no seat
	// available and no standing place left (seats may still be held, and come back
	// if their holds lapse); nil if it never did. AllSoldSeconds: until nothing was
	// held either.
	SoldOutSeconds *float64 `json:"soldOutSeconds"`
	AllSoldSeconds *float64 `json:"allSoldSeconds"`
	// SeatsSoldSeconds is the time from the onsale until every seat was sold (held
	// ones included, standing places aside): when the seat map was all sold.
	SeatsSoldSeconds *float64 `json:"seatsSoldSeconds"`
	// SaleSeconds is the time from the onsale to the end of the sale (sold out, or
	// the last buyer gone): what the rates below are averaged over.
	SaleSeconds float64 `json:"saleSeconds"`
	Counts      struct {
		Holds         int `json:"holds"`
		HoldConflicts int `json:"hold409s"`
		Confirmed     int `json:"ordersConfirmed"`
		PlacesSold    int `json:"placesSold"`
	} `json:"counts"`
	Rates struct {
		Holds     rate `json:"holdsPerSecond"`
		Sales     rate `json:"salesPerSecond"`
		Conflicts rate `json:"hold409sPerSecond"`
	} `json:"rates"`
	Latency map[string]dist `json:"latencyMs"`
	// ConnWait is the part of each call's latency spent waiting for one of the
	// simulator's own connections (its pools are bounded; browsers do not share them).
	ConnWait  map[string]dist `json:"connWaitMs"`
	QueueWait dist            `json:"queueWaitSeconds"`
	// ETA compares the wait the queue page showed with the wait that followed: the
	// first ETA each buyer saw after the draw (not of those first told that the
	// tickets may be gone before their turn: Warned), and every ETA shown at every look.
	ETA struct {
		First etaFit `json:"firstShown"`
		Every etaFit `json:"everyShown"`
		// The first ETA of the pre-queue's buyers (shown at the draw) and of those who
		// came after the onsale (shown at their join, in the arrival burst for most).
		FirstPreQueue etaFit `json:"firstShownPreQueue"`
		FirstArrived  etaFit `json:"firstShownArrivedAfterOnsale"`
		// The first ETAs whose turn, as shown, came before the sell-out and after it
		// (empty when nothing sold out): after it, nobody goes in at the rate any
		// more, only as holds lapse or are released, which no rate foretells.
		FirstTurnBeforeSellOut etaFit `json:"firstShownTurnBeforeSellOut"`
		FirstTurnAfterSellOut  etaFit `json:"firstShownTurnAfterSellOut"`
		// Warned counts the buyers the queue page told, after the draw, that the
		// tickets may be gone before their turn (more people ahead than the free places
		// are likely to serve), and what became of those told so before any wait.
		Warned warned `json:"warned"`
	} `json:"eta"`
	Admission struct {
		Configured  float64 `json:"configuredPerSecond"`
		Achieved    float64 `json:"achievedPerSecond"`
		Peak30s     float64 `json:"peakPerSecondOver30s"`
		Admitted    int     `json:"admitted"`
		Slots       int     `json:"slots"`
		MaxShopping int64   `json:"maxActiveShoppers"`
		// Limit is the server's admission limit over the sale, from the onsale to the
		// sell-out (with -metrics): the configured rate, lowered by the server while it
		// was past its latency bound.
		Limit *limitStats `json:"serverLimit,omitempty"`
	} `json:"admission"`
	// Speed is how fast the machine ran over the sale (speed.go): figures of runs at
	// different speeds do not compare.
	Speed    *speedStats `json:"machineSpeed,omitempty"`
	Fairness struct {
		AfterOnsale int     `json:"afterOnsaleN"`
		Rho         float64 `json:"spearmanAfterOnsale"`
		PreQueue    int     `json:"preQueueN"`
		RhoPreQueue float64 `json:"spearmanPreQueue"`
	} `json:"fairness"`
	Errors     map[string]int `json:"errors"`
	Expected   map[string]int `json:"expected"`
	Limited    map[string]int `json:"limited"` // the rate limits' refusals, by step and limit: part of the two above
	Metrics    []metricJSON   `json:"metrics,omitempty"`
	Violations []string       `json:"violations"`
	Timeline   []sample       `json:"timeline"`
}

// warned is what became of the buyers told that the tickets may be gone first.
type warned struct {
	Buyers int `json:"buyers"` // told so at some time after the draw
	// First were told so before any wait was shown them; of them, Admitted were let in
	// all the same (as holds lapsed or were released), Bought bought tickets.
	First    int `json:"first"`
	Admitted int `json:"firstAdmitted"`
	Bought   int `json:"firstBought"`
}

// etaFit is how well shown ETAs matched the waits that followed.
type etaFit struct {
	N         int     `json:"n"`
	Within20  float64 `json:"within20pct"`
	MedianErr float64 `json:"medianRelativeError"`
	// Of the waits of 30 s or more, where the page's 3-second rhythm blurs less.
	N30        int     `json:"nWaitedOver30s"`
	Within2030 float64 `json:"within20pctWaitedOver30s"`
	// The misses by their side: Short the share of ETAs the wait ran more than 20 %
	// past (the page promised too soon), Long the share it came more than 20 % before.
	Short float64 `json:"shortOver20pct"`
	Long  float64 `json:"longOver20pct"`
}

// fit measures ETAs against actual waits, both in seconds.
func fit(pairs [][2]float64) etaFit {
	var out etaFit
	var errs []float64
	in, in30, short, long := 0, 0, 0, 0
	for _, p := range pairs {
		eta, actual := p[0], p[1]
		e := math.Abs(eta-actual) / max(actual, 1)
		errs = append(errs, e)
		switch {
		case e <= 0.2:
			in++
		case actual > eta:
			short++
		default:
			long++
		}
		if actual >= 30 {
			out.N30++
			if e <= 0.2 {
				in30++
			}
		}
	}
	out.N = len(pairs)
	if out.N > 0 {
		out.Within20 = float64(in) / float64(out.N)
		out.Short, out.Long = float64(short)/float64(out.N), float64(long)/float64(out.N)
		out.MedianErr = distOf(errs).P50
	}
	if out.N30 > 0 {
		out.Within2030 = float64(in30) / float64(out.N30)
	}
	return out
}

type rate struct {
	Mean float64 `json:"mean"`
	Peak int     `json:"peak"`
}

// limitStats sums up the server's admission limit over the sale.
type limitStats struct {
	Mean float64 `json:"meanPerSecond"`
	Min  float64 `json:"minPerSecond"`
	Max  float64 `json:"maxPerSecond"`
	// Below is the share of the readings below the configured rate.
	Below float64 `json:"belowConfigured"`
}

// limitOver sums up the readings of the limit in the samples from the onsale to end
// (zero: the whole run); nil without any.
func limitOver(timeline []sample, end float64, configured float64) *limitStats {
	var l limitStats
	n, below := 0, 0
	for _, sm := range timeline {
		if sm.T < 0 || sm.Limit <= 0 || (end > 0 && sm.T > end) {
			continue
		}
		if n == 0 || sm.Limit < l.Min {
			l.Min = sm.Limit
		}
		l.Max = max(l.Max, sm.Limit)
		l.Mean += sm.Limit
		if sm.Limit < configured {
			below++
		}
		n++
	}
	if n == 0 {
		return nil
	}
	l.Mean /= float64(n)
	l.Below = float64(below) / float64(n)
	return &l
}

// dist is a distribution's percentiles.
type dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func distOf(v []float64) dist {
	if len(v) == 0 {
		return dist{}
	}
	slices.Sort(v)
	p := func(q float64) float64 { return quantile(v, q) }
	return dist{N: len(v), P50: p(.5), P90: p(.9), P95: p(.95), P99: p(.99), Max: v[len(v)-1]}
}

// quantile is the nearest-rank q-quantile of sorted, which is not empty.
func quantile(sorted []float64, q float64) float64 {
	return sorted[max(0, min(len(sorted)-1, int(math.Ceil(q*float64(len(sorted))))-1))]
}

// Failed says whether the run broke an invariant or met answers that are no normal
// part of an onsale.
func (r *report) Failed() bool { return len(r.Violations) > 0 || len(r.Errors) > 0 }

// fill computes the figures from what the buyers recorded.
func (s *sim) fill(r *report, buyers []*buyer, onsale, ended time.Time, first *board) {
	r.Event.ID, r.Event.Slug, r.Event.OnsaleAt = s.event.ID, s.event.Slug, s.event.OnsaleAt
	r.Event.Seats = first.available + first.held + first.sold
	r.Event.Places = first.gaRemaining
	r.Buyers, r.Seed = len(buyers), s.cfg.Seed
	r.Outcomes = map[string]int{}
	for _, b := range buyers {
		r.Outcomes[b.outcome]++
	}
	end := ended
	if !s.soldOutAt.IsZero() {
		t := s.soldOutAt.Sub(onsale).Seconds()
		r.SoldOutSeconds = &t
		end = s.soldOutAt
	}
	if !s.allSoldAt.IsZero() {
		t := s.allSoldAt.Sub(onsale).Seconds()
		r.AllSoldSeconds = &t
	}
	if !s.seatsSoldAt.IsZero() {
		t := s.seatsSoldAt.Sub(onsale).Seconds()
		r.SeatsSoldSeconds = &t
	}
	r.SaleSeconds = max(end.Sub(onsale).Seconds(), 1)
	c := s.count
	c.mu.Lock()
	r.Counts.Holds, r.Counts.HoldConflicts, r.Counts.Confirmed = c.total["hold"], c.total["conflict"], c.total["sale"]
	r.Errors, r.Expected = c.unexp, c.exp
	r.Limited = map[string]int{}
	for _, m := range []map[string]int{r.Errors, r.Expected} {
		for k, n := range m {
			if strings.Contains(k, "429 rate_limited") {
				r.Limited[k] += n
			}
		}
	}
	from := int(onsale.Sub(s.start) / time.Second)
	rateOf := func(name string) rate {
		out := rate{Mean: float64(c.total[name]) / r.SaleSeconds}
		for i, n := range c.sec[name] {
			if i >= from {
				out.Peak = max(out.Peak, n)
			}
		}
		return out
	}
	r.Rates.Holds, r.Rates.Sales, r.Rates.Conflicts = rateOf("hold"), rateOf("sale"), rateOf("conflict")
	c.mu.Unlock()
	r.Counts.PlacesSold = int(s.gauge.sold.Load())

	s.latMu.Lock()
	r.Latency, r.ConnWait = distsMs(s.lat), distsMs(s.connWait)
	s.latMu.Unlock()

	// The queue: waits, the ETA against the wait that followed, the rate, fairness.
	var waits []float64
	var adm []time.Time
	var after, pre, firstETA, everyETA, firstPre, firstArrived, turnBefore, turnAfter [][2]float64
	for _, b := range buyers {
		if b.warned {
			r.ETA.Warned.Buyers++
		}
		if b.warnedFirst {
			r.ETA.Warned.First++
			if b.admitted {
				r.ETA.Warned.Admitted++
			}
			if b.outcome == outBought {
				r.ETA.Warned.Bought++
			}
		}
		if !b.admitted {
			continue
		}
		from := b.joinedAt
		if from.Before(onsale) {
			from = onsale
		}
		waits = append(waits, b.admittedAt.Sub(from).Seconds())
		adm = append(adm, b.admittedAt)
		for i, e := range b.etas {
			pair := [2]float64{float64(e.seconds), b.admittedAt.Sub(e.at).Seconds()}
			if i == 0 && !b.warnedFirst {
				firstETA = append(firstETA, pair)
				if b.preQueue {
					firstPre = append(firstPre, pair)
				} else {
					firstArrived = append(firstArrived, pair)
				}
				if !s.soldOutAt.IsZero() {
					if e.at.Add(time.Duration(e.seconds) * time.Second).Before(s.soldOutAt) {
						turnBefore = append(turnBefore, pair)
					} else {
						turnAfter = append(turnAfter, pair)
					}
				}
			}
			everyETA = append(everyETA, pair)
		}
		pair := [2]float64{float64(b.joinedAt.UnixNano()), float64(b.admittedAt.UnixNano())}
		if b.preQueue {
			pre = append(pre, pair)
		} else if b.joinedAt.After(onsale) && b.admittedAt.Sub(b.joinedAt) > s.cfg.Poll/2 {
			after = append(after, pair) // waited in the queue proper
		}
	}
	r.QueueWait = distOf(waits)
	r.ETA.First, r.ETA.Every = fit(firstETA), fit(everyETA)
	r.ETA.FirstPreQueue, r.ETA.FirstArrived = fit(firstPre), fit(firstArrived)
	r.ETA.FirstTurnBeforeSellOut, r.ETA.FirstTurnAfterSellOut = fit(turnBefore), fit(turnAfter)
	r.Admission.Configured, r.Admission.Slots, r.Admission.Admitted = s.cfg.Rate, s.cfg.Slots, len(adm)
	slices.SortFunc(adm, func(a, b time.Time) int { return a.Compare(b) })
	if len(adm) > 1 {
		r.Admission.Achieved = float64(len(adm)-1) / max(adm[len(adm)-1].Sub(adm[0]).Seconds(), 1)
		// The busiest 30 seconds. Admissions are seen at the buyers' next poll, up to
		// one poll late, so a window can count admissions of Poll more than its own
		// length: at 30 s and a 3 s poll, a tenth more than the admitter made.
		j := 0
		for i := range adm {
			for adm[i].Sub(adm[j]) > 30*time.Second {
				j++
			}
			r.Admission.Peak30s = max(r.Admission.Peak30s, float64(i-j+1)/30)
		}
	}
	r.Fairness.AfterOnsale, r.Fairness.Rho = len(after), spearman(after)
	r.Fairness.PreQueue, r.Fairness.RhoPreQueue = len(pre), spearman(pre)

	s.tlMu.Lock()
	r.Timeline = s.timeline
	s.tlMu.Unlock()
	for _, sm := range r.Timeline {
		r.Admission.MaxShopping = max(r.Admission.MaxShopping, sm.Active)
	}
	soldOut := 0.0
	if r.SoldOutSeconds != nil {
		soldOut = *r.SoldOutSeconds
	}
	r.Admission.Limit = limitOver(r.Timeline, soldOut, r.Admission.Configured)
	r.Speed = speedOver(r.Timeline, soldOut)
}

// spearman is the rank correlation of the pairs' two values, ties ranked by their mean.
func spearman(pairs [][2]float64) float64 {
	n := len(pairs)
	if n < 3 {
		return 0 // undefined; the report gives n beside it
	}
	rank := func(k int) []float64 {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(pairs[a][k], pairs[b][k]) })
		out := make([]float64, n)
		for i := 0; i < n; {
			j := i
			for j+1 < n && pairs[idx[j+1]][k] == pairs[idx[i]][k] {
				j++
			}
			for m := i; m <= j; m++ {
				out[idx[m]] = float64(i+j)/2 + 1
			}
			i = j + 1
		}
		return out
	}
	x, y := rank(0), rank(1)
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0 // undefined; the report gives n beside it
	}
	return sxy / math.Sqrt(sxx*syy)
}

// writeText writes the report for people.
func (r *report) writeText(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("onsale of %q (event %d): %d seats and %d standing places, %d buyers (seed %d)",
		r.Event.Slug, r.Event.ID, r.Event.Seats, r.Event.Places, r.Buyers, r.Seed)
	if r.SoldOutSeconds != nil {
		all := "never"
		if r.AllSoldSeconds != nil {
			all = fmt.Sprintf("%.1f s", *r.AllSoldSeconds)
		}
		p("sold out %.1f s after the onsale (nothing left to hold); nothing held either: %s", *r.SoldOutSeconds, all)
	} else {
		p("not sold out; the sale ran %.1f s from the onsale", r.SaleSeconds)
	}
	if r.SeatsSoldSeconds != nil {
		p("every seat sold (standing places aside) %.1f s after the onsale", *r.SeatsSoldSeconds)
	}
	p("outcomes:")
	for _, k := range sortedKeys(r.Outcomes) {
		p("  %-26s %7d", k, r.Outcomes[k])
	}
	p("holds %d, hold 409s %d, orders confirmed %d, places sold %d",
		r.Counts.Holds, r.Counts.HoldConflicts, r.Counts.Confirmed, r.Counts.PlacesSold)
	p("per second over the sale (mean / peak): holds %.1f / %d, sales %.1f / %d, hold 409s %.1f / %d",
		r.Rates.Holds.Mean, r.Rates.Holds.Peak, r.Rates.Sales.Mean, r.Rates.Sales.Peak, r.Rates.Conflicts.Mean, r.Rates.Conflicts.Peak)
	p("latency, ms            n      p50      p95      p99      max")
	for _, k := range sortedKeys(r.Latency) {
		d := r.Latency[k]
		p("  %-10s %9d %8.1f %8.1f %8.1f %8.1f", k, d.N, d.P50, d.P95, d.P99, d.Max)
	}
	var waits []string
	for _, k := range sortedKeys(r.ConnWait) {
		waits = append(waits, fmt.Sprintf("%s %.1f / %.1f", k, r.ConnWait[k].P95, r.ConnWait[k].P99))
	}
	if len(waits) > 0 {
		p("  of which waiting for one of the simulator's own connections, p95 / p99: %s", strings.Join(waits, ", "))
	}
	q := r.QueueWait
	p("queue wait from the onsale or arrival, s: n %d, p50 %.1f, p90 %.1f, p99 %.1f, max %.1f", q.N, q.P50, q.P90, q.P99, q.Max)
	for _, e := range []struct {
		what   string
		f      etaFit
		soldBy bool // a line of the split at the sell-out
	}{{"first ETA each buyer saw after the draw", r.ETA.First, false}, {"  of the pre-queue, at the draw", r.ETA.FirstPreQueue, false},
		{"  of those who came after the onsale", r.ETA.FirstArrived, false},
		{"  of those whose turn it showed before the sell-out", r.ETA.FirstTurnBeforeSellOut, true},
		{"  of those whose turn it showed after the sell-out (in as holds lapsed)", r.ETA.FirstTurnAfterSellOut, true},
		{"every ETA shown", r.ETA.Every, false}} {
		if e.soldBy && r.SoldOutSeconds == nil {
			continue // nothing sold out
		}
		p("%s, against the wait that followed: %d, %.0f%% within ±20%% (median error %.0f%%; %.0f%% too short, %.0f%% too long); of %d followed by 30 s or more, %.0f%%",
			e.what, e.f.N, 100*e.f.Within20, 100*e.f.MedianErr, 100*e.f.Short, 100*e.f.Long, e.f.N30, 100*e.f.Within2030)
	}
	if w := r.ETA.Warned; w.Buyers > 0 {
		p("told the tickets may be gone before their turn (more ahead than the unsold places are likely to serve), instead of a wait: %d buyers; %d before any wait was shown them, of whom %d were let in all the same and %d bought",
			w.Buyers, w.First, w.Admitted, w.Bought)
	}
	a := r.Admission
	p("admission: %d admitted, %.1f/s from the first to the last (busiest 30 s: %.1f/s, seen up to a poll late), configured %.1f/s; at most %d shopping at once (slots %d)",
		a.Admitted, a.Achieved, a.Peak30s, a.Configured, a.MaxShopping, a.Slots)
	if l := a.Limit; l != nil {
		p("the server's admission limit over the sale (lowered while past its LATENCY_BOUND): mean %.1f/s, from %.1f to %.1f/s, below the configured rate %.0f%% of the time",
			l.Mean, l.Min, l.Max, 100*l.Below)
	}
	if sp := r.Speed; sp != nil {
		p("the machine's speed over the sale: gzip of 128 KB took %.1f / %.1f / %.1f ms of CPU at p10 / p50 / p90 of its seconds; over %.1f × p10 (two thirds of its fast seconds' speed or slower) %.0f%% of the time",
			sp.P10, sp.P50, sp.P90, slowFactor, 100*sp.Slow)
	}
	p("fairness (Spearman's rho of arrival and admission): after the onsale %.3f over %d buyers (1 is first come, first served); pre-queue %.3f over %d (near 0 is a fair draw)",
		r.Fairness.Rho, r.Fairness.AfterOnsale, r.Fairness.RhoPreQueue, r.Fairness.PreQueue)
	p("normal refusals:")
	for _, k := range sortedKeys(r.Expected) {
		p("  %-40s %7d", k, r.Expected[k])
	}
	for _, t := range []struct {
		name   string
		counts map[string]int
	}{{"errors", r.Errors}, {"refused by the rate limits", r.Limited}} {
		if len(t.counts) == 0 {
			p("%s: none", t.name)
			continue
		}
		p("%s:", t.name)
		for _, k := range sortedKeys(t.counts) {
			p("  %-40s %7d", k, t.counts[k])
		}
	}
	for _, m := range r.Metrics {
		switch {
		case m.Absent:
			p("metrics: %s absent (the simulator counted %d %s)", m.Metric, m.Count, m.Sim)
		case m.Match:
			p("metrics: %s +%.0f, the simulator counted %d %s: match", m.Metric, m.Delta, m.Count, m.Sim)
		default:
			p("metrics: %s +%.0f, the simulator counted %d %s: MISMATCH", m.Metric, m.Delta, m.Count, m.Sim)
		}
	}
	if len(r.Violations) == 0 {
		p("invariants: all hold")
	} else {
		p("INVARIANTS BROKEN:")
		for _, v := range r.Violations {
			p("  %s", v)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// distsMs is the distribution in milliseconds of each step's durations.
func distsMs(byStep map[string][]time.Duration) map[string]dist {
	out := make(map[string]dist, len(byStep))
	for step, ds := range byStep {
		ms := make([]float64, len(ds))
		for i, d := range ds {
			ms[i] = float64(d) / float64(time.Millisecond)
		}
		out[step] = distOf(ms)
	}
	return out
}
