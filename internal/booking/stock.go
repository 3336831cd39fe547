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
func (s *Service) Stock(ctx context.Context, eventID int64) (int, error) {
	e := s.maps.entry(eventID)
	if !s.freshForStock(e) {
		if err := s.ensureMap(ctx, eventID, e); err != nil {
			return 0, err
		}
	}
	n, gaTaken := 0, false
	e.mu.RLock()
	for i := range e.seats {
		if e.seats[i].Status != SeatSold {
			n++
		}
	}
	for _, t := range e.ga {
		n += t.Remaining
		gaTaken = gaTaken || t.Remaining < t.Capacity
	}
	e.mu.RUnlock()
	if n > 0 || !gaTaken {
		return n, nil
	}
	held, err := s.q.GAPlacesHeld(ctx, eventID)
	if err != nil {
		return 0, translate(err)
	}
	return int(held), nil
}

// freshForStock reports whether the entry may be counted as it is: fresh enough for a
// viewer, or at most stockMaxAge old.
func (s *Service) freshForStock(e *mapEntry) bool {
	if s.fresh(e) {
		return true
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.loaded && !e.stale && time.Since(e.loadedAt) < stockMaxAge
}
