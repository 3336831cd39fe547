package main

import (
	"context"
	"math"
	"net/http"
	"time"
)

// placeJSON is the front door's answer (…/queue/place, …/queue/claim), as far as the
// simulator reads it.
type placeJSON struct {
	queueJSON
	Token     string  `json:"token"`
	Placed    bool    `json:"placed"`
	Group     uint64  `json:"group"`
	Tiebreak  float64 `json:"tiebreak"`
	Epoch     string  `json:"epoch"`
	Turn      bool    `json:"turn"`
	CSRFToken string  `json:"csrfToken"`
}

// passed says whether the board's cursor has passed the place: its turn has come.
func (p placeJSON) passed(bd *queueBoardSeen) bool {
	return p.Group < bd.CursorGroup || p.Group == bd.CursorGroup && p.Tiebreak < bd.CursorFrac
}

// ahead is about how many are ahead of the place on the board, as the server works it
// out (waitroom.Place.Ahead).
func (p placeJSON) ahead(bd *queueBoardSeen) int {
	if p.Group == 0 {
		from := 0.0
		if bd.CursorGroup == 0 {
			from = bd.CursorFrac
		}
		return int(float64(bd.PreQueueCount) * math.Max(0, p.Tiebreak-from))
	}
	return int(math.Max(0, float64(p.Number)-bd.Passed))
}

// frontQueue is queue through the front door: the place call's GET (a CSRF cookie, no
// session) and POST (a signed place, with the proof), then the crowd's board at the
// page's pace until the cursor passes the place, then the claim, which makes the
// session and the admission. It records the waits the page would show from the board.
func (b *buyer) frontQueue(ctx context.Context) bool {
	s := b.sim
	b.joinedAt = time.Now()
	path := "/api/v1/events/" + s.eventPath + "/queue/"
	var p placeJSON
	if !b.call(ctx, "place", http.MethodGet, path+"place", nil, &p) {
		return false
	}
	b.c.csrf = p.CSRFToken
	take := func() bool { return b.enter(ctx, path+"place", &p) }
	if !take() {
		return false
	}
	b.preQueue = p.PreQueue
	s.gauge.queued.Add(1)
	defer s.gauge.queued.Add(-1)
	for {
		bd := s.qboard.cur.Load()
		if bd != nil && bd.SoldOut {
			return b.soldOut("queue: sold out")
		}
		if bd != nil && bd.Epoch != "" && p.Epoch != "" && bd.Epoch != p.Epoch {
			s.count.unexpected("front: Redis lost the counts, place counted again")
			if !take() {
				return false
			}
		}
		if bd == nil || p.passed(bd) {
			var c placeJSON
			// With an Idempotency-Key, as the door page claims: a claim whose answer
			// was lost is sent again and admitted as the buyer the first one made.
			a, ok := b.send(ctx, "poll", http.MethodPost, path+"claim", nil, &c)
			if !ok {
				return false
			}
			switch {
			case a.Status == http.StatusOK && c.Admitted:
				b.admitted, b.admittedAt = true, time.Now()
				b.c.http.Transport = s.shopRT
				s.count.event("admit")
				return true
			case a.Status != http.StatusOK && !b.pollRefused(ctx, a, 0):
				return false
			}
		} else if !p.PreQueue || !bd.PreQueue {
			b.showFront(p, bd)
		}
		if !b.pause(ctx, p.pace(bd)) {
			return false
		}
	}
}

// pace is how soon the door page reads the board again (waitroom.Place.PollAfter,
// door.js's paceOf): every second while its turn (or the draw) may come within a few,
// a quarter of its shortest wait further back, at most every 5 s; every 5 s with no
// figure. Before the first board, every second.
func (p placeJSON) pace(bd *queueBoardSeen) time.Duration {
	d := 5 * time.Second
	switch {
	case bd == nil || p.passed(bd):
		d = time.Second
	case bd.SoldOut:
	case bd.PreQueue && p.Group == 0:
		d = bd.DrawAt.Sub(bd.At)
	case bd.SecondsPerPlaceMin > 0:
		lo := p.wait(bd, p.ahead(bd)+1, bd.SecondsPerPlaceMin) - bd.NoticeSeconds
		d = time.Duration(lo / 4 * float64(time.Second))
	}
	return min(max(time.Duration(math.Ceil(d.Seconds()))*time.Second, time.Second), 5*time.Second)
}

// wait is the place's wait on the board at seconds a place, as the server and the
// page work it out (waitroom.Place.Wait): places' worth from when the cursor opens, no
// sooner than it may enter the place's group, and the notice.
func (p placeJSON) wait(bd *queueBoardSeen, places int, per float64) float64 {
	start, group := 0.0, 0.0
	if !bd.At.IsZero() && !bd.OpensAt.IsZero() {
		start = math.Max(bd.OpensAt.Sub(bd.At).Seconds(), 0)
		group = math.Max(bd.OpensAt.Sub(bd.At).Seconds()+float64(p.Group)*bd.GroupSpanSeconds, 0) - start
	}
	return start + math.Max(float64(places)*per, group) + bd.NoticeSeconds
}

// showFront records the wait the page shows from the board (wait).
func (b *buyer) showFront(p placeJSON, bd *queueBoardSeen) {
	if bd.SecondsPerPlace <= 0 {
		return
	}
	places := p.ahead(bd) + 1
	if bd.LastsFor != nil && *bd.LastsFor >= 0 && places > *bd.LastsFor {
		if !b.warned {
			b.warned, b.warnedFirst = true, len(b.etas) == 0
		}
		return
	}
	eta := int(math.Round(p.wait(bd, places, bd.SecondsPerPlace)))
	b.etas = append(b.etas, etaSeen{max(eta, 1), time.Now(), places, bd.RatePerSecond})
}
