package main

import (
	"cmp"
	"math"
	"slices"
	"time"

	"boxoffice/internal/benchkit"
)

// queuePairs is what the queue's figures are made of, gathered over the admitted
// buyers: the waits from the onsale or arrival, the admissions, each ETA shown
// against the wait that followed (the first each buyer saw, split by where the buyer
// came from and by the sell-out, and every one), and arrival against admission.
type queuePairs struct {
	waits                  []float64
	adm                    []time.Time
	after, pre             [][2]float64
	firstETA, everyETA     [][2]float64
	firstPre, firstArrived [][2]float64
	turnBefore, turnAfter  [][2]float64
}

// fillQueue computes the queue's figures: waits, the ETA against the wait that
// followed, the admission rate, fairness.
func (s *sim) fillQueue(r *report, buyers []*buyer, onsale time.Time) {
	var q queuePairs
	for _, b := range buyers {
		r.ETA.Warned.count(b)
		if b.admitted {
			q.add(b, onsale, s.soldOutAt, s.cfg.Poll)
		}
	}
	r.QueueWait = benchkit.DistOf(q.waits)
	r.ETA.First, r.ETA.Every = fit(q.firstETA), fit(q.everyETA)
	r.ETA.FirstPreQueue, r.ETA.FirstArrived = fit(q.firstPre), fit(q.firstArrived)
	r.ETA.FirstTurnBeforeSellOut, r.ETA.FirstTurnAfterSellOut = fit(q.turnBefore), fit(q.turnAfter)
	r.Admission.Configured, r.Admission.Slots, r.Admission.Admitted = s.cfg.Rate, s.cfg.Slots, len(q.adm)
	r.Admission.Achieved, r.Admission.Peak30s = admissionRates(q.adm)
	r.Admission.BySellOut, r.Admission.FloorSeconds = sellOutFloor(q.adm, onsale, s.soldOutAt, s.cfg.Rate)
	r.Fairness.AfterOnsale, r.Fairness.Rho = len(q.after), spearman(q.after)
	r.Fairness.PreQueue, r.Fairness.RhoPreQueue = len(q.pre), spearman(q.pre)
}

// count counts b if the queue page told b that the tickets may be gone first.
func (w *warned) count(b *buyer) {
	if b.warned {
		w.Buyers++
	}
	if b.warnedFirst {
		w.First++
		if b.admitted {
			w.Admitted++
		}
		if b.outcome == outBought {
			w.Bought++
		}
	}
}

// add adds an admitted buyer's wait, ETAs and arrival; soldOutAt is zero when nothing
// sold out, poll the queue page's pace.
func (q *queuePairs) add(b *buyer, onsale, soldOutAt time.Time, poll time.Duration) {
	from := b.joinedAt
	if from.Before(onsale) {
		from = onsale
	}
	q.waits = append(q.waits, b.admittedAt.Sub(from).Seconds())
	q.adm = append(q.adm, b.admittedAt)
	for i, e := range b.etas {
		pair := [2]float64{float64(e.seconds), b.admittedAt.Sub(e.at).Seconds()}
		if i == 0 && !b.warnedFirst {
			q.firstETA = append(q.firstETA, pair)
			if b.preQueue {
				q.firstPre = append(q.firstPre, pair)
			} else {
				q.firstArrived = append(q.firstArrived, pair)
			}
			if !soldOutAt.IsZero() {
				if e.at.Add(time.Duration(e.seconds) * time.Second).Before(soldOutAt) {
					q.turnBefore = append(q.turnBefore, pair)
				} else {
					q.turnAfter = append(q.turnAfter, pair)
				}
			}
		}
		q.everyETA = append(q.everyETA, pair)
	}
	pair := [2]float64{float64(b.joinedAt.UnixNano()), float64(b.admittedAt.UnixNano())}
	if b.preQueue {
		q.pre = append(q.pre, pair)
	} else if b.joinedAt.After(onsale) && b.admittedAt.Sub(b.joinedAt) > poll/2 {
		q.after = append(q.after, pair) // waited in the queue proper
	}
}

// admissionRates is the admissions a second from the first to the last, and in the
// busiest 30 seconds. Admissions are seen at the buyers' next poll, up to one poll
// late, so a window can count admissions of a poll more than its own length: at
// 30 s and a 3 s poll, a tenth more than the admitter made.
func admissionRates(adm []time.Time) (achieved, peak30s float64) {
	if len(adm) < 2 {
		return 0, 0
	}
	slices.SortFunc(adm, func(a, b time.Time) int { return a.Compare(b) })
	achieved = float64(len(adm)-1) / max(adm[len(adm)-1].Sub(adm[0]).Seconds(), 1)
	j := 0
	for i := range adm {
		for adm[i].Sub(adm[j]) > 30*time.Second {
			j++
		}
		peak30s = max(peak30s, float64(i-j+1)/30)
	}
	return achieved, peak30s
}

// sellOutFloor counts the admissions adm (sorted) up to soldOutAt (zero: nothing sold
// out, and no floor) and answers when, in seconds after the onsale, the last of them
// would have come at rate a second from the first: the earliest the same buyers could
// have sold the event out at this rate.
func sellOutFloor(adm []time.Time, onsale, soldOutAt time.Time, rate float64) (int, float64) {
	if soldOutAt.IsZero() || len(adm) == 0 || rate <= 0 {
		return 0, 0
	}
	n, _ := slices.BinarySearchFunc(adm, soldOutAt, func(a, t time.Time) int {
		if a.After(t) {
			return 1
		}
		return -1
	})
	return n, adm[0].Sub(onsale).Seconds() + float64(n)/rate
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
