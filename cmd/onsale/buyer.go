package main

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"boxoffice/internal/benchkit"
)

// Test cards of the built-in payment provider (README: Configuration).
const (
	cardGood     = "4242 4242 4242 4242"
	cardDeclined = "4000 0000 0000 0002"
)

// Outcomes: how a buyer's visit ended.
const (
	outBought    = "bought"
	outSoldOut   = "sold out"
	outAbandoned = "abandoned"
	outIdle      = "admitted, never held"
	outLapsed    = "turn lapsed"
	outDeclined  = "declined, gave up"
	outExpired   = "hold expired"
	outRefunded  = "paid, refunded"
	outUnsettled = "paid, no tickets in time"
	outFailed    = "error"
	outCut       = "cut by the time limit"
)

// buyer is one simulated person: when they arrive, what they want, and what happened.
type buyer struct {
	id      int
	arrival time.Time // when the buyer opens the event page
	rng     *rand.Rand
	c       *client
	sim     *sim

	// What happened, for the report; written by the buyer's goroutine only, read
	// after it ended.
	joinedAt time.Time
	preQueue bool      // joined before the draw
	etas     []etaSeen // every ETA shown after the draw, the first first
	// warned: the page said, after the draw, that the tickets may be gone before the
	// buyer's turn (instead of a wait); warnedFirst: before it showed any wait.
	warned, warnedFirst bool
	admittedAt          time.Time
	admitted            bool
	orderID             int64
	paid                bool // a charge was taken (pay answered 202): tickets or a refund are owed
	// payUnanswered: a pay call went out and no answer came back (the time limit cut
	// it, or the connection failed): the charge may have been taken all the same.
	payUnanswered bool
	keys          int // Idempotency-Keys used so far (send)
	outcome       string
	// want is how many seats a basket buyer wants (0 for the others): they hold one,
	// then add the others one by one (basket.go).
	want   int
	basket basketUse
	price  priceUse
}

// etaSeen is an ETA the queue page showed, when, for how many admissions (the
// buyer's own included; 0 when the page did not know), and the admission rate the
// room had measured then, as its latest board said (0: not yet, -1: no board).
type etaSeen struct {
	seconds int
	at      time.Time
	places  int
	rate    float64
}

// visit plays the buyer's whole visit, as the pages would: the queue, a hold, checkout,
// payment and the wait for tickets. Every answer that is not a normal part of an onsale
// is counted as an error by step and kind; the visit then ends.
func (b *buyer) visit(ctx context.Context) {
	s := b.sim
	if !sleep(ctx, time.Until(b.arrival)) {
		b.outcome = outCut
		return
	}
	if s.cfg.Front {
		if !b.frontQueue(ctx) {
			return
		}
	} else {
		var sess struct {
			CSRFToken string `json:"csrfToken"`
		}
		if !b.call(ctx, "session", http.MethodGet, "/api/v1/session", nil, &sess) {
			return
		}
		b.c.csrf = sess.CSRFToken
		if !b.queue(ctx) {
			return
		}
	}
	// Shopping (taking a slot's worth of the server's attention) lasts from the
	// admission until the buyer paid, released or walked away.
	shopping := true
	s.gauge.active.Add(1)
	doneShopping := func() {
		if shopping {
			shopping = false
			s.gauge.active.Add(-1)
		}
	}
	defer doneShopping()
	b.think(ctx)
	if b.walksAway() {
		return
	}
	h, ok := b.hold(ctx)
	if !ok {
		return
	}
	if len(h.Seats) > 0 && h.GAPlaces == nil && b.want > len(h.Seats) && !b.fillBasket(ctx, &h, b.want) {
		return
	}
	places := len(h.Seats)
	if h.GAPlaces != nil {
		places += h.GAPlaces.Quantity
	}
	s.gauge.holding.Add(1)
	holding := true
	doneHolding := func() {
		if holding {
			holding = false
			s.gauge.holding.Add(-1)
		}
	}
	defer doneHolding()
	if b.rng.Float64() < s.cfg.Abandon {
		b.outcome = outAbandoned
		// Half close the tab (the hold lapses at its expiry), half press release.
		if b.rng.IntN(2) == 0 {
			b.think(ctx)
			b.call(ctx, "release", http.MethodDelete, "/api/v1/holds/"+h.HoldID, nil, nil)
		}
		return
	}
	b.think(ctx)
	if !b.choosePrices(ctx, h.HoldID) {
		return
	}
	if b.orderID, ok = b.checkout(ctx, h.HoldID); !ok {
		return
	}
	if !b.pay(ctx) {
		return
	}
	doneHolding()
	doneShopping()
	b.waitTickets(ctx, places)
}

// walksAway says whether the buyer, admitted, goes without holding anything (the
// -idle share): the server lets the turn lapse after the event's idle window and
// gives the slot to the next in line.
func (b *buyer) walksAway() bool {
	if b.rng.Float64() >= b.sim.cfg.Idle {
		return false
	}
	b.outcome = outIdle
	return true
}

// queue joins the waiting room and waits as the queue page does until the buyer is
// admitted: it refreshes what it shows from the event's board (the crowd's one copy)
// at the server's pace, and looks itself when the server says (lookAfterSeconds:
// 2.5 min when its turn is due within that, else about a minute), when the board
// shows its turn, or when the board's news (the
// draw, sold out) needs a look, spread over a few seconds. It reports whether to go on.
func (b *buyer) queue(ctx context.Context) bool {
	s := b.sim
	b.joinedAt = time.Now()
	var st queueJSON
	join := func() bool { return b.enter(ctx, "/api/v1/events/"+s.eventPath+"/queue", &st) }
	if !join() {
		return false
	}
	b.preQueue = st.PreQueue
	s.gauge.queued.Add(1)
	defer s.gauge.queued.Add(-1)
	var took time.Duration // how long the last look took to answer
	lookedAt := time.Now()
	lookAt := b.nextLook(st, lookedAt)
	for !st.Admitted {
		if st.SoldOut {
			return b.soldOut("queue: sold out")
		}
		pace := b.show(st, lookedAt)
		// counted, as the page counts it, from when the last look went out
		if !b.pause(ctx, max(pace-took, 250*time.Millisecond)) {
			return false
		}
		took = 0
		bd := s.qboard.cur.Load()
		if bd != nil && bd.SoldOut && onBoard(st, bd) {
			// The page shows sold out from the board; the buyer goes.
			return b.soldOut("queue: sold out")
		}
		if !b.looks(st, bd, &lookAt) {
			continue // the board was enough
		}
		lookedAt = time.Now()
		a, ok := b.try(ctx, "poll", http.MethodGet, "/api/v1/events/"+s.eventPath+"/queue", nil, &st)
		if !ok {
			return false
		}
		took = a.Took
		if a.Status != http.StatusOK {
			if !b.pollRefused(ctx, a, pace) {
				return false
			}
			st = queueJSON{Position: -1}
			lookAt = time.Now() // and look again at the next refresh
			continue
		}
		if !st.Admitted && !st.PreQueue && st.Position == 0 && !st.SoldOut {
			// The place was lost (unseen too long, or Redis came back empty): the
			// page joins again.
			s.count.unexpected("poll: place lost, joined again")
			if !join() {
				return false
			}
		}
		lookAt = b.nextLook(st, lookedAt)
	}
	b.admitted, b.admittedAt = true, time.Now()
	b.c.http.Transport = s.shopRT // same cookies, the shoppers' connections
	s.count.event("admit")
	return true
}

// enter joins the waiting room by a POST to path (the join, or the front door's
// place), answered into out, with a proof of work each time, as the page's widget
// does; a paused queue is asked again after its Retry-After. It reports whether to
// go on.
func (b *buyer) enter(ctx context.Context, path string, out any) bool {
	for {
		if !b.prove(ctx) {
			return false
		}
		a, ok := b.try(ctx, "join", http.MethodPost, path, nil, out)
		if !ok {
			return false
		}
		if a.Status == http.StatusOK {
			return true
		}
		b.fail("join", a) // counted; a paused queue is asked again, as the page does
		if a.Status != http.StatusServiceUnavailable || !sleep(ctx, max(a.RetryAfter, time.Second)) {
			return false
		}
	}
}

// show is what the queue page shows between its looks, from its last look (st, at
// lookedAt) and then from the board: the ETA it shows is recorded, or that the
// tickets may be gone first. It returns the pace of the page's next refresh.
func (b *buyer) show(st queueJSON, lookedAt time.Time) time.Duration {
	s := b.sim
	eta, pace, places, rate, gone := st.EtaSeconds, s.cfg.Poll, 0, -1.0, st.LikelyGone
	if st.Position > 0 {
		places = st.Ahead + 1
	}
	if st.PollAfter > 0 {
		pace = time.Duration(st.PollAfter) * time.Second
	}
	drawn := false // a pre-queue page that stands among the board's drawn places
	if seen := s.qboard.cur.Load(); seen != nil {
		rate = seen.RatePerSecond
		if e, p, n, g, ok := fromBoard(st, lookedAt, seen); ok {
			eta, pace, gone = e, p, g
			if n > 0 {
				places = n
				drawn = st.PreQueue
			}
		}
	}
	if (!st.PreQueue || drawn) && gone && !b.warned {
		b.warned, b.warnedFirst = true, len(b.etas) == 0
	}
	if (!st.PreQueue || drawn) && eta > 0 && !gone {
		b.etas = append(b.etas, etaSeen{eta, time.Now(), places, rate})
	}
	return pace
}

// nextLook is when the page looks itself next, after its look at lookedAt answered
// st.
func (b *buyer) nextLook(st queueJSON, lookedAt time.Time) time.Time {
	d := time.Duration(st.LookAfter) * time.Second
	if st.PreQueue {
		d += jitter(b.rng, crowdJitter) // as the page: the pre-queue's looks come due together
	}
	return lookedAt.Add(d)
}

// looks says whether the page looks itself now: the board says so, or its look is
// due (the board's news may bring it forward, into lookAt).
func (b *buyer) looks(st queueJSON, bd *queueBoardSeen, lookAt *time.Time) bool {
	now, spread := mustLook(st, bd)
	if spread > 0 {
		*lookAt = minTime(*lookAt, time.Now().Add(jitter(b.rng, spread)))
	}
	return now || !time.Now().Before(*lookAt)
}

// pause waits d, as the page does; when the time limit cuts it short, the visit
// ends.
func (b *buyer) pause(ctx context.Context, d time.Duration) bool {
	if !sleep(ctx, d) {
		b.outcome = outCut
		return false
	}
	return true
}

// pollRefused counts a look the server refused: a paused queue (503) is asked again
// after Retry-After (the loop's own wait, pace, included); anything else ends the
// visit.
func (b *buyer) pollRefused(ctx context.Context, a answer, pace time.Duration) bool {
	b.fail("poll", a)
	return a.Status == http.StatusServiceUnavailable && b.pause(ctx, a.RetryAfter-pace)
}

// soldOut ends the visit with nothing left to buy, a normal refusal counted under
// why. It returns false: the visit does not go on.
func (b *buyer) soldOut(why string) bool {
	b.outcome = outSoldOut
	b.sim.count.expected(why)
	return false
}

// hold asks for seats the way this buyer likes them (seats of their choice biased to
// the front, best available, or standing places), and on a conflict asks again as a
// person would: other seats, then best available, then standing. A basket buyer (the
// -basket share of those who want seats) wants two or more and asks for one here.
func (b *buyer) hold(ctx context.Context) (holdJSON, bool) {
	s := b.sim
	qty := 1 + b.rng.IntN(s.cfg.MaxQty)
	mode := b.rng.Float64()
	kind := "best"
	switch {
	case mode < s.cfg.Specific:
		kind = "seats"
	case mode < s.cfg.Specific+s.cfg.Best:
	default:
		kind = "ga"
	}
	if kind != "ga" && s.cfg.MaxQty > 1 && b.rng.Float64() < s.cfg.Basket {
		b.want, qty = 2+b.rng.IntN(s.cfg.MaxQty-1), 1
	}
	triedGA, triedSeats := false, false
	for attempt := 0; attempt < 8; attempt++ {
		body := b.holdBody(kind, qty)
		if body == nil { // the map shows none of that kind left
			if kind == "ga" { // no standing place: as good as sold out
				if triedGA = true; triedSeats {
					return holdJSON{}, b.soldOut("hold: sold out")
				}
			}
			kind = "best"
			continue
		}
		var h holdJSON
		a, ok := b.send(ctx, "hold", http.MethodPost, "/api/v1/events/"+s.eventPath+"/holds", body, &h)
		if !ok {
			return h, false
		}
		switch {
		case a.Status == http.StatusCreated:
			s.count.event("hold")
			return h, true
		case a.Status == http.StatusConflict && a.Err.Code == "seat_unavailable":
			s.count.event("conflict")
			if attempt >= 1 {
				kind = "best"
			}
		case a.Status == http.StatusConflict && a.Err.Code == "busy":
			s.count.event("conflict")
			s.count.expected("hold: 409 busy")
			sleep(ctx, time.Duration(50+b.rng.IntN(200))*time.Millisecond)
		case a.Status == http.StatusConflict && a.Err.Code == "sold_out":
			s.count.event("conflict")
			if kind == "ga" {
				triedGA = true
			} else {
				triedSeats = true
			}
			if triedGA && triedSeats {
				return h, b.soldOut("hold: sold out")
			}
			if kind == "ga" {
				kind = "best"
			} else {
				kind = "ga"
			}
			qty = 1 + b.rng.IntN(qty) // fewer, if that is all there is
		case a.Status == http.StatusTooManyRequests && a.Err.Code == "rate_limited":
			b.fail("hold", a)
			sleep(ctx, max(a.RetryAfter, time.Second))
		case a.Status == http.StatusForbidden && a.Err.Code == "proof_required" && attempt == 0:
			// A session that never joined a queue: its first hold needs a proof, which
			// the seat page's widget solves; asked again with one.
			s.count.expected("hold: 403 proof_required, then proved")
			if !b.prove(ctx) {
				return h, false
			}
			continue
		default:
			b.fail("hold", a)
			return h, false
		}
		b.think(ctx)
	}
	return holdJSON{}, b.soldOut("hold: gave up after 8 tries")
}

// holdBody is what a hold of kind asks for: seats picked from the map, best
// available, or standing places; nil when the map shows none of that kind left.
func (b *buyer) holdBody(kind string, qty int) any {
	s := b.sim
	switch kind {
	case "seats":
		if ids := s.seats.pick(b.rng, qty); ids != nil {
			return map[string]any{"seatIds": ids}
		}
	case "best":
		return map[string]any{"quantity": qty, "together": qty > 1 && b.rng.IntN(2) == 0}
	case "ga":
		if tier := s.seats.gaTier(); tier != 0 {
			return map[string]any{"gaTierId": tier, "quantity": qty}
		}
	}
	return nil
}

// call makes a call that must succeed (2xx); anything else is an error and ends the
// visit.
func (b *buyer) call(ctx context.Context, step, method, path string, body, out any) bool {
	a, ok := b.try(ctx, step, method, path, body, out)
	if !ok {
		return false
	}
	if a.Status >= 300 {
		b.fail(step, a)
		return false
	}
	return true
}

// fail counts an answer that is no normal part of an onsale. A seat call refused for
// want of an admission is normal before the buyer was admitted, and after it only when
// the turn lapsed, no seat held in time (a slow buyer, or a slow server): the visit
// then ends.
func (b *buyer) fail(step string, a answer) {
	if a.Err.Code == "not_admitted" && !b.admitted {
		b.sim.count.expected(step + ": " + a.kind() + " before admission")
		return
	}
	if a.Err.Code == "not_admitted" && a.Err.Lapsed {
		b.sim.count.expected(step + ": " + a.kind() + ", the turn lapsed")
		b.outcome = outLapsed
		return
	}
	b.sim.count.unexpected(step + ": " + a.kind())
	b.outcome = outFailed
}

// think pauses as a person does between two pages: exponentially distributed around
// the configured mean, capped at four times it.
func (b *buyer) think(ctx context.Context) {
	m := b.sim.cfg.Think
	if m <= 0 {
		return
	}
	d := time.Duration(math.Min(b.rng.ExpFloat64(), 4) * float64(m))
	sleep(ctx, d)
}

// sleep waits d or until ctx ends, and reports whether ctx is still alive.
var sleep = benchkit.Sleep
