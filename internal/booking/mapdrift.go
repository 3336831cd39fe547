package booking

import (
	"context"
	"fmt"
	"time"

	"boxoffice/internal/db"
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
// one statement per call, however many viewers watch: every seat's id and status
// letter and the GA places left (SeatStatuses), not the whole map, which is all it
// compares. It is the hub's Repair hook; a map not loaded, or due for a reload anyway,
// reports nothing. shownFree counts the differences the map shows free that the
// database has taken (the seats, and the GA places as one), as the hook asks.
func (s *Maps) SeatMapDrift(ctx context.Context, eventID int64) (seats []int64, ga bool, shownFree int, err error) {
	e := s.maps.lookup(eventID)
	if e == nil || !s.fresh(e) {
		return nil, false, 0, nil
	}
	st, err := s.q.SeatStatuses(ctx, eventID)
	if err != nil {
		return nil, false, 0, translate(err)
	}
	if len(st.Ids) != len(st.Statuses) || len(st.GaTierIds) != len(st.GaRemaining) {
		return nil, false, 0, fmt.Errorf("seat statuses of event %d: %d ids for %d statuses, %d tiers for %d counts",
			eventID, len(st.Ids), len(st.Statuses), len(st.GaTierIds), len(st.GaRemaining))
	}
	tiers := make([]GATier, len(st.GaTierIds))
	for i, id := range st.GaTierIds {
		tiers[i] = GATier{ID: id, Remaining: int(st.GaRemaining[i])}
	}
	seats, ga, _ = e.differs(st.Ids, st.Statuses, tiers)
	if len(seats) == 0 && !ga {
		return nil, false, 0, nil
	}
	t := time.NewTimer(driftGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, false, 0, ctx.Err()
	case <-t.C:
	}
	rows, tiers, err := s.readMapPart(ctx, eventID, seats, ga)
	if err != nil {
		return nil, false, 0, err
	}
	ids, letters := statusLetters(rows)
	seats, ga, shownFree = e.differs(ids, letters, tiers)
	return seats, ga, shownFree, nil
}

// statusLetters gives re-read seats as SeatStatuses gives them: their ids, and the
// first letter of each one's status at the same place.
func statusLetters(rows []db.SeatMapByIDsRow) ([]int64, string) {
	ids := make([]int64, len(rows))
	letters := make([]byte, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
		if r.Status != "" {
			letters[i] = r.Status[0]
		}
	}
	return ids, string(letters)
}

// differs returns the seats of ids whose status in the entry begins with another
// letter than theirs in letters (the statuses differ in their first letter), whether
// tiers (nil: not read) differ in the places left, and how many of those differences
// the entry shows free that letters and tiers have taken: seats it shows available,
// and the GA places as one when a tier shows more left than there are.
func (e *mapEntry) differs(ids []int64, letters string, tiers []GATier) (seats []int64, ga bool, shownFree int) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for i, id := range ids {
		p, ok := e.index[id]
		if !ok {
			continue
		}
		if st := e.seats[p].Status; st == "" || st[0] != letters[i] {
			seats = append(seats, id)
			if st == SeatAvailable {
				shownFree++
			}
		}
	}
	if tiers != nil {
		left := make(map[int64]int, len(e.ga))
		for _, t := range e.ga {
			left[t.ID] = t.Remaining
		}
		more := false
		for _, t := range tiers {
			if n, ok := left[t.ID]; !ok || n != t.Remaining {
				ga = true
				more = more || n > t.Remaining
			}
		}
		if more {
			shownFree++
		}
	}
	return seats, ga, shownFree
}
