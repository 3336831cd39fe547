package main

import (
	"testing"
	"time"
)

// TestSellOutFloor: the admissions up to the sell-out are counted (one exactly at it
// too, none after), and the floor is the first admission's time plus those at the
// configured rate; with nothing sold out there is no floor.
func TestSellOutFloor(t *testing.T) {
	t.Parallel()
	onsale := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return onsale.Add(time.Duration(s * float64(time.Second))) }
	adm := []time.Time{at(2), at(3), at(4), at(10), at(11)}
	n, floor := sellOutFloor(adm, onsale, at(10), 2)
	if n != 4 || floor != 2+4.0/2 {
		t.Errorf("sold out at +10 s, 2 a second: got %d admitted, floor %.2f s; want 4 and 4.00 s", n, floor)
	}
	if n, floor := sellOutFloor(adm, onsale, time.Time{}, 2); n != 0 || floor != 0 {
		t.Errorf("nothing sold out: got %d, %.2f; want no floor", n, floor)
	}
}
