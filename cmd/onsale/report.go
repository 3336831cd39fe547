package main

import (
	"math"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
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
	Buyers int    `json:"buyers"`
	Seed   uint64 `json:"seed"`
	// FrontSettle is, in a run through the front door, how long after the draw its
	// cursor opened (the board's opensAt): the waits shown at the draw include it
	// (onsale eta replays them so).
	FrontSettle float64        `json:"frontDoorSettleSeconds,omitempty"`
	Outcomes    map[string]int `json:"outcomes"`
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
	Latency map[string]benchkit.Dist `json:"latencyMs"`
	// ConnWait is the part of each call's latency spent waiting for one of the
	// simulator's own connections (its pools are bounded; browsers do not share them).
	ConnWait  map[string]benchkit.Dist `json:"connWaitMs"`
	QueueWait benchkit.Dist            `json:"queueWaitSeconds"`
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
		// BySellOut is how many were admitted up to the sell-out, and FloorSeconds
		// when the sell-out would have come had they been admitted at the configured
		// rate from the first admission on: about the soonest a server that admitted
		// at the full rate throughout sells this crowd out (how many admissions it
		// takes to buy the venue is the crowd's, not the server's). 0: nothing sold
		// out.
		BySellOut    int     `json:"admittedBySellOut,omitempty"`
		FloorSeconds float64 `json:"sellOutFloorSeconds,omitempty"`
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
	Errors   map[string]int `json:"errors"`
	Limited  map[string]int `json:"limited"` // the rate limits' refusals, by step and limit: part of errors and expected
	Expected map[string]int `json:"expected"`
	// Retried counts the calls sent again with the same Idempotency-Key after a 502,
	// a 503 or no answer, by step and their first and last answers.
	Retried    map[string]int `json:"retried"`
	Metrics    []metricJSON   `json:"metrics,omitempty"`
	Lapses     *lapsesJSON    `json:"lapses,omitempty"`
	Basket     *basketJSON    `json:"basket,omitempty"`
	Pricing    *pricingJSON   `json:"pricing,omitempty"`
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
		out.MedianErr = benchkit.DistOf(errs).P50
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

// Failed says whether the run broke an invariant or met answers that are no normal
// part of an onsale.
func (r *report) Failed() bool { return len(r.Violations) > 0 || len(r.Errors) > 0 }

// fill computes the figures from what the buyers recorded.
func (s *sim) fill(r *report, buyers []*buyer, onsale, ended time.Time, first *board) {
	r.Event.ID, r.Event.Slug, r.Event.OnsaleAt = s.event.ID, s.event.Slug, s.event.OnsaleAt
	r.Event.Seats = first.available + first.held + first.sold
	r.Event.Places = first.gaRemaining
	r.Buyers, r.Seed = len(buyers), s.cfg.Seed
	if bd := s.qboard.cur.Load(); s.cfg.Front && bd != nil && !bd.OpensAt.IsZero() {
		r.FrontSettle = bd.OpensAt.Sub(bd.DrawAt).Seconds()
	}
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
	r.Errors, r.Expected, r.Retried = c.unexp, c.exp, c.retried
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
	s.fillQueue(r, buyers, onsale)
	s.fillTimeline(r)
}

// fillTimeline keeps the timeline, and sums it up over the sale: the most shoppers
// at once, the server's admission limit, the machine's speed.
func (s *sim) fillTimeline(r *report) {
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
