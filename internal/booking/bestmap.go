package booking

import (
	"cmp"
	"math/bits"
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
// the database (SeatBestRows), so "sold out" is always the database's word.
//
// Measured on a 50,000-seat stadium late in an onsale: SeatBestRows' three looks take
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

// seatChanges notes when seats of one event last changed through this process: a log
// in the order noted, so that a look at the map finds the seats changed since a time by
// a binary search, without walking or copying the rest.
type seatChanges struct {
	mu       sync.Mutex
	log      []seatChange // in time order: noted under mu
	prunedAt time.Time
}

// seatChange is one seat changed: its id, and its position in the map when noted (-1:
// not on it), which a look uses if the seat is still there.
type seatChange struct {
	id  int64
	pos int32
	at  time.Time
}

// note records that ids changed now, with their positions in index. Entries older than
// any map could still be chosen from are dropped once a second.
func (c *seatChanges) note(ids []int64, index map[int64]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now() // read under mu: the log stays in time order
	if now.Sub(c.prunedAt) > time.Second {
		c.prunedAt = now
		old := c.firstAt(now.Add(-(bestMapMaxAge + fedChangeLag)))
		c.log = append(c.log[:0], c.log[old:]...)
	}
	for _, id := range ids {
		pos, ok := index[id]
		if !ok {
			pos = -1
		}
		c.log = append(c.log, seatChange{id: id, pos: pos, at: now})
	}
}

// firstAt is the position of the first entry noted at or after t. Called with mu held.
func (c *seatChanges) firstAt(t time.Time) int {
	i, _ := slices.BinarySearchFunc(c.log, t, func(ch seatChange, t time.Time) int {
		if ch.at.Before(t) {
			return -1
		}
		return 1
	})
	return i
}

// since calls mark for every seat changed at or after cutoff (a seat changed twice,
// twice).
func (c *seatChanges) since(cutoff time.Time, mark func(seatChange)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.log[c.firstAt(cutoff):] {
		mark(ch)
	}
}

// mapMissed records a choice from the map that someone else had taken, or was taking:
// the map is behind on those seats, so later choices leave them out until it catches up.
func (s *store) mapMissed(eventID int64, ids []int64) {
	s.bestMapMisses.Add(1)
	s.noteSeatChanges(eventID, ids)
}

// noteSeatChanges records a change of seats announced by this process, for best
// available's reading of the map. Called after the change committed, before anyone
// hears of it.
func (s *store) noteSeatChanges(eventID int64, ids []int64) {
	if e := s.maps.lookup(eventID); e != nil {
		e.noteChanges(ids)
	}
}

// noteChanges notes changed seats with their places in the map.
func (e *mapEntry) noteChanges(ids []int64) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	e.changes.note(ids, e.index)
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
func (s *store) chooseFromMap(req HoldRequest) (ids []int64, release func()) {
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

// rowSummary is one row of the map as best available ranks it: its free seats' count,
// lowest and highest price, and best rank.
type rowSummary struct {
	row        int // index into mapEntry.rowStarts
	bestPrice  int
	worstPrice int
	bestRank   int
	free       int
}

// mapChoices chooses, from the event's map, the seats best available should try to
// claim for req, best first, leaving out the seats in gone (tried already and taken)
// and those other holds here are claiming. usable is false when the map cannot be
// trusted for it (missing, stale, too old); no choices from a usable map mean the map
// shows no seats for the party.
func (s *store) mapChoices(req HoldRequest, gone map[int64]bool) (tries [][]int64, usable bool) {
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
	// The seats to choose from: the available ones, less those changed since the map
	// could know, tried already, or being claimed.
	look := e.newLook()
	mark := func(id int64) {
		if p, ok := e.index[id]; ok {
			look.leaveOut(int(p))
		}
	}
	e.changes.since(cutoff, func(ch seatChange) {
		if ch.pos >= 0 && int(ch.pos) < len(e.seats) && e.seats[ch.pos].ID == ch.id {
			look.leaveOut(int(ch.pos))
		} else {
			mark(ch.id) // the map was loaded again since: look the seat up
		}
	})
	for id := range gone {
		mark(id)
	}
	for id := range e.claiming.ids {
		mark(id)
	}

	ranked := e.freeRows(req.Section, req.PriceCents, look)
	if len(ranked) == 0 {
		return nil, true
	}
	// Nearest the stage first, then the map's own order of sections and rows, which is
	// the database's (SeatBestRows).
	places := e.picks.places
	slices.SortFunc(ranked, func(a, b rowSummary) int {
		return cmp.Or(cmp.Compare(places[a.row].depth, places[b.row].depth), cmp.Compare(a.row, b.row))
	})

	var rows []seatRow
	for _, w := range bestMapWindows {
		if w == 0 || w > len(ranked) {
			w = len(ranked)
		}
		w = max(w, len(rows))
		// Rows as near as the last one looked at are looked at too: side by side blocks
		// of a stadium are ranked by their middles, not by the cut.
		for w < len(ranked) && places[ranked[w].row].depth == places[ranked[w-1].row].depth {
			w++
		}
		for _, sum := range ranked[len(rows):w] {
			rows = append(rows, e.freeRow(sum, req.PriceCents, look))
		}
		var clean bool
		if tries, clean = choose(rows, req); len(tries) > 0 && (clean || w == len(ranked)) {
			return tries, true
		}
	}
	return nil, true
}

// freeRow is the row of sum as best available picks from it: its free seats in the
// look, at price when one is asked for.
func (e *mapEntry) freeRow(sum rowSummary, price *int, look *mapLook) seatRow {
	lo, hi := e.rowBounds(sum.row)
	pl := e.picks.places[sum.row]
	row := make(seatRow, 0, sum.free)
	for p := lo; p < hi; p++ {
		st := &e.seats[p]
		if !look.isFree(p) || (price != nil && st.PriceCents != *price) {
			continue
		}
		pos := st.X
		if pl.flat {
			pos = st.Number
		}
		row = append(row, rowSeat{ID: st.ID, Number: st.Number, Price: st.PriceCents, Rank: st.Rank, Free: true,
			Pos: pos, Mid2: pl.mid2, Depth: pl.depth})
	}
	return row
}

// mapLook is what one look at the map chooses from: the free seats, as a bit set over
// the map's seats, and the rows where the look left seats out (touched, a bit a row),
// whose kept summaries do not hold for it.
type mapLook struct {
	e       *mapEntry
	free    []uint64
	touched []uint64
}

// newLook starts a look from the map's available seats. Called with e.mu held.
func (e *mapEntry) newLook() *mapLook {
	return &mapLook{e: e, free: slices.Clone(e.picks.avail), touched: make([]uint64, (len(e.rowStarts)+63)/64)}
}

// leaveOut takes the seat at position p out of the look.
func (l *mapLook) leaveOut(p int) {
	l.free[p/64] &^= 1 << (p % 64)
	r := l.e.rowOf(p)
	l.touched[r/64] |= 1 << (r % 64)
}

func (l *mapLook) isFree(p int) bool { return l.free[p/64]&(1<<(p%64)) != 0 }

// freeRows sums up the rows (of section, or of the house when it is empty) that have
// seats free in the look, at price if one is asked for: from the kept summaries, but for
// the rows the look touched, which are summed up again from its free set.
func (e *mapEntry) freeRows(section string, price *int, look *mapLook) []rowSummary {
	var ranked []rowSummary
	for r := range e.rowStarts {
		lo, hi := e.rowBounds(r)
		if section != "" && e.seats[lo].Section != section {
			continue
		}
		sum := e.picks.sums[r]
		if look.touched[r/64]&(1<<(r%64)) != 0 {
			sum = e.picks.sumRow(r, lo, hi, look.free)
		}
		if sum.free > 0 && (price == nil || (sum.bestPrice <= *price && *price <= sum.worstPrice)) {
			ranked = append(ranked, sum)
		}
	}
	return ranked
}

// sumRow sums up row r, the seats [lo, hi), over the seats in set: only those seats are
// visited, a word of the set at a time.
func (p *seatPicks) sumRow(r, lo, hi int, set []uint64) rowSummary {
	sum := rowSummary{row: r}
	for i := lo; i < hi; i++ {
		w := set[i/64] >> (i % 64)
		if w == 0 {
			i |= 63 // the rest of this word is out: on to the next
			continue
		}
		i += bits.TrailingZeros64(w)
		if i >= hi {
			break
		}
		price, rank := int(p.price[i]), int(p.rank[i])
		if sum.free == 0 || price < sum.bestPrice {
			sum.bestPrice = price
		}
		if sum.free == 0 || price > sum.worstPrice {
			sum.worstPrice = price
		}
		if sum.free == 0 || rank < sum.bestRank {
			sum.bestRank = rank
		}
		sum.free++
	}
	return sum
}

// rowBounds returns the positions [lo, hi) of row r's seats in e.seats.
func (e *mapEntry) rowBounds(r int) (lo, hi int) {
	lo, hi = int(e.rowStarts[r]), len(e.seats)
	if r+1 < len(e.rowStarts) {
		hi = int(e.rowStarts[r+1])
	}
	return lo, hi
}

// seatPicks is the map as best available reads it: a bit a seat, set while the seat is
// available, each seat's price and rank, in the map's order, and each row's available
// seats summed up. A look starts from the summaries and sums up again only the few
// rows where it leaves seats out (changed lately, tried, being claimed), rather than
// reading every seat of the map (5 MB for 50,000 seats): the look was a tenth of the
// process's CPU at 128 admissions a second.
type seatPicks struct {
	avail  []uint64
	price  []int32
	rank   []int32
	sums   []rowSummary // by row, over avail
	places []rowPlace   // by row: where it is, which no sale changes
}

// rowPlace is where a row is on the map: its distance from the stage (its largest y: the
// map's y grows away from the stage, and a curved row's middle sits lowest), and twice
// its middle's x. A row without width on the map (a map without coordinates) is flat:
// its seat numbers stand in for x.
type rowPlace struct {
	depth, mid2 int
	flat        bool
}

// placeOf finds where the row of seats is.
func placeOf(seats []MapSeat) rowPlace {
	first := seats[0]
	minX, maxX, minN, maxN, depth := first.X, first.X, first.Number, first.Number, first.Y
	for _, st := range seats[1:] {
		minX, maxX, depth = min(minX, st.X), max(maxX, st.X), max(depth, st.Y)
		minN, maxN = min(minN, st.Number), max(maxN, st.Number)
	}
	if minX == maxX && minN != maxN {
		return rowPlace{depth: depth, mid2: minN + maxN, flat: true}
	}
	return rowPlace{depth: depth, mid2: minX + maxX}
}

// picksOf arranges seats, whose rows begin at rowStarts, for best available.
func picksOf(seats []MapSeat, rowStarts []int32) seatPicks {
	p := seatPicks{avail: make([]uint64, (len(seats)+63)/64),
		price: make([]int32, len(seats)), rank: make([]int32, len(seats)),
		sums: make([]rowSummary, len(rowStarts)), places: make([]rowPlace, len(rowStarts))}
	for i := range seats {
		p.setSeat(i, &seats[i])
	}
	for r := range rowStarts {
		lo, hi := int(rowStarts[r]), len(seats)
		if r+1 < len(rowStarts) {
			hi = int(rowStarts[r+1])
		}
		p.sums[r] = p.sumRow(r, lo, hi, p.avail)
		p.places[r] = placeOf(seats[lo:hi])
	}
	return p
}

// setSeat records seat i as it now is, but not in its row's summary. Prices and ranks
// are the database's int columns.
func (p *seatPicks) setSeat(i int, st *MapSeat) {
	p.price[i], p.rank[i] = int32(st.PriceCents), int32(st.Rank)
	if st.Status == SeatAvailable {
		p.avail[i/64] |= 1 << (i % 64)
	} else {
		p.avail[i/64] &^= 1 << (i % 64)
	}
}

// setPick records the seat at position p as it now is, in the picks and its row's
// summary.
func (e *mapEntry) setPick(p int) {
	e.picks.setSeat(p, &e.seats[p])
	r := e.rowOf(p)
	lo, hi := e.rowBounds(r)
	e.picks.sums[r] = e.picks.sumRow(r, lo, hi, e.picks.avail)
}

// rowOf returns the row of the seat at position p.
func (e *mapEntry) rowOf(p int) int {
	r, found := slices.BinarySearch(e.rowStarts, int32(p))
	if !found {
		r--
	}
	return r
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
