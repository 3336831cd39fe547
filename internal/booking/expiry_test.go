package booking

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// expirySpec has a seat for every iteration of the expiry race.
func expirySpec() demo.EventSpec {
	return smallSpec([]demo.Section{{Name: "Floor", Rows: 10, SeatsPerRow: 25, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 5000}}}})
}

// TestExpiryConfirmRace races, around the moment a hold lapses, the payment of the
// buyer whose hold it is (A) against a second buyer (B) who keeps trying to hold the
// same seat, with the tidy-up running too. Whatever the order, the seat is sold once:
// A's order ends confirmed (its hold was live, or lapsed and the seat was still free to
// re-claim) or refund_pending (B got there first, and B's order is the confirmed one),
// never pending after its success event and never both. Both outcomes must turn up
// across the iterations, so the race is really run on both sides of the expiry.
func TestExpiryConfirmRace(t *testing.T) {
	t.Parallel()
	const ttl = 50 * time.Millisecond
	iterations, batch := 200, 25
	if testing.Short() {
		iterations = 50
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	base := newFixture(t, expirySpec(), Config{HoldTTL: ttl})
	// B's hold must outlive B's own checkout, however slow the machine: B uses the
	// normal rules on the same database.
	b := base.withService(DefaultConfig())
	ctx := t.Context()
	var seats []int64
	for _, row := range []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"} {
		seats = append(seats, base.rowSeats(t, "Floor", row)...)
	}
	if len(seats) < iterations {
		t.Fatalf("got %d seats, want at least %d", len(seats), iterations)
	}

	// One iteration's story, told by its goroutines and judged afterwards.
	type story struct {
		seat           int64
		orderA, orderB *Order
		outA, outB     PaymentOutcome
	}
	stories := make([]story, iterations)
	var aRetries, bTries atomic.Int64
	var errs errorCounter
	rngs := make([]*rand.Rand, batch)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(seed, uint64(i)))
	}
	for first := 0; first < iterations; first += batch {
		atOnce(batch, func(k int) {
			it := first + k
			if it >= iterations {
				return
			}
			st := &stories[it]
			seat, rng := seats[it], rngs[k]
			st.seat = seat
			buyerA, buyerB := fmt.Sprintf("a%03d", it), fmt.Sprintf("b%03d", it)
			// A holds and checks out while the hold is live. On a busy machine the
			// checkout can miss so short a hold; then A simply tries again, for a while.
			var orderA Order
			for deadline := time.Now().Add(20 * time.Second); ; {
				h, err := base.svc.Buyer.Hold(ctx, HoldRequest{EventID: base.event, Buyer: buyerA, SeatIDs: []int64{seat}})
				if err == nil {
					orderA, err = base.svc.Buyer.Checkout(ctx, h.ID, buyerA, "a@example.com")
				}
				if err == nil {
					st.orderA = &orderA
					break
				}
				if !errors.Is(err, ErrHoldExpired) || time.Now().After(deadline) {
					errs.add(fmt.Errorf("iteration %d: A's hold and checkout: %w", it, err))
					return
				}
				aRetries.Add(1)
			}
			// The database's clock decides the expiry: ask it how long the hold has left,
			// and land A's payment up to half a TTL either side of that moment.
			var left float64
			err := base.pool.QueryRow(ctx, `
				SELECT extract(epoch FROM expires_at - clock_timestamp())::float8
				FROM holds WHERE event_id = $1 AND id = $2`, base.event, orderA.HoldID.Seq).Scan(&left)
			if err != nil {
				errs.add(fmt.Errorf("iteration %d: time left on A's hold: %w", it, err))
				return
			}
			payAt := time.Duration(left*float64(time.Second)) - ttl/2 + time.Duration(rng.Int64N(int64(ttl)))
			tidyAt := time.Duration(rng.Int64N(int64(2 * ttl)))

			aDone := make(chan struct{})
			atOnce(3, func(role int) {
				switch role {
				case 0: // A's payment lands at a random moment around the expiry.
					defer close(aDone)
					wait(ctx, payAt)
					var err error
					if st.outA, err = base.svc.Buyer.ApplyPayment(ctx, "test", paid(orderA, fmt.Sprintf("evt_a%03d", it))); err != nil {
						errs.add(fmt.Errorf("iteration %d: A's payment: %w", it, err))
					}
				case 1: // B tries until it holds the seat or A's payment has decided.
					for {
						bTries.Add(1)
						h, err := b.svc.Buyer.Hold(ctx, HoldRequest{EventID: base.event, Buyer: buyerB, SeatIDs: []int64{seat}})
						var taken *SeatsUnavailableError
						if err == nil {
							o, err := b.svc.Buyer.Checkout(ctx, h.ID, buyerB, "b@example.com")
							if err != nil {
								errs.add(fmt.Errorf("iteration %d: B's checkout: %w", it, err))
								return
							}
							st.orderB = &o
							if st.outB, err = b.svc.Buyer.ApplyPayment(ctx, "test", paid(o, fmt.Sprintf("evt_b%03d", it))); err != nil {
								errs.add(fmt.Errorf("iteration %d: B's payment: %w", it, err))
							}
							return
						} else if !errors.As(err, &taken) {
							errs.add(fmt.Errorf("iteration %d: B's hold: %w", it, err))
							return
						}
						select {
						case <-aDone:
							return
						default:
						}
					}
				case 2:
					wait(ctx, tidyAt)
					if _, err := base.svc.Worker.Tidy(ctx); err != nil {
						errs.add(fmt.Errorf("iteration %d: tidy: %w", it, err))
					}
				}
			})

		})
		if errs.n.Load() > 0 {
			break
		}
	}
	errs.report(t, "expiry race")

	var aConfirmed, aRefunded, bConfirmed int
	for it, st := range stories {
		if st.orderA == nil {
			continue // A never got its order; the error is reported above
		}
		status, reason := base.orderStatus(t, st.orderA.ID)
		owner := base.count(t, `SELECT coalesce(order_id, 0) FROM seats WHERE event_id = $1 AND id = $2`, base.event, st.seat)
		switch {
		case st.outA == OutcomeConfirmed && status == StatusConfirmed:
			aConfirmed++
			if st.orderB != nil {
				t.Errorf("iteration %d: A confirmed, yet B held the seat too (order %d)", it, st.orderB.ID)
			}
			if int64(owner) != st.orderA.ID {
				t.Errorf("iteration %d: seat sold to order %d, want A's order %d", it, owner, st.orderA.ID)
			}
		case st.outA == OutcomeRefundPending && status == StatusRefundPending && reason == "seats_unavailable":
			aRefunded++
			if st.orderB == nil {
				t.Errorf("iteration %d: A refund_pending, but B never held the seat", it)
			}
		default:
			t.Errorf("iteration %d: A's payment: got outcome %q, status %q (%s), want confirmed or refund_pending (seats_unavailable)", it, st.outA, status, reason)
		}
		if st.orderB != nil {
			if bs, _ := base.orderStatus(t, st.orderB.ID); st.outB != OutcomeConfirmed || bs != StatusConfirmed {
				t.Errorf("iteration %d: B's payment: got outcome %q, status %q, want confirmed", it, st.outB, bs)
			} else if bConfirmed++; int64(owner) != st.orderB.ID {
				t.Errorf("iteration %d: seat sold to order %d, want B's order %d", it, owner, st.orderB.ID)
			}
		}
	}

	errs.report(t, "expiry race")

	// In SQL: every order had its success event, so none is pending; a seat is sold to
	// at most one order, and exactly one confirmed order claims each sold seat.
	if got := base.count(t, `SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'pending'`, base.event); got != 0 {
		t.Errorf("got %d orders still pending after their success event, want 0", got)
	}
	if got := base.count(t, `
		SELECT count(*) FROM (
			SELECT x FROM orders o, unnest(o.seat_ids) x
			WHERE o.event_id = $1 AND o.status = 'confirmed'
			GROUP BY x HAVING count(*) > 1) d`, base.event); got != 0 {
		t.Errorf("got %d seats with two confirmed orders, want 0", got)
	}
	if got, want := base.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NOT NULL`, base.event),
		aConfirmed+bConfirmed; got != want {
		t.Errorf("got %d seats sold, want %d (one per confirmed order)", got, want)
	}
	// A confirm after the hold's expiry re-claimed the seat; count them to show both
	// branches of a confirmed A are taken.
	aLate := base.count(t, `
		SELECT count(*) FROM orders o JOIN holds h ON h.event_id = o.event_id AND h.id = o.hold_id
		WHERE o.event_id = $1 AND o.buyer LIKE 'a%' AND o.status = 'confirmed' AND o.confirmed_at >= h.expires_at`, base.event)
	t.Logf("A confirmed %d (%d of them after the hold lapsed), A refund_pending %d, B confirmed %d; A's checkout missed its hold %d times, B tried %d holds",
		aConfirmed, aLate, aRefunded, bConfirmed, aRetries.Load(), bTries.Load())
	// Which way each race goes depends on the machine's speed: on a loaded machine A may
	// never win. TestExpiryBranches forces every branch; here the invariants above are
	// the assertion, whatever the mix.
	if aConfirmed == 0 || aRefunded == 0 {
		t.Logf("only one outcome this run: %d A confirmed, %d A refund_pending", aConfirmed, aRefunded)
	}
}

// TestExpiryBranches forces each way a payment can meet a lapsed hold, without timing.
func TestExpiryBranches(t *testing.T) {
	t.Parallel()
	spec := func() demo.EventSpec { return smallSpec([]demo.Section{oneRow("Floor", 4, 5000)}) }

	t.Run("lapsed and taken by another buyer", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, spec(), DefaultConfig())
		seat := f.rowSeats(t, "Floor", "A")[0]
		orderA := f.checkout(t, f.hold(t, "a", seat), "a")
		f.lapse(t, orderA.HoldID)
		orderB := f.checkout(t, f.hold(t, "b", seat), "b")

		if got := f.pay(t, orderA, "evt_a"); got != OutcomeRefundPending {
			t.Errorf("A's payment: got %q, want %q", got, OutcomeRefundPending)
		}
		if st, reason := f.orderStatus(t, orderA.ID); st != StatusRefundPending || reason != "seats_unavailable" {
			t.Errorf("A's order: got %s (%s), want refund_pending (seats_unavailable)", st, reason)
		}
		if got := f.pay(t, orderB, "evt_b"); got != OutcomeConfirmed {
			t.Errorf("B's payment: got %q, want %q", got, OutcomeConfirmed)
		}
		if got := f.count(t, `SELECT order_id FROM seats WHERE event_id = $1 AND id = $2`, f.event, seat); int64(got) != orderB.ID {
			t.Errorf("seat sold to order %d, want B's order %d", got, orderB.ID)
		}
	})

	for _, tidy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lapsed and free, tidied %v", tidy), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, spec(), DefaultConfig())
			seat := f.rowSeats(t, "Floor", "A")[0]
			orderA := f.checkout(t, f.hold(t, "a", seat), "a")
			f.lapse(t, orderA.HoldID)
			if tidy {
				res, err := f.svc.Worker.Tidy(t.Context())
				if err != nil {
					t.Fatalf("tidy: %v", err)
				}
				if got := len(res.Seats[f.event]); got != 1 {
					t.Errorf("tidy freed %d seats, want 1", got)
				}
			}
			if got := f.pay(t, orderA, "evt_a"); got != OutcomeConfirmed {
				t.Errorf("A's payment: got %q, want %q (the seat is free to re-claim)", got, OutcomeConfirmed)
			}
			if got := f.count(t, `SELECT order_id FROM seats WHERE event_id = $1 AND id = $2`, f.event, seat); int64(got) != orderA.ID {
				t.Errorf("seat sold to order %d, want A's order %d", got, orderA.ID)
			}
			_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "b", SeatIDs: []int64{seat}})
			var taken *SeatsUnavailableError
			if !errors.As(err, &taken) {
				t.Errorf("B's hold of the sold seat: got %v, want *SeatsUnavailableError", err)
			}
		})
	}

	t.Run("live hold sold before the lapse", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, spec(), DefaultConfig())
		seat := f.rowSeats(t, "Floor", "A")[0]
		orderA := f.checkout(t, f.hold(t, "a", seat), "a")
		if got := f.pay(t, orderA, "evt_a"); got != OutcomeConfirmed {
			t.Errorf("A's payment: got %q, want %q", got, OutcomeConfirmed)
		}
		f.lapse(t, orderA.HoldID) // the old expiry no longer matters once sold
		if _, err := f.svc.Worker.Tidy(t.Context()); err != nil {
			t.Fatalf("tidy: %v", err)
		}
		_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "b", SeatIDs: []int64{seat}})
		var taken *SeatsUnavailableError
		if !errors.As(err, &taken) {
			t.Errorf("B's hold of a sold seat whose hold lapsed: got %v, want *SeatsUnavailableError", err)
		}
	})
}
