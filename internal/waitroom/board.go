package waitroom

import (
	"context"
	"time"
)

// Board is an event's "now serving" board: what every waiter may know, the same for
// all of them, so that it can be cached (by a CDN, for a second) and read by a whole
// crowd at the cost of one read. A waiting page keeps its own Status.Number and
// Status.Place and works out from the board where it stands between its looks:
//
//	ahead ≈ Number − Served − 1  (fewer when some ahead of it have left since its look)
//	wait  ≈ (ahead + 1) × PerPlace + Notice, within (ahead + 1) × [PerPlaceMin, PerPlaceMax] + Notice
//	its turn has come once Head ≥ Place: it asks Status for its token.
//
// A page with a drawn place (below 1) and no number yet (the pre-queue's, before its
// first look after the draw) works its position out from Drawn: the drawn places are
// uniform at random, so of the Drawn waiting, about (Drawn − 1) × (Place − h) / (1 − h)
// are ahead of it, h being Head (0 before the first admission). The pre-queue need not
// all look at the draw for their numbers: they look in the order of their places,
// over the minute after it (Status.LookAfter), most of them once their turn has come.
//
// The board is exact but for the waiters ahead who left (lost their place or gave up)
// since the page last looked: its position is then a little high, and the page's next
// look (Status.LookAfter) sets it right. Head is exact: the admitter lets waiters in
// in the order of their places.
type Board struct {
	At       time.Time // Redis's clock when read
	PreQueue bool      // before the draw: nobody has a number yet
	DrawAt   time.Time // when the pre-queue is drawn
	Waiting  int       // people in the queue
	Served   int64     // waiters let in from the head of the queue so far
	Drawn    int       // of the Waiting, those with a drawn place (below 1)
	Head     float64   // the place of the last one let in; -1 before the first
	Rate     float64   // measured admissions per second; 0 while unknown
	// Returns is how many admissions came back a second (lapsed for want of a hold,
	// bought, released or run out) over the last minute; -1 while unknown. While every
	// slot is taken it sets the wait per place (paceRate).
	Returns float64
	// PerPlaceMin, PerPlace and PerPlaceMax are the wait each place in the queue adds
	// (eta of a waiter with nobody ahead); zero when there is no honest figure (the
	// room paused, or everything left held).
	PerPlaceMin, PerPlace, PerPlaceMax time.Duration
	// Notice is added to every wait worked out from the board: how long after its
	// turn a page learns of it (the package's Notice); zero with the PerPlace figures.
	Notice time.Duration

	SoldOut   bool // nothing left to sell and nothing held that may lapse
	AllHeld   bool // something unsold, nothing free: nobody goes in until holds lapse
	SeatsLeft int  // as the stock hook last said; -1 before its first answer
	// LastsFor is about how many more admissions the unsold places (held ones
	// included) serve, at the places the admissions since the draw took each; -1
	// while unknown (fewer than 200 admissions yet). A waiter whose position (itself
	// included) is beyond it is told the tickets may be gone before its turn, and
	// shown no wait (Status.LikelyGone).
	LastsFor int

	// The front door's cursor (place.go): the places before (CursorGroup, CursorFrac)
	// have had their turn; Passed is how many counted arrivals that is, Counted how
	// many arrivals the instances have counted in all, PreCount of them in the
	// pre-queue (group 0). Epoch names the room's state: a place counted under
	// another epoch was lost with Redis and is counted again (Room.Recount).
	CursorGroup uint64
	CursorFrac  float64
	Passed      float64
	Counted     int64
	PreCount    int64
	Epoch       string
	// OpensAt is when the cursor may first move: Settle after the draw, once every
	// instance has flushed the pre-queue's counts; it enters arrival group g ≥ 1
	// GroupSpan × g later (front.go). A place's wait is no shorter (Place.Wait).
	OpensAt   time.Time
	GroupSpan time.Duration
}

// Board reads the event's board: one small read-only script, whatever the crowd.
// With the room off there is no queue: the zero Board (Head -1, SeatsLeft -1).
func (r *Room) Board(ctx context.Context, ev Event) (Board, error) {
	if !ev.Settings.Enabled {
		return Board{Head: -1, SeatsLeft: -1, LastsFor: -1, Returns: -1}, nil
	}
	ev = r.limitedEvent(ev)
	res, err := r.script(ctx, boardScript, eventKeys(r.prefix, ev.ID))
	if err != nil {
		return Board{}, err
	}
	get := func(i int) any { return item(res, i) }
	now := asInt(get(0), 0)
	served, stock, free := asInt(get(2), 0), asInt(get(5), -1), asInt(get(7), -1)
	back := asFloat(get(13), -1)
	f := figuresOf(ev, now, asInt(get(6), 0), asFloat(get(4), -1), stock, free,
		taken{admits0: asInt(get(11), 0), admits: asInt(get(12), 0), free0: asInt(get(10), -1), free: free, unsold: stock}).
		withReturns(back, asInt(get(14), -1), ev.Settings)
	b := Board{
		At: time.UnixMilli(now), Waiting: int(asInt(get(1), 0)), Served: served, Head: asFloat(get(3), -1),
		Drawn:    int(asInt(get(9), 0)),
		PreQueue: f.preQueue, DrawAt: f.drawAt, Rate: f.rate, SeatsLeft: f.seatsLeft, SoldOut: f.soldOut, AllHeld: f.allHeld,
		LastsFor: f.lastsFor, Returns: max(back, -1),
		CursorGroup: uint64(max(asInt(get(15), 0), 0)), CursorFrac: asFloat(get(16), 0), Passed: asFloat(get(17), 0),
		Counted: asInt(get(18), 0), PreCount: asInt(get(19), 0),
	}
	b.Epoch, _ = get(8).(string)
	b.OpensAt, b.GroupSpan = f.drawAt.Add(r.opt.Settle), r.opt.GroupSpan
	if !b.AllHeld {
		b.PerPlaceMin, b.PerPlace, b.PerPlaceMax = eta(0, f.pace, ev.Settings)
		if b.PerPlace > 0 {
			b.Notice = Notice
		}
	}
	return b, nil
}
