package booking

import (
	"context"
	"slices"
	"time"

	"boxoffice/internal/waitroom"
)

// The presale's waiting room. With an event's room on, its presale has a room of its
// own beside the public one: the same settings, its own queue, keys, tokens and place
// cookies (a room id of its own, PresaleRoomID), drawn when the presale begins, for
// the buyers who entered one of its codes. An admission to one room is refused by the
// other, since a token binds its room's id. The room only meters: the holding
// statement (hold_presale) still decides the window and the quota of every hold.

// Presale is an event's presale as its waiting room meters it: the codes not paused
// whose window has not ended and begins before the public onsale, soonest first.
type Presale struct {
	Codes []PresaleCode
}

// PresaleCode is one code of a presale: its window, its quota (0: none) and what the
// quota has taken: Used, the places bought under the code; Held, the places of the
// holds that record it, bought or live.
type PresaleCode struct {
	ID           int64
	Starts, Ends time.Time
	Quota        int
	Used, Held   int
}

// Has reports whether code id is one of the presale's: a code a buyer entered that
// lets them queue for it.
func (p Presale) Has(id int64) bool {
	return id != 0 && slices.ContainsFunc(p.Codes, func(c PresaleCode) bool { return c.ID == id })
}

// Window is when the presale runs: from its earliest code's start to its latest end.
func (p Presale) Window() (starts, ends time.Time) {
	for i, c := range p.Codes {
		if i == 0 || c.Starts.Before(starts) {
			starts = c.Starts
		}
		if c.Ends.After(ends) {
			ends = c.Ends
		}
	}
	return starts, ends
}

// PresaleRoomID is the id of event eventID's presale room: the event's id negated,
// which no event has. RoomEvent is its inverse; nothing else makes or reads one.
func PresaleRoomID(eventID int64) int64 { return -eventID }

// RoomEvent is the event a waiting room id belongs to, and whether it is the
// event's presale room (PresaleRoomID) rather than its public one.
func RoomEvent(roomID int64) (eventID int64, presale bool) {
	if roomID < 0 {
		return -roomID, true
	}
	return roomID, false
}

// PresaleRoom is the event's presale room at now: on while the event's room is on,
// the public onsale has not come and some code of the presale has not ended. Its
// draw (OnsaleAt) is the earliest start of those codes: a code holder who comes
// earlier waits in its pre-queue, as the public one does before the onsale.
func PresaleRoom(ev Event, p Presale, now time.Time) (waitroom.Event, bool) {
	if !ev.QueueEnabled || len(p.Codes) == 0 || !now.Before(ev.OnsaleAt) {
		return waitroom.Event{}, false
	}
	starts, _ := p.Window()
	qe := ev.Room()
	qe.ID, qe.OnsaleAt = PresaleRoomID(ev.ID), starts
	return qe, true
}

// PublicQueueOpen reports whether, with a presale room on, the public room takes
// arrivals too: from the hour before the onsale when the admitter works on it
// (queueLead), so that the public pre-queue is drawn at the onsale as it is without
// a presale, rather than the public crowd arriving all at once when it opens.
func PublicQueueOpen(ev Event, now time.Time) bool {
	return !now.Before(ev.OnsaleAt.Add(-queueLead))
}

// Presale reads the event's presale (no codes: none), by the database clock.
func (s *Buyer) Presale(ctx context.Context, eventID int64) (Presale, error) {
	return s.presale(ctx, eventID)
}

func (s *store) presale(ctx context.Context, eventID int64) (Presale, error) {
	rows, err := s.q.AccessCodesPresale(ctx, eventID)
	if err != nil {
		return Presale{}, translate(err)
	}
	p := Presale{Codes: make([]PresaleCode, len(rows))}
	for i, r := range rows {
		c := PresaleCode{ID: r.ID, Starts: r.PresaleStartsAt, Ends: r.PresaleEndsAt, Used: int(r.PlacesSold), Held: int(r.PlacesHeld)}
		if r.Quota != nil {
			c.Quota = int(*r.Quota)
		}
		p.Codes[i] = c
	}
	return p, nil
}

// QueuedPresales lists the presale rooms the waiting room's admitter works on: the
// event's room on, the public onsale not come, and a code of its presale that has
// not ended and begins within the hour (queueLead), by the database clock.
func (s *Buyer) QueuedPresales(ctx context.Context) ([]waitroom.Event, error) {
	rows, err := s.q.EventsPresaleQueued(ctx, queueLead.Seconds())
	if err != nil || len(rows) == 0 {
		return nil, translate(err)
	}
	paused, err := s.q.EventsQueuePaused(ctx)
	if err != nil {
		return nil, translate(err)
	}
	now := time.Now()
	out := make([]waitroom.Event, 0, len(rows))
	for _, r := range rows {
		ev := eventOf(r)
		ev.QueuePaused = slices.Contains(paused, r.ID)
		p, err := s.presale(ctx, ev.ID)
		if err != nil {
			return nil, err
		}
		// The database said the room is on; the app's clock a moment later may find
		// its last code just ended: then it is left out.
		if qe, ok := PresaleRoom(ev, p, now); ok {
			out = append(out, qe)
		}
	}
	return out, nil
}

// PresaleStock is what the event's presale room may still let in, for the admitter's
// stock-aware stop: the places its codes' quotas allow, as many as the event has
// unsold (Maps.Stock); without a quota on some code, the event's stock. A code's
// places that may still be sold are its quota less the places bought under it; the
// free ones, less the places of its live holds too.
func (s *Maps) PresaleStock(ctx context.Context, eventID int64) (StockLevel, error) {
	st, err := s.Stock(ctx, eventID)
	if err != nil {
		return st, err
	}
	p, err := s.presale(ctx, eventID)
	if err != nil {
		return StockLevel{}, err
	}
	return presaleStock(st, p), nil
}

// presaleStock caps the event's stock st by presale p's quotas.
func presaleStock(st StockLevel, p Presale) StockLevel {
	var unsold, free int
	for _, c := range p.Codes {
		if c.Quota == 0 {
			return st
		}
		unsold += max(0, c.Quota-c.Used)
		free += max(0, c.Quota-max(c.Used, c.Held))
	}
	return StockLevel{Unsold: min(st.Unsold, unsold), Free: min(st.Free, free)}
}
