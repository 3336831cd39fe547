package booking

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Best available from the seat map. The process already keeps each watched event's map
// (mapcache.go), so best available chooses its seats there, in microseconds, and asks
// the database only to claim them: the claim's conditional statement is still the
// verdict, so a map that is behind costs a failed claim and another choice, never a
// wrong sale. The map is trusted only for what it says is free and has not changed
// since it said so: every seat change this process announces is noted with its time
// (seatChanges), and a seat changed after the map last read it is left out. When the
// map is missing, too old, or shows no choice for the party, best available searches
// the database as before (SeatBestRows), so "sold out" is always the database's word.
//
// Measured on a 50,000-seat stadium late in an onsale: SeatBestRows' three looks took
// 1.3, 8.5 and 12.5 ms of database time; a look at the map costs about a tenth of a
// millisecond of the process's.

// bestMapMaxAge is how old a map that the live feed does not keep current may be and
// still be chosen from. Seats changed here since its load are left out whatever its
// age; what it cannot know is seats freed by other instances, which only the search in
// the database then finds.
const bestMapMaxAge = 5 * time.Second

// fedChangeLag is how long the live feed may take to patch a change announced here into
// a map it keeps current: a seat changed more recently is left out of such a map.
const fedChangeLag = 2 * time.Second

// bestMapWindows are the candidate rows best available looks at in turn, as the search
// in the database does (searchWindows): the best few first, so that a party is seated
// in the best rows that can take it; the last look takes every row, so that a party
// one far row can seat is never told "sold out".
var bestMapWindows = []int{8, 32, 128, 0} // 0: every row

// seatChanges notes when seats of one event last changed through this process.
type seatChanges struct {
	mu       sync.Mutex
	at       map[int64]time.Time
	prunedAt time.Time
}

// note records that ids changed now. Entries older than any map could still be chosen
// from are dropped once a second.
func (c *seatChanges) note(ids []int64) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[int64]time.Time{}
	}
	for _, id := range ids {
		c.at[id] = now
	}
	if now.Sub(c.prunedAt) > time.Second {
		c.prunedAt = now
		for id, t := range c.at {
			if now.Sub(t) > bestMapMaxAge+fedChangeLag {
				delete(c.at, id)
			}
		}
	}
}

// since returns the seats changed at or after cutoff.
func (c *seatChanges) since(cutoff time.Time) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int64
	for id, t := range c.at {
		if !t.Before(cutoff) {
			out = append(out, id)
		}
	}
	return out
}

// mapMissed records a choice from the map that someone else had taken, or was taking:
// the map is behind on those seats, so later choices leave them out until it catches up.
func (s *Service) mapMissed(eventID int64, ids []int64) {
	s.bestMapMisses.Add(1)
	s.noteSeatChanges(eventID, ids)
}

// noteSeatChanges records a change of seats announced by this process, for best
// available's reading of the map. Called after the change committed, before anyone
// hears of it.
func (s *Service) noteSeatChanges(eventID int64, ids []int64) {
	if e := s.maps.lookup(eventID); e != nil {
		e.changes.note(ids)
	}
}

// claimingSeats are the seats this process's best-available holds are claiming from the
// map at the moment (holdFromMap): every choice from the map leaves them out
// (mapEntry.choices), so that buyers arriving together claim different seats rather
// than race for the same ones, and a choice that loses no race is noted as no miss.
type claimingSeats struct {
	mu  sync.Mutex
	ids map[int64]bool
}

// chooseFromMap takes the map's best choice for req that no other hold of this process
// is claiming, and marks its seats as being claimed until release is called. Nil: the
// map cannot be used for it, or shows no choice for the party.
func (s *Service) chooseFromMap(req HoldRequest) (ids []int64, release func()) {
	e := s.maps.lookup(req.EventID)
	if e == nil {
		return nil, nil
	}
	c := &e.claiming
	c.mu.Lock()
	defer c.mu.Unlock()
	tries, usable := e.choices(req, nil)
	if !usable || len(tries) == 0 {
		return nil, nil
	}
	ids = tries[0]
	if c.ids == nil {
		c.ids = map[int64]bool{}
	}
	for _, id := range ids {
		c.ids[id] = true
	}
	return ids, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, id := range ids {
			delete(c.ids, id)
		}
	}
}

// rowSummary is one row of the map as best available ranks it.
type rowSummary struct {
	row       int // index into mapEntry.rowStarts
	bestPrice int
	bestRank  int
	free      int
}

// mapChoices chooses, from the event's map, the seats best available should try to
// claim for req, best first, leaving out the seats in gone (tried already and taken)
// and those other holds here are claiming. usable is false when the map cannot be
// trusted for it (missing, stale, too old); no choices from a usable map mean the map
// shows no seats for the party.
func (s *Service) mapChoices(req HoldRequest, gone map[int64]bool) (tries [][]int64, usable bool) {
	e := s.maps.lookup(req.EventID)
	if e == nil {
		return nil, false
	}
	e.claiming.mu.Lock()
	defer e.claiming.mu.Unlock()
	return e.choices(req, gone)
}

// choices is mapChoices for the event's entry; the caller holds e.claiming.mu.
func (e *mapEntry) choices(req HoldRequest, gone map[int64]bool) (tries [][]int64, usable bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if !e.loaded || e.stale || len(e.rowStarts) == 0 {
		return nil, false
	}
	cutoff := e.loadedAt
	if e.fed {
		cutoff = time.Now().Add(-fedChangeLag)
	} else if time.Since(e.loadedAt) > bestMapMaxAge {
		return nil, false
	}
	// Positions of the seats to leave out, as a bit set over the map.
	skip := make([]uint64, (len(e.seats)+63)/64)
	mark := func(id int64) {
		if p, ok := e.index[id]; ok {
			skip[p/64] |= 1 << (p % 64)
		}
	}
	for _, id := range e.changes.since(cutoff) {
		mark(id)
	}
	for id := range gone {
		mark(id)
	}
	for id := range e.claiming.ids {
		mark(id)
	}
	free := func(p int) bool {
		return e.seats[p].Status == SeatAvailable && skip[p/64]&(1<<(p%64)) == 0
	}

	var ranked []rowSummary
	for r := range e.rowStarts {
		lo, hi := e.rowBounds(r)
		if req.Section != "" && e.seats[lo].Section != req.Section {
			continue
		}
		sum := rowSummary{row: r}
		for p := lo; p < hi; p++ {
			if !free(p) {
				continue
			}
			st := &e.seats[p]
			if sum.free == 0 || st.PriceCents < sum.bestPrice {
				sum.bestPrice = st.PriceCents
			}
			if sum.free == 0 || st.Rank < sum.bestRank {
				sum.bestRank = st.Rank
			}
			sum.free++
		}
		if sum.free > 0 {
			ranked = append(ranked, sum)
		}
	}
	if len(ranked) == 0 {
		return nil, true
	}
	// The database's order (SeatBestRows): cheapest free seat, then best rank, then the
	// map's own order of sections and rows, which is the database's.
	slices.SortFunc(ranked, func(a, b rowSummary) int {
		return cmp.Or(cmp.Compare(a.bestPrice, b.bestPrice), cmp.Compare(a.bestRank, b.bestRank), cmp.Compare(a.row, b.row))
	})

	var rows []seatRow
	for _, w := range bestMapWindows {
		if w == 0 || w > len(ranked) {
			w = len(ranked)
		}
		for _, sum := range ranked[len(rows):w] {
			lo, hi := e.rowBounds(sum.row)
			row := make(seatRow, 0, sum.free)
			for p := lo; p < hi; p++ {
				if free(p) {
					st := &e.seats[p]
					row = append(row, rowSeat{ID: st.ID, Number: st.Number, Price: st.PriceCents, Rank: st.Rank, Free: true})
				}
			}
			rows = append(rows, row)
		}
		tries = spread(disjoint(pickTogether(rows, req.Quantity), triesPerLook))
		if len(tries) == 0 && !req.Together {
			if ids := pickScattered(rows, req.Quantity); ids != nil {
				tries = append(tries, ids)
			}
		}
		if len(tries) > 0 || w == len(ranked) {
			return tries, true
		}
	}
	return nil, true
}

// rowBounds returns the positions [lo, hi) of row r's seats in e.seats.
func (e *mapEntry) rowBounds(r int) (lo, hi int) {
	lo, hi = int(e.rowStarts[r]), len(e.seats)
	if r+1 < len(e.rowStarts) {
		hi = int(e.rowStarts[r+1])
	}
	return lo, hi
}

// rowStartsOf returns where each row begins in seats, which come in the map's order
// (section, row, number).
func rowStartsOf(seats []MapSeat) []int32 {
	var out []int32
	for i := range seats {
		if i == 0 || seats[i].Section != seats[i-1].Section || seats[i].Row != seats[i-1].Row {
			out = append(out, int32(i))
		}
	}
	return out
}
