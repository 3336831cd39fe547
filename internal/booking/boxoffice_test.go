package booking

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/demo"
)

func (f fixture) sale(staffID int64, token string, seats ...int64) Sale {
	return Sale{EventID: f.event, SeatIDs: seats, Method: PayCash, Token: token,
		BuyerName: "Walk-up", StaffID: staffID, Address: "192.0.2.7"}
}

// TestBoxOfficeSale: a sale at the window sells its seats at once, with tickets and one
// kept charge of the box office, and is audited; more seats than an online buyer may
// have are fine; the same form again returns the same order and sells nothing more.
func TestBoxOfficeSale(t *testing.T) {
	t.Parallel()
	f, rec := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 14, 2500)}), Config{MaxPerBuyer: 4}).listening()
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")

	sl := f.sale(member, "token-0123456789abcdef", seats[:6]...)
	sl.Method, sl.Email = PayCardPresent, "walkup@example.com"
	o, replayed, err := f.svc.Desk.SellAtBoxOffice(t.Context(), sl)
	if err != nil || replayed {
		t.Fatalf("sale: %v (replayed %v)", err, replayed)
	}
	if o.Status != StatusConfirmed || len(o.Tickets) != 6 || o.AmountCents != 6*2500 || o.Email != sl.Email {
		t.Errorf("order: %s, %d tickets, %d cents, %q; want confirmed, 6, %d, %q", o.Status, len(o.Tickets), o.AmountCents, o.Email, 6*2500, sl.Email)
	}
	if got := rec.take(); !slices.Equal(got, seats[:6]) {
		t.Errorf("announced: %v, want %v", got, seats[:6])
	}
	if n := f.count(t, `SELECT count(*) FROM payments WHERE order_id = $1 AND provider = 'box_office'
		AND state = 'succeeded' AND state_reason = 'card_present' AND amount_cents = $2`, o.ID, 6*2500); n != 1 {
		t.Errorf("box-office payments of the order: %d, want 1", n)
	}
	if n := f.count(t, `SELECT count(*) FROM audit_log WHERE staff_id = $1 AND action = 'boxoffice.sale'
		AND (after->>'orderId')::bigint = $2 AND address = '192.0.2.7'`, member, o.ID); n != 1 {
		t.Errorf("audit entries of the sale: %d, want 1", n)
	}
	got, rec2, err := f.svc.Desk.BoxOfficeOrder(t.Context(), f.event, o.ID)
	if err != nil || rec2 == nil || rec2.Method != PayCardPresent || rec2.BuyerName != "Walk-up" || len(got.Tickets) != 6 {
		t.Errorf("box-office order: %+v, %v", rec2, err)
	}

	again, replayed, err := f.svc.Desk.SellAtBoxOffice(t.Context(), sl)
	if err != nil || !replayed || again.ID != o.ID {
		t.Errorf("the same form again: order %d (replayed %v), %v; want order %d replayed", again.ID, replayed, err, o.ID)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("announced on the replay: %v, want nothing", got)
	}
	if n := f.count(t, `SELECT count(*) FROM orders WHERE event_id = $1`, f.event); n != 1 {
		t.Errorf("orders: %d, want 1", n)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestBoxOfficeSaleRefused: a seat an online buyer holds, or a house seat, is not sold
// at the window, and nothing of the sale is kept (all or nothing); nor are sales made
// outside the sales window, or with bad input.
func TestBoxOfficeSaleRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 2500)}), Config{})
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")
	f.hold(t, "online", seats[0])
	f.staffHold(t, member, HoldHouse, time.Time{}, seats[1])

	for i, id := range seats[:2] {
		_, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), f.sale(member, fmt.Sprintf("refused-token-%04d", i), seats[5], id))
		if !isTaken(err, id) {
			t.Errorf("sale of taken seat %d: %v, want seats_unavailable naming it", id, err)
		}
	}
	for name, change := range map[string]func(*Sale){
		"no seats":   func(s *Sale) { s.SeatIDs = nil },
		"seat twice": func(s *Sale) { s.SeatIDs = []int64{seats[4], seats[4]} },
		"no method":  func(s *Sale) { s.Method = "" },
		"no token":   func(s *Sale) { s.Token = "short" },
		"long name":  func(s *Sale) { s.BuyerName = string(make([]byte, 201)) },
	} {
		sl := f.sale(member, "bad-input-token-0001", seats[4])
		change(&sl)
		if _, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), sl); !errors.Is(err, ErrInvalidSale) {
			t.Errorf("%s: %v, want ErrInvalidSale", name, err)
		}
	}
	if _, err := f.pool.Exec(t.Context(), `UPDATE events SET sales_close_at = now() - interval '1 second', onsale_at = now() - interval '1 hour' WHERE id = $1`, f.event); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), f.sale(member, "closed-token-000001", seats[4])); !errors.Is(err, ErrSalesClosed) {
		t.Errorf("sale after the close: %v, want ErrSalesClosed", err)
	}
	if n := f.count(t, `SELECT count(*) FROM orders WHERE event_id = $1`, f.event) +
		f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND (sold_at IS NOT NULL OR (held_by IS NOT NULL AND id NOT IN ($2, $3)))`, f.event, seats[0], seats[1]) +
		f.count(t, `SELECT count(*) FROM box_office_sales`); n != 0 {
		t.Errorf("orders, sold or newly held seats and sales after refusals: %d, want 0", n)
	}
}

// TestBoxOfficeDoubleSubmit: twenty copies of one sale form arriving at once sell once;
// every copy is answered with the one order.
func TestBoxOfficeDoubleSubmit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 2500)}), Config{})
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")
	orders := make([]int64, 20)
	var errs errorCounter
	var fresh atomic.Int32
	atOnce(len(orders), func(i int) {
		o, replayed, err := f.svc.Desk.SellAtBoxOffice(t.Context(), f.sale(member, "double-submit-token", seats[:3]...))
		if err != nil {
			errs.add(err)
			return
		}
		if !replayed {
			fresh.Add(1)
		}
		orders[i] = o.ID
	})
	errs.report(t, "double submit")
	if n := fresh.Load(); n != 1 {
		t.Errorf("copies that sold: %d, want 1", n)
	}
	for i, id := range orders {
		if id != orders[0] {
			t.Errorf("copy %d answered order %d, copy 0 order %d", i, id, orders[0])
		}
	}
	if n := f.count(t, `SELECT count(*) FROM orders WHERE event_id = $1`, f.event); n != 1 {
		t.Errorf("orders: %d, want 1", n)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestBoxOfficeRacesOnline: in each round the box office and twenty online buyers go
// for the same seat at once; exactly one of them gets it, the box office's sale and
// the buyers' holds all through the hold_seats statement. No new statement claims
// seats, so the negative control is race_test.go's.
func TestBoxOfficeRacesOnline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 30, 2500)}), Config{})
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")
	boxWins := 0
	for round, seat := range seats {
		var winners atomic.Int32
		var boxWon atomic.Bool
		var errs errorCounter
		atOnce(21, func(i int) {
			var err error
			if i == 0 {
				_, _, err = f.svc.Desk.SellAtBoxOffice(t.Context(), f.sale(member, fmt.Sprintf("race-token-%06d", round), seat))
				if err == nil {
					boxWon.Store(true)
				}
			} else {
				_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyerName(fmt.Sprint("r", round), i), SeatIDs: []int64{seat}})
			}
			switch {
			case err == nil:
				winners.Add(1)
			case !isTaken(err, seat):
				errs.add(err)
			}
		})
		errs.report(t, fmt.Sprintf("round %d", round))
		if n := winners.Load(); n != 1 {
			t.Errorf("round %d: %d winners, want 1", round, n)
		}
		sold := f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND id = $2 AND sold_at IS NOT NULL`, f.event, seat)
		if boxWon.Load() != (sold == 1) {
			t.Errorf("round %d: box office won %v, seat sold %d", round, boxWon.Load(), sold)
		}
		if boxWon.Load() {
			boxWins++
		}
	}
	t.Logf("the box office won %d of %d rounds", boxWins, len(seats))
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestBoxOfficeSaleByQuantity: the box office sells the best seats or standing places
// by number, through best available's and general admission's claims; the same form
// again sells nothing more, the form for another quantity is refused, and a quantity
// that is not there sells nothing.
func TestBoxOfficeSaleByQuantity(t *testing.T) {
	t.Parallel()
	f, rec := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 2500)},
		demo.GATier{Name: "Standing", PriceCents: 1500, Capacity: 10, Stripes: 2}), Config{MaxPerBuyer: 2}).listening()
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")

	best := f.sale(member, "best-token-000000001")
	best.Quantity, best.Together = 3, true
	o, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), best)
	if err != nil || o.Status != StatusConfirmed || len(o.Tickets) != 3 || o.AmountCents != 3*2500 {
		t.Fatalf("best 3: %v, %+v", err, o)
	}
	if got := rec.take(); len(got) != 3 || !slices.Contains(seats, got[0]) {
		t.Errorf("announced: %v, want the 3 seats sold", got)
	}

	ga := f.sale(member, "ga-token-00000000001")
	ga.GATierID, ga.Quantity = f.tier, 4
	g, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), ga)
	if err != nil || g.Status != StatusConfirmed || len(g.Tickets) != 4 || g.AmountCents != 4*1500 || g.GA == nil {
		t.Fatalf("4 standing: %v, %+v", err, g)
	}
	if n := f.gaRemaining(t, f.tier); n != 6 {
		t.Errorf("standing places left: %d, want 6", n)
	}
	if again, replayed, err := f.svc.Desk.SellAtBoxOffice(t.Context(), ga); err != nil || !replayed || again.ID != g.ID {
		t.Errorf("the same form again: %d (replayed %v), %v; want order %d", again.ID, replayed, err, g.ID)
	}
	ga.Quantity = 5
	if _, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), ga); !errors.Is(err, ErrSaleFormUsed) {
		t.Errorf("the form again for another quantity: %v, want ErrSaleFormUsed", err)
	}
	tooMany := f.sale(member, "ga-token-00000000002")
	tooMany.GATierID, tooMany.Quantity = f.tier, 7
	if _, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), tooMany); !errors.Is(err, ErrSoldOut) {
		t.Errorf("7 standing of 6: %v, want sold out", err)
	}
	if n := f.gaRemaining(t, f.tier); n != 6 {
		t.Errorf("standing places left after a refusal: %d, want 6", n)
	}
	both := f.sale(member, "both-token-000000001", seats[5])
	both.Quantity = 1
	if _, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), both); !errors.Is(err, ErrInvalidSale) {
		t.Errorf("seats and a quantity: %v, want ErrInvalidSale", err)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
}
