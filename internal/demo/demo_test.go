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
