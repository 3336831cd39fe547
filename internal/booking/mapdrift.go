package booking

import (
	"context"
	"time"
)

// driftGrace is how long a difference between the cache and a fresh read must last
// before it counts: a change committed just before the read is normally announced and
// patched in within milliseconds, and is no drift.
const driftGrace = 250 * time.Millisecond

// SeatMapDrift compares the event's cached map, which the live feed keeps current and
// every viewer's seats are rendered from, with a fresh read of the primary, and returns
// the seats whose status differs, and whether the GA places do. A difference must hold
// twice, at the fresh read and again driftGrace later at a re-read of just those
// seats, so a change whose announcement is merely on its way is not reported. It costs
// one read of the map per call, however many viewers watch. It is the hub's Repair
// hook; a map not loaded, or due for a reload anyway, reports nothing.
func (s *Maps) SeatMapDrift(ctx context.Context, eventID int64) ([]int64, bool, error) {
	e := s.maps.lookup(eventID)
	if e == nil || !s.fresh(e) {
		return nil, false, nil
	}
	m, err := s.loadSeatMap(ctx, s.q, eventID)
	if err != nil {
		return nil, false, err
	}
	status := make(map[int64]string, len(m.Seats))
	for _, st := range m.Seats {
		status[st.ID] = st.Status
	}
	seats, ga := e.differs(status, m.GATiers)
	if len(seats) == 0 && !ga {
		return nil, false, nil
	}
	t := time.NewTimer(driftGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case <-t.C:
	}
	rows, tiers, err := s.readMapPart(ctx, eventID, seats, ga)
	if err != nil {
		return nil, false, err
	}
	clear(status)
	for _, r := range rows {
		status[r.ID] = r.Status
	}
	seats, ga = e.differs(status, tiers)
	return seats, ga, nil
}

// differs returns the seats of status (seat id to its status) whose status in the
// entry is another, and whether tiers (nil: not read) differ in the places left.
func (e *mapEntry) differs(status map[int64]string, tiers []GATier) ([]int64, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var seats []int64
	for id, st := range status {
		if p, ok := e.index[id]; ok && e.seats[p].Status != st {
			seats = append(seats, id)
		}
	}
	ga := false
	if tiers != nil {
		left := make(map[int64]int, len(e.ga))
		for _, t := range e.ga {
			left[t.ID] = t.Remaining
		}
		for _, t := range tiers {
			if n, ok := left[t.ID]; !ok || n != t.Remaining {
				ga = true
			}
		}
	}
	return seats, ga
}
