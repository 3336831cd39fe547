package main

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"
)

// queueBoardJSON is the event's queue board (GET …/queue/board): what every waiting
// page may know, the same for all. A page keeps its number and place from its last look
// and works out its position and wait from the board between looks.
type queueBoardJSON struct {
	Served             int64     `json:"served"`
	Drawn              int       `json:"drawn"` // of the waiting, those with a drawn place (below 1)
	Head               float64   `json:"head"`
	Waiting            int       `json:"waiting"`
	PreQueue           bool      `json:"preQueue"`
	DrawAt             time.Time `json:"drawAt"`
	RatePerSecond      float64   `json:"ratePerSecond"` // measured; 0 while unknown
	SecondsPerPlace    float64   `json:"secondsPerPlace"`
	SecondsPerPlaceMin float64   `json:"secondsPerPlaceMin"`
	NoticeSeconds      float64   `json:"noticeSeconds"` // how long after its turn a page learns of it
	SoldOut            bool      `json:"soldOut"`
	AllHeld            bool      `json:"allHeld"`
	// LastsFor is about how many more admissions the free places serve; -1 while
	// unknown, nil from a server without it. A page further back shows that the
	// tickets may be gone before its turn, and no wait.
	LastsFor *int `json:"lastsFor"`
	// The front door's cursor: a place before (cursorGroup, cursorFrac) has had its
	// turn; passed counts the arrivals it passed, preQueueCount those of the pre-queue.
	CursorGroup   uint64  `json:"cursorGroup"`
	CursorFrac    float64 `json:"cursorFrac"`
	Passed        float64 `json:"passed"`
	PreQueueCount int64   `json:"preQueueCount"`
	Epoch         string  `json:"epoch"`
	// At is the board's own time; the cursor opens at opensAt and enters arrival group
	// g ≥ 1 groupSpanSeconds × g later (a place's wait, waitroom.Place.Wait).
	At               time.Time `json:"at"`
	OpensAt          time.Time `json:"opensAt"`
	GroupSpanSeconds float64   `json:"groupSpanSeconds"`
}

// boardEvery is how often the crowd's copy of the queue board is read: a CDN serves
// the board for a second (its Cache-Control), so the server sees one read a second
// however many pages ask.
const boardEvery = time.Second

// queueBoard is the crowd's copy of the board: nil until read, or when the server has
// none (an older one): the buyers then look themselves at every refresh.
type queueBoard struct {
	cur atomic.Pointer[queueBoardSeen]
}

type queueBoardSeen struct {
	queueBoardJSON
	at time.Time
}

// follow reads the board every boardEvery until ctx ends. A server without the board
// (404) is not asked again.
func (qb *queueBoard) follow(ctx context.Context, s *sim, c *client) {
	t := time.NewTicker(boardEvery)
	defer t.Stop()
	for {
		var bj queueBoardJSON
		a, err := c.do(ctx, http.MethodGet, "/api/v1/events/"+s.eventPath+"/queue/board", nil, &bj)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				s.count.unexpected("board: " + errKind(err))
			}
		case a.Status == http.StatusOK:
			s.called("board", a)
			qb.cur.Store(&queueBoardSeen{queueBoardJSON: bj, at: time.Now()})
		case a.Status == http.StatusNotFound:
			return
		case a.Status != http.StatusServiceUnavailable: // a paused queue: the pages keep what they show
			s.count.unexpected("board: " + a.kind())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// crowdJitter spreads the looks of a whole crowd that learns the same news at once
// over a few seconds, as the queue page does; drawJitter those of the pre-queue
// after the draw, all of which look for their numbers.
const (
	crowdJitter = 3 * time.Second
	drawJitter  = 10 * time.Second
)

func jitter(rng *rand.Rand, spread time.Duration) time.Duration {
	return time.Duration(rng.Int64N(int64(spread)))
}

// fromBoard is what a waiting page shows between its looks: its wait, worked out from
// its number and the board (the wait its place adds, and the board's notice), and the
// pace of its next refresh (a quarter of the shortest wait, within 1 to 5 s, as the
// server paces a look), and for how many admissions the wait is (places, itself
// included). A drawn place with no number yet (the pre-queue's after the draw, before
// its look) stands among the board's drawn ones as its place among uniform draws:
// about (drawn − 1) × (place − head) / (1 − head) ahead. gone: its places are beyond
// the board's lastsFor, and the page shows that the tickets may be gone before its
// turn instead of a wait (eta 0). ok is false when the board says nothing of this
// waiter (no place, or a board older than the look).
func fromBoard(st queueJSON, lookedAt time.Time, bd *queueBoardSeen) (eta int, pace time.Duration, places int, gone, ok bool) {
	if bd == nil || !bd.at.After(lookedAt) || bd.PreQueue {
		return 0, 0, 0, false, false
	}
	var n float64 // places until its turn, its own included
	switch {
	case st.Number > 0:
		n = float64(max(st.Number-bd.Served, 1))
	case onBoard(st, bd):
		h := max(bd.Head, 0)
		n = 1
		if *st.Place > h {
			n += float64(bd.Drawn-1) * (*st.Place - h) / (1 - h)
		}
	case st.Place == nil:
		return 0, 0, 0, false, false
	default: // a server without drawn places: the head may come any moment
		return st.EtaSeconds, time.Second, 0, st.LikelyGone, true
	}
	gone = !bd.AllHeld && bd.LastsFor != nil && *bd.LastsFor >= 0 && int(math.Round(n)) > *bd.LastsFor
	if bd.SecondsPerPlace > 0 && !bd.AllHeld && !gone {
		eta = max(int(math.Round(n*bd.SecondsPerPlace+bd.NoticeSeconds)), 1)
	}
	pace = time.Duration(n * bd.SecondsPerPlaceMin / 4 * float64(time.Second))
	if bd.SecondsPerPlaceMin <= 0 || bd.AllHeld {
		pace = 5 * time.Second
	}
	return eta, min(max(pace, time.Second), 5*time.Second), int(math.Round(n)), gone, true
}

// onBoard says whether the board alone tells a page where it stands: it has its
// number, or, after the draw, a drawn place among the board's drawn ones. Such a page
// shows its position, its wait, all held and sold out without a look.
func onBoard(st queueJSON, bd *queueBoardSeen) bool {
	return st.Number > 0 || (st.Place != nil && *st.Place < 1 && !bd.PreQueue && bd.Drawn > 0)
}

// mustLook says whether the board tells a waiting page to look: now when its turn has
// come (the head reached its place, a pre-queue place included) or the queue was lost
// (served counted anew); within spread when the crowd-wide news needs a look to a page
// the board does not place (onBoard): the draw, for its number; any change of state.
func mustLook(st queueJSON, bd *queueBoardSeen) (now bool, spread time.Duration) {
	if bd == nil {
		return false, 0
	}
	switch {
	case st.Place != nil && bd.Head >= *st.Place:
		return true, 0
	case st.Number > 0 && bd.Served < st.Number-int64(st.Position):
		return true, 0
	case onBoard(st, bd): // it looks when the server said (lookAfterSeconds), or at its turn
	case st.PreQueue && !bd.PreQueue:
		return false, drawJitter // no drawn places to stand among (an older server): its number
	case st.PreQueue != bd.PreQueue || st.SoldOut != bd.SoldOut || st.AllHeld != bd.AllHeld:
		return false, crowdJitter
	}
	return false, 0
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
