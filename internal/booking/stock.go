package booking

import (
	"context"
	"time"
)

// stockMaxAge is how old a seat map Stock counts from may be when the live feed does
// not keep it current. Stock is a hint for admission, asked several times a second: a
// map a few seconds old costs at most a few seconds of admissions after the last seat
// went (those buyers find the map sold out; nothing is sold twice), while reloading a
// 50,000-seat map every second would cost 25 ms of database time each time.
const stockMaxAge = 5 * time.Second

// Stock says how much of the event may still be sold, for the waiting room's
// admitter: at 0 admission stops and the queue says sold out, and it resumes when
// holds lapse. It counts the seats not sold (free, or held by a hold that may lapse)
// and the general-admission places left, from the seat map cache, so that it can be
// asked at every tick without a query. GA places taken by holds are not on the map:
// only when the map shows nothing left but some GA places taken does Stock ask the
// database for the places that holds neither sold nor released have (they may
// lapse). So the count is exact at 0, which is what admission turns on, and
// otherwise leaves out GA places on hold; only a sold-out event pays a query.
//
// Free counts, from the same map, what nobody holds: the seats available and the GA
// places left. While Unsold > 0 and Free = 0 everything left is held by people paying,
// and the queue can only move as their holds lapse.
func (s *Maps) Stock(ctx context.Context, eventID int64) (StockLevel, error) {
	e := s.maps.entry(eventID)
	if !s.freshForStock(e) {
		if err := s.ensureMap(ctx, eventID, e); err != nil {
			return StockLevel{}, err
		}
	}
	var st StockLevel
	gaTaken := false
	e.mu.RLock()
	for i := range e.seats {
		switch e.seats[i].Status {
		case SeatSold:
		case SeatAvailable:
			st.Unsold++
			st.Free++
		default:
			st.Unsold++
		}
	}
	for _, t := range e.ga {
		st.Unsold += t.Remaining
		st.Free += t.Remaining
		gaTaken = gaTaken || t.Remaining < t.Capacity
	}
	e.mu.RUnlock()
	if st.Unsold > 0 || !gaTaken {
		return st, nil
	}
	held, err := s.q.GAPlacesHeld(ctx, eventID)
	if err != nil {
		return StockLevel{}, translate(err)
	}
	st.Unsold = int(held)
	return st, nil
}

// StockLevel is what Stock counts: Unsold, what may still be sold (free, or held by a
// hold that may lapse); Free, what nobody holds right now.
type StockLevel struct{ Unsold, Free int }

// freshForStock reports whether the entry may be counted as it is: fresh enough for a
// viewer, or at most stockMaxAge old.
func (s *store) freshForStock(e *mapEntry) bool {
	if s.fresh(e) {
		return true
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.loaded && !e.stale && time.Since(e.loadedAt) < stockMaxAge
}
