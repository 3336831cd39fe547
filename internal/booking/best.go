package booking

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// searchWindows widen best available's look when the best rows cannot seat the party:
// how many of the best free seats to consider, and at most how many rows they span.
// The last takes every row with a free seat: a party that only a row beyond the best
// 128 can seat is seated, not told "sold out" (it costs a read of every free seat, only
// when the 128 best rows with any cannot seat the party).
var searchWindows = []struct{ seats, rows int32 }{{200, 8}, {1000, 32}, {5000, 128}, {math.MaxInt32, math.MaxInt32}}

const (
	// triesPerLook bounds the claims attempted on one look at the rows; the choices
	// tried are disjoint, so that buyers racing for the same best rows spread out.
	triesPerLook = 16
	// looks bounds how often best available looks again when every choice it tried was
	// taken by someone quicker.
	looks = 6
)

// bestTurns is how many best-available searches of one event run at once. One at a
// time wastes no search on seats another is claiming, but late in an onsale the
// searches queue for seconds behind each other (make onsale: hold p50 1.2-4 s in the
// last 30 s before the sell-out); two overlap one's commit with the other's search,
// and step past each other's seats (SKIP LOCKED, spread).
const bestTurns = 2

// bestTurn waits, when req asks for best available, for one of the event's
// best-available turns in this process and returns it and its end; any other request
// needs no turn (0, and an end that does nothing). Every hold of places takes it
// before its transaction, the buyer's and the box office's alike. The searches take the
// same turns in the database too (BestAvailableLock, across instances), but a search
// waiting there holds a pool connection meanwhile: when the searches pile up, at the
// end of an onsale, they take every connection and every other call of the event
// (exact holds, checkout, pay) waits behind them (hold p50 250 ms in make onsale's
// last half minute). Waiting here costs no connection, so at most bestTurns per
// instance wait in the database. A hold the seat map can seat takes no turn at all
// (holdFromMap): the turns are for the searches in the database.
func (s *store) bestTurn(ctx context.Context, req HoldRequest) (turn int, done func(), err error) {
	turn, done, _, err = s.waitTurn(ctx, req, time.Time{})
	return turn, done, err
}

// waitTurn is bestTurn for a hold that arrived at arrived; with arrived set (a buyer's
// best-available hold), a search that began after it arrived and found nothing for a
// party no harder than its own answers it (soldOut, and no turn): before it waits,
// while it waits, as soon as the search is noted, and as its turn comes. At a
// sell-out most of the holds waiting are answered so: otherwise most of make onsale's
// slowest 1 % of holds are 409s that wait up to 3 s for a turn only to take a verdict
// already there.
func (s *store) waitTurn(ctx context.Context, req HoldRequest, arrived time.Time) (turn int, done func(), soldOut bool, err error) {
	if len(req.SeatIDs) > 0 || req.GATierID != 0 {
		return 0, func() {}, false, nil
	}
	eventID := req.EventID
	v, ok := s.bestTurns.Load(eventID)
	if !ok {
		turns := make(chan int, bestTurns)
		for i := range bestTurns {
			turns <- i
		}
		v, _ = s.bestTurns.LoadOrStore(eventID, turns)
	}
	turns := v.(chan int)
	s.bestWaiting.Add(1)
	defer s.bestWaiting.Add(-1)
	for {
		var noted <-chan struct{} // nil without arrived: never ready
		if !arrived.IsZero() {
			noted = s.soldOut.changes() // before covers, so that no verdict slips between
			if s.soldOut.covers(req, arrived) {
				return 0, nil, true, nil
			}
		}
		select {
		case turn = <-turns:
			if !arrived.IsZero() && s.soldOut.covers(req, arrived) { // noted as the turn came
				turns <- turn
				return 0, nil, true, nil
			}
			return turn, func() { turns <- turn }, false, nil
		case <-noted:
		case <-ctx.Done():
			return 0, nil, false, ctx.Err()
		}
	}
}

// soldOutVerdicts remembers, for a little while, the best-available searches that
// found no seats for their party: when, for which event, section, party size and
// whether together. At a sell-out every best-available hold of the crowd ends in such a
// search, a turn at a time (bestTurn), and in make onsale at 128 admissions a second
// about 130 of them queued behind each other for 1.4 s to hear "sold out". A hold that
// waited for its turn while a search for a party no harder than its own started and
// found nothing takes that answer instead of searching again: still the database's
// word (the search's statements all began after the waiter arrived), given during the
// waiter's request. A request that arrived after the search started never takes it.
// A search that seated its party and saw every free seat counts as one for a scattered
// party of one more than it left (hold): late in a sale the searches ahead of the
// waiters keep finding a few lapsed seats, and the waiters of larger parties waited
// 1.1-1.3 s for the first search to find nothing.
//
// No harder: the same event; the whole house or the same section; any price or the
// same price level; a party as large or larger; and a search for seats side by side
// only answers holds that want them side by side too. A search for a scattered party of
// n found fewer than n free seats (see pickScattered), which no larger party, scattered
// or together, can be given; one for n side by side found no n free together, which no
// larger party wanting them together can be given either.
type soldOutVerdicts struct {
	mu sync.Mutex
	at map[soldOutKey]time.Time // when each kind of search last began that found nothing
	// noted is closed, and forgotten, when a verdict is noted: the holds waiting for a
	// turn then look whether it answers them (waitTurn). Nil: nobody is listening.
	noted chan struct{}
}

// changes is closed at the next verdict noted.
func (v *soldOutVerdicts) changes() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.noted == nil {
		v.noted = make(chan struct{})
	}
	return v.noted
}

type soldOutKey struct {
	event    int64
	section  string
	price    int // -1: any price
	together bool
	quantity int
}

// soldOutKeep bounds how long a verdict is kept: longer than any request waits for a
// turn. soldOutMax bounds how many are kept (the section is the buyer's word).
const (
	soldOutKeep = time.Minute
	soldOutMax  = 1024
)

// note records that a search for req, begun at began, found nothing.
func (v *soldOutVerdicts) note(req HoldRequest, began time.Time) {
	k := soldOutKey{event: req.EventID, section: req.Section, price: req.priceKey(), together: req.Together && req.Quantity > 1, quantity: req.Quantity}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.at == nil {
		v.at = map[soldOutKey]time.Time{}
	}
	if len(v.at) >= soldOutMax {
		for k, at := range v.at {
			if began.Sub(at) > soldOutKeep {
				delete(v.at, k)
			}
		}
		if len(v.at) >= soldOutMax {
			clear(v.at)
		}
	}
	if at, ok := v.at[k]; !ok || began.After(at) {
		v.at[k] = began
	}
	if v.noted != nil {
		close(v.noted)
		v.noted = nil
	}
}

// covers says whether a search begun after arrived found nothing for a party no harder
// than req's.
func (v *soldOutVerdicts) covers(req HoldRequest, arrived time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, at := range v.at {
		if k.event == req.EventID && at.After(arrived) && (k.section == "" || k.section == req.Section) &&
			(k.price < 0 || k.price == req.priceKey()) &&
			k.quantity <= req.Quantity && (!k.together || req.Together) {
			return true
		}
	}
	return false
}

// holdBest finds the best seats for the party and claims them with FOR UPDATE SKIP
// LOCKED: buyers racing for the same best seats step past each other's rows instead of
// queueing on them. A claim is all of a choice or nothing, inside a savepoint so that a
// failed claim lets go of the seats it locked at once. Buyers who arrive together
// compute the same ranking: after the best, each tries the next few choices from a
// random start. On the last look a claim waits for locked seats instead of
// skipping them, so a buyer is only turned away when the seats are really gone.
//
// The seats are chosen from the seat map the process keeps when it can be trusted
// (bestmap.go), and claimed as below; the search in the database decides whenever the
// map shows nothing for the party, or every choice from it was taken.
//
// left is how many free seats the search saw left for others once its own were
// claimed, when the look that seated the party read every row with a free seat; -1
// otherwise (a narrower look, the map's choice, or nothing held). The look's statement
// read them after the search began, so it is a verdict for the holds waiting since
// before (hold): no party larger than left can be seated.
func (s *store) holdBest(ctx context.Context, tx pgx.Tx, q *db.Queries, req HoldRequest, hold db.HoldCreateRow, turn int) (seats []Seat, left int, err error) {
	if err := q.BestAvailableLock(ctx, db.BestAvailableLockParams{EventID: req.EventID, Turn: int32(turn)}); err != nil {
		return nil, -1, err
	}
	seats, mapShowedNone, err := s.holdBestFromMap(ctx, tx, req, hold)
	if err != nil || seats != nil {
		return seats, -1, err
	}
	windows := searchWindows
	if mapShowedNone {
		// The map saw every row and none could seat the party: what the database may
		// know better is a few seats freed since, anywhere, so it looks at every free
		// seat at once. Late in a sale that is a few hundred; the narrow looks first
		// would cost three more queries for nothing.
		windows = searchWindows[len(searchWindows)-1:]
	}
	for look := 0; look < looks; look++ {
		contended := false
		for _, w := range windows {
			rows, freeCount, err := s.bestRows(ctx, q, req, w.seats, w.rows)
			if err != nil {
				return nil, -1, err
			}
			// This look saw every row with a free seat: a wider one finds no more.
			seenAll := len(rows) < int(w.rows) && freeCount < int(w.seats)
			tries, clean := choose(rows, req)
			if len(tries) == 0 && seenAll {
				return nil, -1, ErrSoldOut
			}
			if len(tries) == 0 || (!clean && !seenAll && w != windows[len(windows)-1]) {
				continue // a wider look may seat the party without stranding a seat
			}
			for _, ids := range tries {
				seats, err := s.claim(ctx, tx, req.EventID, ids, hold, look == looks-1)
				if err != nil || seats != nil {
					left := -1
					if seats != nil && seenAll {
						left = freeCount - len(seats)
					}
					return seats, left, err
				}
			}
			contended = true
			break
		}
		if !contended {
			return nil, -1, ErrSoldOut
		}
	}
	return nil, -1, ErrContended
}

// holdBestFromMap tries the choices the seat map offers (mapChoices), skipping locked
// seats, for up to looks-1 looks. Nil seats and no error: the map could not be used,
// offered nothing (showedNone: a usable map had no choice for the party), or everything
// it offered was taken; the database's search decides then.
func (s *store) holdBestFromMap(ctx context.Context, tx pgx.Tx, req HoldRequest, hold db.HoldCreateRow) (seats []Seat, showedNone bool, err error) {
	gone := map[int64]bool{}
	for look := 0; look < looks-1; look++ {
		tries, usable := s.mapChoices(req, gone)
		if !usable || len(tries) == 0 {
			return nil, usable, nil
		}
		for _, ids := range tries {
			seats, err := s.claim(ctx, tx, req.EventID, ids, hold, false)
			if err != nil {
				return nil, false, err
			} else if seats != nil {
				s.bestFromMap.Add(1)
				return seats, false, nil
			}
			// Taken, or being taken: the map is behind on one of these seats.
			for _, id := range ids {
				gone[id] = true
			}
			s.mapMissed(req.EventID, ids)
		}
	}
	return nil, false, nil
}

// claim claims exactly ids in a savepoint, or nothing: nil seats and no error mean
// someone else has one of them. wait makes it wait for seats other transactions are
// busy with rather than skip them.
func (s *store) claim(ctx context.Context, tx pgx.Tx, eventID int64, ids []int64, hold db.HoldCreateRow, wait bool) ([]Seat, error) {
	// One round trip: a savepoint, then the claim; a short claim is rolled back to it.
	var pl db.Pipeline
	pl.Savepoint(claimSavepoint)
	var claimed func() []Seat
	if wait {
		rows := pl.SeatHold(db.SeatHoldParams{EventID: eventID, SeatIds: ids, HoldID: &hold.ID, ExpiresAt: &hold.ExpiresAt})
		claimed = func() []Seat { return seatsOf(rows.Vals) }
	} else {
		rows := pl.SeatClaimUnlocked(db.SeatClaimUnlockedParams{EventID: eventID, SeatIds: ids, HoldID: &hold.ID, ExpiresAt: &hold.ExpiresAt})
		claimed = func() []Seat { return seatsOf(rows.Vals) }
	}
	if err := pl.Send(ctx, tx); err != nil {
		return nil, err
	}
	seats := claimed()
	if len(seats) != len(ids) {
		return nil, db.RollbackTo(ctx, tx, claimSavepoint)
	}
	slices.SortFunc(seats, func(a, b Seat) int { return cmp.Compare(a.ID, b.ID) })
	return seats, nil
}

// claimSavepoint is the savepoint a claim that fell short is rolled back to.
const claimSavepoint = "claim"

// spreadWidth is how many of the best choices buyers arriving together spread over.
const spreadWidth = 12

// spread keeps the best choice first, then starts the rest at a random one of the next
// few (wrapping the skipped ones to the end): a buyer alone gets the best seats, and
// buyers who lost the best to each other try different seats next.
func spread(tries [][]int64) [][]int64 {
	n := min(len(tries), spreadWidth+1)
	if n < 3 {
		return tries
	}
	k := 1 + rand.IntN(n-1)
	out := append([][]int64{tries[0]}, tries[k:n]...)
	out = append(out, tries[1:k]...)
	return append(out, tries[n:]...)
}

// disjoint keeps the first choices that share no seat with an earlier one, at most max.
func disjoint(choices []choice, max int) [][]int64 {
	var out [][]int64
	used := map[int64]bool{}
next:
	for _, c := range choices {
		for _, id := range c.ids {
			if used[id] {
				continue next
			}
		}
		for _, id := range c.ids {
			used[id] = true
		}
		out = append(out, c.ids)
		if len(out) == max {
			break
		}
	}
	return out
}

// bestRows loads the candidate rows, nearest the stage first, and counts the free seats
// in them.
func (s *store) bestRows(ctx context.Context, q *db.Queries, req HoldRequest, seatLimit, rowLimit int32) ([]seatRow, int, error) {
	var raw []db.SeatBestRowsRow
	var err error
	lo, hi := req.priceRange()
	if req.Section != "" {
		var in []db.SeatBestRowsInSectionRow
		in, err = q.SeatBestRowsInSection(ctx, db.SeatBestRowsInSectionParams{
			EventID: req.EventID, Section: req.Section, MinPrice: lo, MaxPrice: hi, SeatLimit: seatLimit, RowLimit: rowLimit,
		})
		for _, r := range in {
			raw = append(raw, db.SeatBestRowsRow(r))
		}
	} else {
		raw, err = q.SeatBestRows(ctx, db.SeatBestRowsParams{EventID: req.EventID, MinPrice: lo, MaxPrice: hi, SeatLimit: seatLimit, RowLimit: rowLimit})
	}
	if err != nil {
		return nil, 0, err
	}
	var rows []seatRow
	free := 0
	for i, r := range raw {
		if i == 0 || r.Section != raw[i-1].Section || r.RowLabel != raw[i-1].RowLabel {
			rows = append(rows, nil)
		}
		st := rowSeat{ID: r.ID, Number: int(r.Number), Price: int(r.PriceCents), Rank: int(r.Rank), Free: r.Free,
			Pos: int(r.X), Mid2: int(r.RowMid2), Depth: int(r.RowDepth)}
		if r.RowFlatMid2 != 0 {
			// A row without width on the map: its numbers stand in (rowPlace).
			st.Pos, st.Mid2 = int(r.Number), int(r.RowFlatMid2)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], st)
		if r.Free {
			free++
		}
	}
	return rows, free, nil
}
