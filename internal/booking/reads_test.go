package booking

import (
	"errors"
	"testing"

	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
)

// TestStaleReadsGoWhereTheChooserSays: with the stale-tolerant reads pointed at
// another database (an empty one: a replica as stale as can be), the public event
// list and page, an unwatched seat map and the control room's counts read it, while
// the desk's event list, a hold and a seat map the live feed keeps current read and
// write the primary. Pointed back at the primary, the same reads find the event.
func TestStaleReadsGoWhereTheChooserSays(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, Config{})
	ctx := t.Context()
	stale := dbtest.Pool(t)
	reads := stale
	f.svc.store.reads = func() db.DBTX { return reads }

	if evs, err := f.svc.Buyer.Events(ctx); err != nil || len(evs) != 0 {
		t.Fatalf("public event list on the stale side: got %d events (%v), want 0", len(evs), err)
	}
	if _, err := f.svc.Buyer.EventBySlug(ctx, "demo-night"); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("public event page on the stale side: got %v, want ErrEventNotFound", err)
	}
	if _, err := f.svc.Desk.Control(ctx, f.event); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("control room counts on the stale side: got %v, want ErrEventNotFound", err)
	}
	if _, err := f.svc.Maps.SeatMap(ctx, f.event); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("unwatched seat map on the stale side: got %v, want ErrEventNotFound", err)
	}
	if evs, err := f.svc.Desk.Events(ctx); err != nil || len(evs) != 1 {
		t.Fatalf("desk event list: got %d events (%v), want 1 from the primary", len(evs), err)
	}
	var seat int64
	if err := f.pool.QueryRow(ctx, `SELECT min(id) FROM seats WHERE event_id = $1`, f.event).Scan(&seat); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "ada", SeatIDs: []int64{seat}}); err != nil {
		t.Fatalf("hold with stale reads elsewhere: %v, want it held on the primary", err)
	}
	// A map the feed follows is stamped with the feed's version: it loads from the
	// primary, and shows the hold.
	f.svc.Maps.ResyncSeatMap(ctx, f.event, 1)
	m, err := f.svc.Maps.SeatMap(ctx, f.event)
	if err != nil || len(m.Seats) == 0 {
		t.Fatalf("fed seat map: got %d seats (%v), want the primary's", len(m.Seats), err)
	}
	if st := m.Seats[seatIndex(m, seat)].Status; st != "held" {
		t.Fatalf("fed seat map: seat %d is %q, want held", seat, st)
	}

	reads = f.pool
	if evs, err := f.svc.Buyer.Events(ctx); err != nil || len(evs) != 1 {
		t.Fatalf("public event list on the primary: got %d events (%v), want 1", len(evs), err)
	}
	if _, err := f.svc.Desk.Control(ctx, f.event); err != nil {
		t.Fatalf("control room counts on the primary: %v", err)
	}
}

func seatIndex(m SeatMap, id int64) int {
	for i, s := range m.Seats {
		if s.ID == id {
			return i
		}
	}
	return -1
}
