package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	"boxoffice/internal/benchkit"
)

// A basket buyer (the -basket share of those who want seats) holds one seat first,
// then adds the others one at a time (POST /holds/{holdId}/seats), each a free seat
// the map shows near those already held, as a person taps seats on the map one by one.

// basketUse is what one buyer's basket did, for the report.
type basketUse struct {
	adds    int            // add calls answered
	added   int            // seats they added
	refused map[string]int // add calls refused, by the answer's kind
}

// basketJSON sums the baskets up: the buyers who added seats to a hold one by one,
// their add calls' latency and the refusals, by reason.
type basketJSON struct {
	Buyers  int            `json:"buyers"`
	Calls   int            `json:"addCalls"`
	Added   int            `json:"seatsAdded"`
	Latency benchkit.Dist  `json:"addLatencyMs"`
	Refused map[string]int `json:"refused"`
}

// basketOf sums the buyers' baskets; nil when nobody used one.
func basketOf(buyers []*buyer, lat benchkit.Dist) *basketJSON {
	out := &basketJSON{Latency: lat, Refused: map[string]int{}}
	for _, b := range buyers {
		if b.basket.adds == 0 {
			continue
		}
		out.Buyers++
		out.Calls += b.basket.adds
		out.Added += b.basket.added
		for k, n := range b.basket.refused {
			out.Refused[k] += n
		}
	}
	if out.Buyers == 0 {
		return nil
	}
	return out
}

// fillBasket adds seats to the buyer's hold h, one call a seat, until it has want
// seats, no free seat is near, or a few calls were refused. It returns false when the
// visit ends (the hold expired, or an answer that is no normal part of an onsale);
// h is then as it was last answered.
func (b *buyer) fillBasket(ctx context.Context, h *holdJSON, want int) bool {
	s := b.sim
	lost := map[int64]bool{} // seats refused: taken meanwhile, not to be asked again
	for tries := 0; len(h.Seats) < want && tries < 2*want; tries++ {
		b.think(ctx)
		id := s.seats.near(b.rng, h.Seats, lost)
		if id == 0 {
			s.count.expected("add: no free seat near")
			return true // the buyer goes on with what they hold
		}
		var next holdJSON
		a, ok := b.send(ctx, "add", http.MethodPost, "/api/v1/holds/"+h.HoldID+"/seats", map[string]any{"seatIds": []int64{id}}, &next)
		if !ok {
			return false
		}
		b.basket.adds++
		if a.Status == http.StatusOK {
			b.basket.added += len(next.Seats) - len(h.Seats)
			*h = next
			s.count.event("add")
			continue
		}
		if b.basket.refused == nil {
			b.basket.refused = map[string]int{}
		}
		b.basket.refused[a.kind()]++
		switch {
		case a.Status == http.StatusConflict && a.Err.Code == "seat_unavailable":
			lost[id] = true
		case a.Status == http.StatusConflict && a.Err.Code == "busy":
			sleep(ctx, time.Duration(50+b.rng.IntN(200))*time.Millisecond)
		case a.Status == http.StatusConflict && a.Err.Code == "limit_exceeded":
			s.count.expected("add: 409 limit_exceeded")
			return true
		case a.Status == http.StatusGone:
			b.outcome = outExpired
			return false
		default:
			b.fail("add", a)
			return false
		}
	}
	return true
}

// near is a seat the map shows free near the held seats: in the row of the first,
// the free seat nearest by number to any held one, else the same in the rows behind
// and in front of it, nearest first; 0 when none is within two rows. Seats in held or
// skip are not offered (the map may not show them held yet).
func (sb *seatBoard) near(rng *rand.Rand, held []seatJSON, skip map[int64]bool) int64 {
	bd := sb.cur.Load()
	if bd == nil || len(held) == 0 {
		return 0
	}
	at, ok := bd.lay.where[held[0].ID]
	if !ok {
		return 0
	}
	mine := make(map[int64]bool, len(held))
	for _, h := range held {
		mine[h.ID] = true
	}
	rows := bd.lay.sections[at.section]
	for _, dr := range []int{0, 1, -1, 2, -2} {
		r := int(at.row) + dr
		if r < 0 || r >= len(rows) {
			continue
		}
		best, dist := int64(0), 1<<30
		for _, k := range rows[r] {
			st := bd.lay.seats[k]
			if bd.statuses[k] != 'a' || mine[st.ID] || skip[st.ID] {
				continue
			}
			for _, h := range held {
				d := abs(st.Number - h.Number)
				if d < dist || d == dist && rng.IntN(2) == 0 {
					best, dist = st.ID, d
				}
			}
		}
		if best != 0 {
			return best
		}
	}
	return 0
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
