package demo

import (
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// TestEnsureTwice: loading the demo again (`make run` a second time) keeps the event
// it made and adds nothing.
func TestEnsureTwice(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	spec := DemoSpec(time.Now())
	id, created, err := Ensure(t.Context(), pool, spec)
	if err != nil || !created {
		t.Fatalf("first Ensure: got created=%v, err %v; want a new event", created, err)
	}
	again, created, err := Ensure(t.Context(), pool, spec)
	if err != nil || created || again != id {
		t.Fatalf("second Ensure: got id %d, created=%v, err %v; want id %d unchanged", again, created, err, id)
	}
	var events, seats, stripes int
	if err := pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM seats),
		(SELECT coalesce(sum(remaining), 0) FROM ga_stripes)`).Scan(&events, &seats, &stripes); err != nil {
		t.Fatal(err)
	}
	if events != 1 || seats != spec.Seats() || stripes != 400 {
		t.Errorf("got %d events, %d seats, %d GA places; want 1, %d, 400", events, seats, stripes, spec.Seats())
	}
}

// TestOnsaleReschedule: the waiting room's demo event is created with its room on and
// its onsale ahead; at a later seed its passed onsale moves ahead again only while
// nobody holds or bought anything of it.
func TestOnsaleReschedule(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	now := time.Now()
	spec := OnsaleSpec(now)
	id, created, err := Ensure(ctx, pool, spec)
	if err != nil || !created {
		t.Fatalf("Ensure: got created=%v, err %v; want a new event", created, err)
	}
	var on bool
	var slots, ttl int
	var rate float64
	var onsale time.Time
	if err := pool.QueryRow(ctx, `SELECT queue_enabled, queue_slots, queue_rate, queue_token_ttl_seconds, onsale_at
		FROM events WHERE id = $1`, id).Scan(&on, &slots, &rate, &ttl, &onsale); err != nil {
		t.Fatal(err)
	}
	if !on || slots != 50 || rate != 2 || ttl != 900 || !onsale.Equal(spec.OnsaleAt) {
		t.Fatalf("got room %v, %d slots, %g/s, token %ds, onsale %v; want on, 50, 2/s, 900s, %v", on, slots, rate, ttl, onsale, spec.OnsaleAt)
	}

	// Before its onsale, a second seed leaves it.
	if at, moved, err := Reschedule(ctx, pool, id, OnsaleTime(now.Add(time.Minute))); err != nil || moved || !at.Equal(spec.OnsaleAt) {
		t.Fatalf("before the onsale: got %v, moved=%v, err %v; want %v unmoved", at, moved, err, spec.OnsaleAt)
	}
	// Long after it, with nobody holding anything, it moves.
	if _, err := pool.Exec(ctx, `UPDATE events SET onsale_at = now() - interval '3 days' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	later := OnsaleTime(now.Add(time.Hour))
	if at, moved, err := Reschedule(ctx, pool, id, later); err != nil || !moved || !at.Equal(later) {
		t.Fatalf("passed, untouched: got %v, moved=%v, err %v; want moved to %v", at, moved, err, later)
	}
	// With a live hold, it stays.
	if _, err := pool.Exec(ctx, `UPDATE events SET onsale_at = now() - interval '3 days' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO holds (event_id, buyer, seat_count, expires_at) VALUES ($1, 'ada', 1, now() + interval '5 minutes')`, id); err != nil {
		t.Fatal(err)
	}
	if _, moved, err := Reschedule(ctx, pool, id, later); err != nil || moved {
		t.Fatalf("passed, held: got moved=%v, err %v; want it left", moved, err)
	}
}
