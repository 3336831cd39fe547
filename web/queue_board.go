package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/waitroom"
)

// The queue's board: what every waiter of an event may know, the same for all (how
// many have been let in, the place of the last one, the wait each place adds). A
// waiting page keeps its own number and place from its last look and works out its
// position and wait from the board, so a crowd's refreshes cost one cached read
// instead of a session, a Redis script and an answer each (waitroom.Board). The page
// looks itself at once when the board shows its turn, and otherwise only when the room
// says (waitroom's lookAfter: every 2.5 minutes, or about once a minute further back).

// boardTTL is how long this process answers from one read of a board; the answer may
// be cached as long again by a CDN. A waiter learns of its turn within about that.
const boardTTL = time.Second

// board is the event's board, at most boardTTL old.
func (s *server) board(ctx context.Context, qe waitroom.Event) (waitroom.Board, error) {
	return s.boards.get(ctx, qe.ID, func(ctx context.Context) (waitroom.Board, error) {
		return s.Queue.Board(ctx, qe)
	})
}

// boardJSON is the board as GET /api/v1/events/{id}/queue/board answers it. A waiter
// with number n (from its last look) has about n − served − 1 people ahead (fewer if
// some left), waits about (ahead + 1) × secondsPerPlace + noticeSeconds (how long
// after its turn a page learns of it), and its turn has come once head ≥ its place:
// it then looks (GET …/queue) for its token. A waiter with a drawn place below 1 and no
// number yet (the pre-queue's after the draw, before its first look) has about
// (drawn − 1) × (place − h) / (1 − h) ahead, h being head (0 before the first).
// A waiter whose position (ahead + 1) is above lastsFor (when not -1) is told the
// tickets may be gone before its turn, and shown no wait (waitroom.Board.LastsFor).
type boardJSON struct {
	Served        int64     `json:"served"`
	Drawn         int       `json:"drawn"`
	Head          float64   `json:"head"` // -1 before the first admission
	Waiting       int       `json:"waiting"`
	PreQueue      bool      `json:"preQueue"`
	DrawAt        time.Time `json:"drawAt"`
	RatePerSecond float64   `json:"ratePerSecond"` // measured; 0 while unknown
	// ReturnsPerSecond is how many admissions came back a second over the last minute
	// (lapsed with nothing held, bought, released, ran out), -1 unknown: while every
	// slot is taken, what secondsPerPlace follows.
	ReturnsPerSecond   float64   `json:"returnsPerSecond"`
	SecondsPerPlace    float64   `json:"secondsPerPlace"`
	SecondsPerPlaceMin float64   `json:"secondsPerPlaceMin"`
	SecondsPerPlaceMax float64   `json:"secondsPerPlaceMax"`
	NoticeSeconds      float64   `json:"noticeSeconds"`
	SeatsLeft          int       `json:"seatsLeft"`
	SoldOut            bool      `json:"soldOut"`
	AllHeld            bool      `json:"allHeld"`
	LastsFor           int       `json:"lastsFor"` // -1 unknown
	At                 time.Time `json:"at"`
	// The front door's cursor (queue_place.go): a place (group, tiebreak) before
	// (cursorGroup, cursorFrac) has had its turn and claims it (POST …/queue/claim);
	// passed is how many counted arrivals that is, counted all arrivals counted,
	// preQueueCount those of the pre-queue (group 0). A place taken under another
	// epoch is taken again (POST …/queue/place) to be counted.
	CursorGroup   uint64  `json:"cursorGroup"`
	CursorFrac    float64 `json:"cursorFrac"`
	Passed        float64 `json:"passed"`
	Counted       int64   `json:"counted"`
	PreQueueCount int64   `json:"preQueueCount"`
	Epoch         string  `json:"epoch"`
	// OpensAt is when the cursor may first move (Settle after the draw), and it enters
	// arrival group g ≥ 1 groupSpanSeconds × g later: a place's wait counts its
	// position's worth from then, and is no sooner than its group's opening
	// (waitroom.Place.Wait, static/js/door.js).
	OpensAt          time.Time `json:"opensAt"`
	GroupSpanSeconds float64   `json:"groupSpanSeconds"`
}

func boardView(b waitroom.Board) boardJSON {
	return boardJSON{
		Served: b.Served, Drawn: b.Drawn, Head: b.Head, Waiting: b.Waiting, PreQueue: b.PreQueue, DrawAt: b.DrawAt.UTC(),
		RatePerSecond: b.Rate, ReturnsPerSecond: b.Returns, SecondsPerPlace: b.PerPlace.Seconds(), SecondsPerPlaceMin: b.PerPlaceMin.Seconds(),
		SecondsPerPlaceMax: b.PerPlaceMax.Seconds(), NoticeSeconds: b.Notice.Seconds(), SeatsLeft: b.SeatsLeft, SoldOut: b.SoldOut, AllHeld: b.AllHeld,
		LastsFor: b.LastsFor, At: b.At.UTC(),
		CursorGroup: b.CursorGroup, CursorFrac: b.CursorFrac, Passed: b.Passed, Counted: b.Counted, PreQueueCount: b.PreCount,
		Epoch: b.Epoch, OpensAt: b.OpensAt.UTC(), GroupSpanSeconds: b.GroupSpan.Seconds(),
	}
}

// errNoWaitingRoom answers a board asked of an event whose room is off.
var errNoWaitingRoom = &apiError{Status: http.StatusNotFound, Code: "no_waiting_room",
	Message: "This event has no waiting room open: go straight to its seats."}

// getBoard answers the event's board, or with room=presale its presale room's: public,
// the same for everyone, cacheable for a second. No session: a crowd's pages read it
// every few seconds.
func (s *server) getBoard(c echo.Context) error {
	ev, err := eventOfPath(s, c)
	if err != nil {
		return err
	}
	qe := ev.Room()
	if c.QueryParam("room") == presaleRoomParam {
		var on bool
		if qe, _, on, err = s.presaleRoom(c.Request().Context(), ev); err != nil {
			return err
		} else if !on {
			return errNoWaitingRoom
		}
	}
	if !qe.Settings.Enabled {
		return errNoWaitingRoom
	}
	b, err := s.board(c.Request().Context(), qe)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=1, s-maxage=1, stale-while-revalidate=1")
	return c.JSON(http.StatusOK, boardView(b))
}
