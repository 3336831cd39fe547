package booking

import (
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// stockNow is Stock after the map was told of every change so far (as the live feed
// tells it): Stock may otherwise count from a map a few seconds old.
func (f fixture) stockNow(t *testing.T, version *int64) StockLevel {
	t.Helper()
	*version++
	f.svc.Maps.ResyncSeatMap(t.Context(), f.event, *version)
	n, err := f.svc.Maps.Stock(t.Context(), f.event)
	if err != nil {
		t.Fatalf("stock: %v", err)
	}
	return n
}

// TestStock: seats not sold and GA places left count; a held seat counts (its hold may
// lapse), a sold one does not; GA places taken by holds count only once nothing else
// is left, and a sold-out event has no stock.
func TestStock(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Floor", 3, 1000)},
		demo.GATier{Name: "Standing", PriceCents: 500, Capacity: 2, Stripes: 1}), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	var v int64
	step := func(what string, unsold, free int) {
		t.Helper()
		if got, want := f.stockNow(t, &v), (StockLevel{Unsold: unsold, Free: free}); got != want {
			t.Fatalf("%s: got stock %+v, want %+v", what, got, want)
		}
	}
	step("untouched", 5, 5)
	h := f.hold(t, "a", seats[0], seats[1])
	step("two seats held", 5, 3)
	f.pay(t, f.checkout(t, h, "a"), "evt_a")
	step("two seats sold", 3, 3)
	ga, err := f.holdGA(t, "b", 2)
	if err != nil {
		t.Fatal(err)
	}
	step("GA places held, a seat free", 1, 1)
	last := f.hold(t, "c", seats[2])
	step("a seat held (counted from the map), GA places held (not counted then): nothing free", 1, 0)
	f.pay(t, f.checkout(t, last, "c"), "evt_c")
	step("every seat sold, GA places held: those places, none free", 2, 0)
	f.pay(t, f.checkout(t, ga, "b"), "evt_b")
	step("sold out", 0, 0)
}

// TestStockFromCache: asked again and again, Stock counts from the cached map and runs
// no statement, even where a viewer's map would be reloaded (MapMaxAge tiny here); it
// answers for an unknown event with ErrEventNotFound.
func TestStockFromCache(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t, Config{MapMaxAge: time.Nanosecond})
	n, err := f.svc.Maps.Stock(t.Context(), f.event)
	if err != nil {
		t.Fatal(err)
	}
	if want := (StockLevel{Unsold: 1980 + 400, Free: 1980 + 400}); n != want {
		t.Fatalf("got stock %+v, want %+v", n, want)
	}
	before := f.stmts.count("")
	for range 50 {
		if _, err := f.svc.Maps.Stock(t.Context(), f.event); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.stmts.count("") - before; n != 0 {
		t.Errorf("50 stock reads ran %d statements, want 0", n)
	}
	if _, err := f.svc.Maps.Stock(t.Context(), 1<<40); err != ErrEventNotFound {
		t.Errorf("unknown event: got %v, want ErrEventNotFound", err)
	}
}
