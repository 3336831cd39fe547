package waitroom

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The governor lowers the admission rate while the application is past its latency
// bound (Hooks.Load at 1 or more) and brings it back towards the configured rate,
// its ceiling, while it is well within. An organiser configures the rate the venue's
// sale should go at; the governor keeps the room from admitting faster than this
// machine serves at that moment, whatever its speed and whatever else it is doing.
//
// Each instance governs from its own latency: the admitter's holder its ticks, every
// instance its joins' direct admissions. Behind a load balancer the holder's share of
// the sale's steps stands for the whole; a share kept in Redis would let a slow
// instance hold the room back for the others too, which is not obviously better.
//
// Additive increase, multiplicative decrease, as TCP does with a congestion window,
// slowed to the application's lag: the admitted reach their first hold seconds after
// admission and shop for tens of seconds, so a cut shows in the latency only some 10 to
// 20 seconds later. Cutting a quarter every 3 s and adding back a twentieth of the
// configured rate a second swings between a tenth and four fifths of it with a period
// of a minute, and the wait shown in the queue, which follows the measured rate, is
// then right for 7 % of buyers. So: a fifth off at a time, not again within govCutGap,
// and back by a hundredth of the configured rate a second, about 20 s to climb a fifth
// back at make onsale's rates; four hundredths a second while the load is under
// govIdle. After the arrival burst's cuts (about four in 40 s, to two fifths of the
// rate) the steps' p95 falls to a fifth of the bound; the climb back at a hundredth
// would take 73 s, which every first ETA of the burst has to absorb, and at four
// hundredths it takes 17 to 25 s, though a climb that quick also meets the sale's own
// load again sooner (more cuts after the burst). After the first minute most cuts come
// 9 to 12 s after the one before, with the latency back under the bound within 5 s of
// the second; yet a longer gap (15 s) slows the first descent through the arrival
// burst, the start stays overloaded longer and joins and looks are refused as Redis
// calls run past their 300 ms. The first minute matters more: 10 s.
const (
	govPeriod    = time.Second      // how often the governor reads the load
	govCutGap    = 10 * time.Second // at least this long between two cuts
	govCut       = 0.8              // a cut keeps this share of the present rate
	govRaise     = 0.01             // a raise adds this share of the configured rate
	govFloor     = 0.1              // the share of the configured rate never cut below
	govEasy      = 0.7              // below this load the rate rises; between it and 1 it holds
	govIdle      = 0.35             // below this load the rate rises govIdleRaise times as fast
	govIdleRaise = 4                // how many raises a period far below the bound
)

// governor is the share of the configured rate an instance admits at now. The share
// is read on every join, look and board (now), lock-free; only step, once a period,
// takes the lock.
type governor struct {
	bits atomic.Uint64 // math.Float64bits of the share; 0 (never set): 1, the configured rate

	mu  sync.Mutex
	at  time.Time // the last reading
	cut time.Time // the last cut
}

// step reads the load (if a period has passed since the last reading) and moves the
// share; it answers the share and, when it changed, the share before.
func (g *governor) step(now time.Time, load func() float64) (share, before float64, changed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	share = g.now()
	if load == nil || now.Sub(g.at) < govPeriod {
		return share, share, false
	}
	g.at = now
	before = share
	switch l := load(); {
	case l >= 1 && now.Sub(g.cut) >= govCutGap:
		share = max(govFloor, share*govCut)
		g.cut = now
	case l < govIdle:
		share = min(1, share+govIdleRaise*govRaise)
	case l < govEasy:
		share = min(1, share+govRaise)
	}
	g.set(share)
	return share, before, share != before
}

// now is the share without a reading.
func (g *governor) now() float64 {
	if b := g.bits.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	return 1
}

func (g *governor) set(share float64) { g.bits.Store(math.Float64bits(share)) }

// govern reads the load for the governor and says what changed in the log: each cut,
// and the return to the configured rate.
func (r *Room) govern(now time.Time) {
	share, before, changed := r.gov.step(now, r.hooks.Load)
	switch {
	case !changed:
	case share < before:
		r.log.Info("waitroom admitter: the application is past its latency bound; admitting slower",
			"share", round2(share), "was", round2(before))
	case share == 1:
		r.log.Info("waitroom admitter: back to the configured admission rate")
	default:
		r.log.Debug("waitroom admitter: admitting faster", "share", round2(share))
	}
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Limited is s as the room applies it now: the configured rate times the governor's
// share. Everything the room does with a rate (the bucket, the ETA before a rate is
// measured) takes it from here.
func (r *Room) Limited(s Settings) Settings {
	share := r.gov.now()
	s.expect = s.Rate * expectedShare(share)
	s.Rate *= share
	return s
}

// etaHorizon is how far ahead expectedShare looks.
const etaHorizon = time.Minute

// expectedShare is the share of the configured rate that the wait shown in the queue
// assumes when the governor admits at share now: halfway between now and the mean
// share over the next etaHorizon if the governor climbs back by govRaise a second, as
// it does while the application is within its bound.
//
// A cut is followed either by the climb back or by more cuts, and an onsale sees both.
// At make onsale's 44/s a single cut in the arrival burst (20 % off, back within 22 s)
// comes while most of the crowd is arriving for waits of minutes; from the rate just
// after the cut, 40 % of those arrivals would be shown waits more than 20 % too long.
// Replayed from an onsale's trace (docs/BENCHMARKS.md), the room's first ETAs are
// within ±20 % for 70 % of buyers from the rate just after the cut, 95 % from the
// climb alone, 97 % from halfway; live, from halfway, 97 and 98 % against 85 and 87 %
// from the rate now on the same buyers. At 80/s, where cuts follow one another,
// halfway moves it by -5 to +6 points against the rate now.
func expectedShare(now float64) float64 {
	return (now + ClimbMean(now)) / 2
}

// ClimbMean is the mean share of the configured rate over the next etaHorizon of a
// governor at share now that climbs back by govRaise a second, as it does while the
// application is within its bound.
func ClimbMean(now float64) float64 {
	if now >= 1 {
		return 1
	}
	h := etaHorizon.Seconds()
	back := (1 - now) / govRaise // seconds until the configured rate
	if back >= h {
		return now + govRaise*h/2
	}
	return ((now+1)/2*back + (h - back)) / h
}

// limitedEvent is ev with its settings Limited.
func (r *Room) limitedEvent(ev Event) Event {
	ev.Settings = r.Limited(ev.Settings)
	return ev
}
