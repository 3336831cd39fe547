package booking

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"boxoffice/internal/demo"
)

// limitSpec has 40 seats and 20 GA places.
func limitSpec() demo.EventSpec {
	return smallSpec([]demo.Section{oneRow("Floor", 40, 5000)},
		demo.GATier{Name: "Standing", PriceCents: 2000, Capacity: 20, Stripes: 4})
}

// wantLimit fails t unless err is a *LimitError of the default limit.
func wantLimit(t *testing.T, what string, err error) {
	t.Helper()
	var lim *LimitError
	if !errors.As(err, &lim) || lim.Limit != 10 {
		t.Errorf("%s: got %v, want *LimitError with Limit 10", what, err)
	}
}

// TestBuyerLimitConcurrent: one buyer sends 30 one-seat holds at once. The buyer lock
// makes them count one after another: exactly 10 succeed, the other 20 are refused
// with *LimitError, and the database holds 10 seats for the buyer.
func TestBuyerLimitConcurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	var ok, limited atomic.Int64
	var errs errorCounter
	atOnce(30, func(i int) {
		_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "greedy", SeatIDs: []int64{seats[i]}})
		var lim *LimitError
		switch {
		case err == nil:
			ok.Add(1)
		case errors.As(err, &lim) && lim.Limit == 10 && lim.Held == 10:
			limited.Add(1)
		default:
			errs.add(err)
		}
	})
	errs.report(t, "holds")
	if ok.Load() != 10 || limited.Load() != 20 {
		t.Errorf("got %d held and %d refused, want 10 and 20", ok.Load(), limited.Load())
	}
	if got := f.count(t, `
		SELECT count(*) FROM seats s JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
		WHERE s.event_id = $1 AND h.buyer = 'greedy'`, f.event); got != 10 {
		t.Errorf("seats held for the buyer in the database: got %d, want 10", got)
	}
}

// TestBuyerLimitConcurrentNegativeControl proves the concurrent limit test can catch a
// race: a claim that counts what the buyer holds and then opens a hold, as separate
// statements without the buyer lock, lets the same 30 requests at once past ten. It
// tries a few buyers, as one round could in principle run one request at a time.
func TestBuyerLimitConcurrentNegativeControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), DefaultConfig())
	ctx := t.Context()
	var got []int64
	for round := range 5 {
		buyer := fmt.Sprintf("greedy%d", round)
		var ok atomic.Int64
		var errs errorCounter
		atOnce(30, func(int) {
			var held int
			err := f.pool.QueryRow(ctx, `
				SELECT coalesce(sum(seat_count), 0)::int FROM holds
				WHERE event_id = $1 AND buyer = $2 AND released_at IS NULL AND expires_at > now()`, f.event, buyer).Scan(&held)
			if err != nil || held >= 10 {
				if err != nil {
					errs.add(err)
				}
				return
			}
			if _, err := f.pool.Exec(ctx, `
				INSERT INTO holds (event_id, buyer, seat_count, expires_at)
				VALUES ($1, $2, 1, now() + interval '10 minutes')`, f.event, buyer); err != nil {
				errs.add(err)
				return
			}
			ok.Add(1)
		})
		errs.report(t, "count-then-insert holds")
		if got = append(got, ok.Load()); ok.Load() > 10 {
			break
		}
	}
	if slices.Max(got) <= 10 {
		t.Errorf("count-then-insert holds: got at most %d held per round (%v), want more than 10 in some round", slices.Max(got), got)
	}
	t.Logf("count-then-insert holds per round: %v", got)
}

// TestBuyerLimitAllowance: what frees the allowance and what keeps using it.
func TestBuyerLimitAllowance(t *testing.T) {
	t.Parallel()

	t.Run("one request over the limit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		// A request for more than the limit is malformed (CheckHold), whatever the
		// buyer has: refused before the database is asked.
		for _, r := range []struct {
			what string
			req  HoldRequest
			code string
		}{
			{"11 exact seats", HoldRequest{SeatIDs: seats[:11]}, "too_many_seats"},
			{"best available for 11", HoldRequest{Quantity: 11}, "invalid_quantity"},
			{"11 GA places", HoldRequest{GATierID: f.tier, Quantity: 11}, "invalid_quantity"},
		} {
			r.req.EventID, r.req.Buyer = f.event, "a"
			var inv *InvalidError
			if _, err := f.svc.Buyer.Hold(t.Context(), r.req); !errors.As(err, &inv) || inv.Code != r.code {
				t.Errorf("%s: got %v, want an *InvalidError %s", r.what, err, r.code)
			}
		}
		f.hold(t, "a", seats[:10]...)
	})

	t.Run("release frees it", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		h1 := f.hold(t, "a", seats[:3]...)
		f.hold(t, "a", seats[3:10]...)
		_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: seats[10:11]})
		wantLimit(t, "11th seat", err)
		if err := f.svc.Buyer.Release(t.Context(), h1.ID, "a"); err != nil {
			t.Fatal(err)
		}
		f.hold(t, "a", seats[10:13]...)
		_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: seats[13:14]})
		wantLimit(t, "11th seat after the release", err)
	})

	t.Run("lapsed holds free it", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		h := f.hold(t, "a", seats[:10]...)
		f.lapse(t, h.ID)
		f.hold(t, "a", seats[10:20]...)
		_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: seats[20:21]})
		wantLimit(t, "11th live seat", err)
	})

	t.Run("confirmed order keeps counting", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		o := f.checkout(t, f.hold(t, "a", seats[:4]...), "a")
		if got := f.pay(t, o, "evt_1"); got != OutcomeConfirmed {
			t.Fatalf("payment: got %q, want %q", got, OutcomeConfirmed)
		}
		f.lapse(t, o.HoldID) // a sold hold's expiry is past history; it still counts
		h := f.hold(t, "a", seats[4:10]...)
		_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: seats[10:11]})
		wantLimit(t, "a seat beyond 4 bought and 6 held", err)
		if err := f.svc.Buyer.Release(t.Context(), h.ID, "a"); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: seats[10:17]})
		wantLimit(t, "7 seats beyond 4 bought", err)
		f.hold(t, "a", seats[10:16]...)
	})

	t.Run("GA places count too", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		tier := f.tier
		if _, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", GATierID: tier, Quantity: 6}); err != nil {
			t.Fatal(err)
		}
		f.hold(t, "a", seats[:4]...)
		_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", SeatIDs: seats[4:5]})
		wantLimit(t, "a seat beyond 6 places and 4 seats", err)
		_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", GATierID: tier, Quantity: 1})
		wantLimit(t, "a place beyond 6 places and 4 seats", err)
		_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "a", Quantity: 1})
		wantLimit(t, "best available beyond 6 places and 4 seats", err)
		// Another buyer is not affected, and a refused request takes nothing.
		if got := f.gaRemaining(t, tier); got != 14 {
			t.Errorf("places left: got %d, want 14", got)
		}
		f.hold(t, "b", seats[4:14]...)
	})

	t.Run("re-claim on payment respects it", func(t *testing.T) {
		t.Parallel()
		// A's first hold lapses after checkout; A then holds ten more seats. Paying
		// for the first order would take A to 14: it must be refunded, not sold.
		f := newFixture(t, limitSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		o := f.checkout(t, f.hold(t, "a", seats[:4]...), "a")
		f.lapse(t, o.HoldID)
		f.hold(t, "a", seats[4:14]...)
		if got := f.pay(t, o, "evt_1"); got != OutcomeRefundPending {
			t.Errorf("payment: got %q, want %q", got, OutcomeRefundPending)
		}
		if st, reason := f.orderStatus(t, o.ID); st != StatusRefundPending || reason != "buyer_limit" {
			t.Errorf("order: got %s (%s), want refund_pending (buyer_limit)", st, reason)
		}
		if n := f.soldTo(t, o.ID); n != 0 {
			t.Errorf("seats sold: got %d, want 0", n)
		}
	})

	t.Run("buyers are counted apart", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), DefaultConfig())
		seats := f.rowSeats(t, "Floor", "A")
		for i := range 4 {
			f.hold(t, fmt.Sprintf("buyer%d", i), seats[10*i:10*i+10]...)
		}
	})
}
