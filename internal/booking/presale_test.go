package booking

import (
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/demo"
)

// Presale windows, on the database clock.
const (
	presaleOpen    = "now() - interval '10 minutes', now() + interval '50 minutes'"
	presaleLater   = "now() + interval '10 minutes', now() + interval '50 minutes'"
	presaleOver    = "now() - interval '50 minutes', now() - interval '10 minutes'"
	presaleWeekend = "now() - interval '10 minutes', now() + interval '3 days'"
)

// accessCode makes an access code on event with a quota (0: none) and a presale
// window (the SQL of its start and end).
func (f fixture) accessCode(t *testing.T, event int64, code string, quota int, window string, paused bool) int64 {
	t.Helper()
	return f.ids(t, `INSERT INTO access_codes (event_id, code, presale_starts_at, presale_ends_at, quota, paused)
		VALUES ($1, $2, `+window+`, nullif($3::int, 0), $4) RETURNING id`, event, code, quota, paused)[0]
}

// otherEvent is a second event on the fixture's venue, with its own sale.
func (f fixture) otherEvent(t *testing.T) int64 {
	t.Helper()
	return f.ids(t, `INSERT INTO events (venue_id, slug, name, starts_at, onsale_at, published)
		SELECT venue_id, slug || '-other', name || ' (other)', starts_at, onsale_at, published FROM events WHERE id = $1
		RETURNING id`, f.event)[0]
}

// codePlaces is the places of the holds that record the code, bought or live.
func (f fixture) codePlaces(t *testing.T, code int64) int {
	t.Helper()
	return f.count(t, `SELECT access_code_places($1, $2)`, f.event, code)
}

// TestPresaleHolds: before the onsale every kind of hold goes through with an open
// access code of the event, and records it; without a code, or with one paused, over,
// not begun yet, or of another event, it is not_on_sale and nothing is held.
func TestPresaleHolds(t *testing.T) {
	t.Parallel()
	for _, k := range windowHoldKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, windowSpec(), DefaultConfig())
			f.setSale(t, beforeOnsale)
			refused := map[string]int64{
				"no code":     0,
				"paused":      f.accessCode(t, f.event, "PAUSED", 0, presaleOpen, true),
				"over":        f.accessCode(t, f.event, "OVER", 0, presaleOver, false),
				"not begun":   f.accessCode(t, f.event, "LATER", 0, presaleLater, false),
				"other event": f.accessCode(t, f.otherEvent(t), "OTHER", 0, presaleOpen, false),
			}
			open := f.accessCode(t, f.event, "MEMBERS", 0, presaleOpen, false)
			req := k.req(f, f.rowSeats(t, "Floor", "A"))
			req.EventID, req.Buyer = f.event, "ada"
			for name, code := range refused {
				before := f.state(t)
				req.AccessCode = code
				_, err := f.svc.Buyer.Hold(t.Context(), req)
				t.Run(name, func(t *testing.T) { f.checkRefusal(t, beforeOnsale, err, before) })
			}
			req.AccessCode = open
			h, err := f.svc.Buyer.Hold(t.Context(), req)
			if err != nil {
				t.Fatalf("with the open code: got %v, want a hold", err)
			}
			ac, found, err := f.svc.Buyer.HoldAccessCode(t.Context(), h.ID, "ada")
			if err != nil || !found || ac.ID != open || ac.Code != "MEMBERS" {
				t.Errorf("the hold's code: got %+v, %v, %v; want MEMBERS (%d)", ac, found, err, open)
			}
			if _, found, _ := f.svc.Buyer.HoldAccessCode(t.Context(), h.ID, "bob"); found {
				t.Errorf("another buyer reads the hold's code; want not found")
			}
		})
	}
}

// TestPresaleCheckoutAndPay: a hold made in the presale checks out and is paid before
// the onsale, and its order is confirmed; once the presale is over (still before the
// onsale) its checkout is refused as not_on_sale.
func TestPresaleCheckoutAndPay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, windowSpec(), DefaultConfig())
	provider := newFakeProvider()
	f = f.withProvider(provider)
	f.setSale(t, beforeOnsale)
	code := f.accessCode(t, f.event, "MEMBERS", 0, presaleOpen, false)
	seats := f.rowSeats(t, "Floor", "A")

	h, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "ada", SeatIDs: seats[:2], AccessCode: code})
	if err != nil {
		t.Fatalf("presale hold: %v", err)
	}
	o := f.checkout(t, h, "ada")
	if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "ada", PaymentMethod{Method: "4242 4242 4242 4242"}); err != nil {
		t.Fatalf("pay in the presale: %v", err)
	}
	ev := provider.chargeOf(t, o.ID).event("evt_presale", KindPaymentSucceeded)
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ev); err != nil || got != OutcomeConfirmed {
		t.Fatalf("confirm: got %q, %v, want %q", got, err, OutcomeConfirmed)
	}
	if n := f.soldTo(t, o.ID); n != 2 {
		t.Errorf("got %d seats sold, want 2", n)
	}
	if n := f.codePlaces(t, code); n != 2 {
		t.Errorf("the code's places: got %d, want the 2 bought", n)
	}

	h2, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "bob", SeatIDs: seats[2:3], AccessCode: code})
	if err != nil {
		t.Fatalf("second presale hold: %v", err)
	}
	if _, err := f.pool.Exec(t.Context(), `UPDATE access_codes SET presale_starts_at = now() - interval '2 hours',
		presale_ends_at = now() - interval '1 minute' WHERE id = $1`, code); err != nil {
		t.Fatal(err)
	}
	before := f.state(t)
	_, err = f.svc.Buyer.Checkout(t.Context(), h2.ID, "bob", "bob@example.com")
	f.checkRefusal(t, beforeOnsale, err, before)
}

// TestPresaleQuota: the quota counts live and bought places under the code; past it a
// hold is presale_quota before the onsale, seats added to a hold with the code too;
// after the onsale a new hold past the quota is a public hold without the code.
func TestPresaleQuota(t *testing.T) {
	t.Parallel()
	f := newFixture(t, windowSpec(), DefaultConfig())
	f.setSale(t, beforeOnsale)
	code := f.accessCode(t, f.event, "THREE", 3, presaleWeekend, false)
	seats := f.rowSeats(t, "Floor", "A")
	hold := func(buyer string, ids ...int64) (Hold, error) {
		return f.svc.Buyer.AddToBasket(t.Context(), HoldRequest{EventID: f.event, Buyer: buyer, SeatIDs: ids, AccessCode: code})
	}
	if _, err := hold("ada", seats[0], seats[1]); err != nil {
		t.Fatalf("two of three: %v", err)
	}
	if _, err := hold("bob", seats[2], seats[3]); !errors.Is(err, ErrPresaleQuota) {
		t.Fatalf("two more: got %v, want ErrPresaleQuota", err)
	}
	if _, err := hold("ada", seats[4], seats[5]); !errors.Is(err, ErrPresaleQuota) {
		t.Fatalf("two more into ada's basket: got %v, want ErrPresaleQuota", err)
	}
	if _, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "bob", GATierID: f.tier, Quantity: 2, AccessCode: code}); !errors.Is(err, ErrPresaleQuota) {
		t.Fatalf("two standing places: got %v, want ErrPresaleQuota", err)
	}
	h, err := hold("ada", seats[4])
	if err != nil || len(h.Seats) != 3 {
		t.Fatalf("the third place, into ada's basket: got %+v, %v; want a basket of 3", h, err)
	}
	if n := f.codePlaces(t, code); n != 3 {
		t.Errorf("the code's places: got %d, want 3", n)
	}

	f.setSale(t, saleOpen)
	h, err = hold("bob", seats[6])
	if err != nil {
		t.Fatalf("after the onsale: %v", err)
	}
	if _, found, _ := f.svc.Buyer.HoldAccessCode(t.Context(), h.ID, "bob"); found {
		t.Errorf("a public hold past the quota records the code; want none")
	}
	if _, err := hold("ada", seats[7]); !errors.Is(err, ErrPresaleQuota) {
		t.Errorf("adding to the presale basket after the onsale: got %v, want ErrPresaleQuota", err)
	}
	if n := f.codePlaces(t, code); n != 3 {
		t.Errorf("the code's places: got %d, want 3", n)
	}
}

// presaleRaceSpec is forty seats in one row, and forty standing places.
func presaleRaceSpec() demo.EventSpec {
	return smallSpec([]demo.Section{oneRow("Floor", 40, 5000)},
		demo.GATier{Name: "Standing", PriceCents: 2000, Capacity: 40, Stripes: 4})
}

// TestPresaleQuotaRace: forty buyers with a code whose quota is five hold at once
// before the onsale, exact seats and standing places; five places are held under the
// code, never more, and everyone else is told presale_quota.
func TestPresaleQuotaRace(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"exact seats", "standing places"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, presaleRaceSpec(), DefaultConfig())
			f.setSale(t, beforeOnsale)
			code := f.accessCode(t, f.event, "FIVE", 5, presaleOpen, false)
			seats := f.rowSeats(t, "Floor", "A")
			errs := make([]error, len(seats))
			atOnce(len(seats), func(i int) {
				req := HoldRequest{EventID: f.event, Buyer: buyerName("b", i), AccessCode: code, SeatIDs: seats[i : i+1]}
				if kind == "standing places" {
					req.SeatIDs, req.GATierID, req.Quantity = nil, f.tier, 1
				}
				_, errs[i] = f.svc.Buyer.Hold(t.Context(), req)
			})
			held := 0
			for i, err := range errs {
				switch {
				case err == nil:
					held++
				case !errors.Is(err, ErrPresaleQuota):
					t.Errorf("buyer %d: got %v, want a hold or ErrPresaleQuota", i, err)
				}
			}
			places := f.count(t, `SELECT coalesce(sum(seat_count + ga_quantity), 0) FROM holds
				WHERE event_id = $1 AND access_code_id = $2`, f.event, code)
			all := f.count(t, `SELECT coalesce(sum(seat_count + ga_quantity), 0) FROM holds WHERE event_id = $1`, f.event)
			if held != 5 || places != 5 || all != 5 {
				t.Fatalf("got %d holds said yes, %d places under the code, %d held in all; want 5 each", held, places, all)
			}
		})
	}
}

// TestPresaleQuotaRaceUnlocked is the race's negative control: the same forty buyers,
// each counting the code's places (hold_presale) in a statement of its own without
// the code's lock and then writing its hold, all get through a quota of five. The
// count guards the quota only under the lock and in the claim's transaction.
func TestPresaleQuotaRaceUnlocked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, presaleRaceSpec(), DefaultConfig())
	f.setSale(t, beforeOnsale)
	code := f.accessCode(t, f.event, "FIVE", 5, presaleOpen, false)
	const buyers = 12 // each keeps a connection while the others count
	var counted sync.WaitGroup
	counted.Add(buyers)
	atOnce(buyers, func(i int) {
		err := pgx.BeginFunc(t.Context(), f.pool, func(tx pgx.Tx) error {
			var status string
			err := tx.QueryRow(t.Context(), `SELECT status FROM hold_presale($1, 'not_on_sale', $2, 1, false)`, f.event, code).Scan(&status)
			counted.Done()
			counted.Wait() // every buyer has counted before any writes
			if err != nil || status != "on_sale" {
				return err
			}
			_, err = tx.Exec(t.Context(), `INSERT INTO holds (event_id, buyer, seat_count, expires_at, access_code_id)
				VALUES ($1, $2, 1, now() + interval '10 minutes', $3)`, f.event, buyerName("b", i), code)
			return err
		})
		if err != nil {
			t.Errorf("buyer %d: %v", i, err)
		}
	})
	if n := f.codePlaces(t, code); n <= 5 {
		t.Fatalf("without the lock: got %d places under the code, want more than the quota of 5 (the control cannot tell)", n)
	}
}
