package booking

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// bestAsk asks for the best n seats at price (nil: any) in section ("" any).
func (f fixture) bestAsk(t *testing.T, buyer string, n int, section string, price *int, together bool) (Hold, error) {
	t.Helper()
	return f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyer, Quantity: n, Section: section, PriceCents: price, Together: together})
}

// seatsIn fails t unless every seat is in section's row at price with a number in nums.
func seatsIn(t *testing.T, what string, seats []Seat, section, row string, price int, nums []int) {
	t.Helper()
	for _, s := range seats {
		if s.Section != section || s.Row != row || s.PriceCents != price || !slices.Contains(nums, s.Number) {
			t.Errorf("%s: got %s row %s seat %d at %d, want %s row %s, one of %v, at %d",
				what, s.Section, s.Row, s.Number, s.PriceCents, section, row, nums, price)
		}
	}
}

// bothPaths runs test on a fresh fixture of spec twice: best available choosing from
// the database's search, and from the seat map (loaded after prepare ran), checking
// that the map path was the one taken.
func bothPaths(t *testing.T, spec func() demo.EventSpec, prepare func(t *testing.T, f fixture), test func(t *testing.T, f fixture)) {
	t.Helper()
	for _, fromMap := range []bool{false, true} {
		t.Run(fmt.Sprintf("map=%v", fromMap), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, spec(), DefaultConfig())
			if prepare != nil {
				prepare(t, f)
			}
			if fromMap {
				f.loadMap(t)
			}
			test(t, f)
			if got := f.svc.store.bestFromMap.Load(); (got > 0) != fromMap {
				t.Errorf("holds chosen from the map: got %d, want some only when the map is loaded", got)
			}
		})
	}
}

// TestBestAvailableDemo: on the demo event (Stalls, Circle and Balcony stacked under
// the stage, dearest at the front), best available seats a party nearest the stage's
// front rows' centre within the buyer's choice of price level and section: any price
// and section is the Stalls' row A, a price level is that price's nearest row, a
// section its nearest row.
func TestBestAvailableDemo(t *testing.T) {
	t.Parallel()
	price := func(c int) *int { return &c }
	bothPaths(t, func() demo.EventSpec { return demo.DemoSpec(time.Now()) }, nil, func(t *testing.T, f fixture) {
		h, err := f.bestAsk(t, "a", 4, "", nil, true)
		if err != nil {
			t.Fatalf("best 4 together: %v", err)
		}
		checkTogether(t, h.Seats, 4)
		// The middle of the front row: 40 seats, so numbers 19 to 22.
		seatsIn(t, "best 4 anywhere", h.Seats, "Stalls", "A", 9500, []int{19, 20, 21, 22})

		// Next to them, on either side: nothing strands a seat, both sides are as central.
		h, err = f.bestAsk(t, "b", 3, "Stalls", nil, true)
		if err != nil {
			t.Fatalf("best 3 in the Stalls: %v", err)
		}
		checkTogether(t, h.Seats, 3)
		seatsIn(t, "best 3 in the Stalls", h.Seats, "Stalls", "A", 9500, []int{16, 17, 18, 23, 24, 25})

		// The Stalls' 65.00 starts at row I.
		h, err = f.bestAsk(t, "c", 3, "Stalls", price(6500), true)
		if err != nil {
			t.Fatalf("best 3 in the Stalls at 65.00: %v", err)
		}
		checkTogether(t, h.Seats, 3)
		seatsIn(t, "best 3 in the Stalls at 65.00", h.Seats, "Stalls", "I", 6500, []int{19, 20, 21, 22})

		// 39.00 is the Circle's from row H and the Balcony's front: the Circle is nearer.
		h, err = f.bestAsk(t, "d", 2, "", price(3900), false)
		if err != nil {
			t.Fatalf("best 2 at 39.00: %v", err)
		}
		seatsIn(t, "best 2 at 39.00", h.Seats, "Circle", "H", 3900, []int{18, 19})

		h, err = f.bestAsk(t, "e", 2, "Balcony", nil, true)
		if err != nil {
			t.Fatalf("best 2 in the Balcony: %v", err)
		}
		seatsIn(t, "best 2 in the Balcony", h.Seats, "Balcony", "A", 3900, []int{20, 21})

		if _, err := f.bestAsk(t, "f", 2, "Nowhere", nil, false); !errors.Is(err, ErrSoldOut) {
			t.Errorf("a section that does not exist: got %v, want ErrSoldOut", err)
		}
		if _, err := f.bestAsk(t, "f", 2, "", price(1234), false); !errors.Is(err, ErrSoldOut) {
			t.Errorf("a price no seat has: got %v, want ErrSoldOut", err)
		}
		if _, err := f.bestAsk(t, "f", 2, "Stalls", price(3900), false); !errors.Is(err, ErrSoldOut) {
			t.Errorf("a price the section does not have: got %v, want ErrSoldOut", err)
		}
	})
}

// TestBestAvailableLeavesNoSingleSeat: ten rows of five, a party of four. Every row
// with five free seats can only seat them by leaving one seat alone; a row with four
// free seats between a taken seat and its end seats them exactly. That row is chosen
// however far back it is (beyond the first look's eight rows); with no such row the
// party still gets the front row, stranding one.
func TestBestAvailableLeavesNoSingleSeat(t *testing.T) {
	t.Parallel()
	spec := func() demo.EventSpec {
		return smallSpec([]demo.Section{{Name: "Narrow", Rows: 10, SeatsPerRow: 5, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 3000}}}})
	}
	bothPaths(t, spec, func(t *testing.T, f fixture) {
		f.hold(t, "x", f.rowSeats(t, "Narrow", "J")[4])
	}, func(t *testing.T, f fixture) {
		h, err := f.bestAsk(t, "a", 4, "", nil, true)
		if err != nil {
			t.Fatalf("best 4: %v", err)
		}
		checkTogether(t, h.Seats, 4)
		seatsIn(t, "best 4 beside a taken seat", h.Seats, "Narrow", "J", 3000, []int{1, 2, 3, 4})
	})
	bothPaths(t, spec, nil, func(t *testing.T, f fixture) {
		h, err := f.bestAsk(t, "a", 4, "", nil, true)
		if err != nil {
			t.Fatalf("best 4: %v", err)
		}
		checkTogether(t, h.Seats, 4)
		seatsIn(t, "best 4 with no exact fit", h.Seats, "Narrow", "A", 3000, []int{1, 2, 3, 4, 5})
	})
}

// TestBestAvailableScatteredNearFront: no row seats three together; not asked for
// together, the party gets the free seats nearest the front.
func TestBestAvailableScatteredNearFront(t *testing.T) {
	t.Parallel()
	spec := func() demo.EventSpec {
		return smallSpec([]demo.Section{{Name: "Comb", Rows: 3, SeatsPerRow: 4, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 3000}}}})
	}
	bothPaths(t, spec, func(t *testing.T, f fixture) {
		a, b, c := f.rowSeats(t, "Comb", "A"), f.rowSeats(t, "Comb", "B"), f.rowSeats(t, "Comb", "C")
		f.hold(t, "x", a[1], a[3], b[0], b[2], c[1], c[3])
	}, func(t *testing.T, f fixture) {
		if _, err := f.bestAsk(t, "a", 3, "", nil, true); !errors.Is(err, ErrSoldOut) {
			t.Fatalf("3 together with no row to seat them: got %v, want ErrSoldOut", err)
		}
		h, err := f.bestAsk(t, "a", 3, "", nil, false)
		if err != nil {
			t.Fatalf("best 3 scattered: %v", err)
		}
		var got []string
		for _, s := range h.Seats {
			got = append(got, fmt.Sprintf("%s%d", s.Row, s.Number))
		}
		slices.Sort(got)
		if want := []string{"A1", "A3", "B2"}; !slices.Equal(got, want) {
			t.Errorf("got seats %v, want %v", got, want)
		}
	})
}
