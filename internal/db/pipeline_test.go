package db_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// Every statement a Pipeline queues answers, sent in a batch, what the Queries method
// of the same name answers sent alone: the same rows, scanned into the same values, and
// the same counts. Each pair runs on the same state (a transaction rolled back after
// each), on an order checked out with two seats and a payment under way.
func TestPipelineAnswersAsQueries(t *testing.T) {
	ctx := t.Context()
	pool, o, p := orderPaying(t)
	eventID, providerID := o.EventID, *p.ProviderPaymentID
	var tier int64
	if err := pool.QueryRow(ctx, `SELECT id FROM ga_tiers WHERE event_id = $1`, eventID).Scan(&tier); err != nil {
		t.Fatal(err)
	}
	var free []int64 // two seats no one holds
	rows, _ := pool.Query(ctx, `SELECT id FROM seats WHERE event_id = $1 AND held_by IS NULL ORDER BY id LIMIT 2`, eventID)
	free, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(free) != 2 {
		t.Fatalf("free seats: %v %v", free, err)
	}
	later := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	hold := db.HoldCreateParams{EventID: eventID, Buyer: "pipe2", SeatCount: 2, TtlSeconds: 600, BuyerLimit: 8}

	for _, c := range []struct {
		name  string
		alone func(tx pgx.Tx) (any, error)
		queue func(p *db.Pipeline) func(pgx.Tx) any
	}{
		{"PaymentEventRecord",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				return q.PaymentEventRecord(ctx, db.PaymentEventRecordParams{Provider: "test", EventID: "evt_pipe", Type: "payment.succeeded", OrderID: &o.ID})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.PaymentEventRecord(db.PaymentEventRecordParams{Provider: "test", EventID: "evt_pipe", Type: "payment.succeeded", OrderID: &o.ID})
				return func(pgx.Tx) any { return r.N }
			}},
		{"OrderLock",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).OrderLock(ctx, o.ID)
				return db.Row[db.Order]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any { r := p.OrderLock(o.ID); return func(pgx.Tx) any { return *r } }},
		{"OrderLock, none",
			func(tx pgx.Tx) (any, error) {
				_, err := db.New(tx).OrderLock(ctx, -1)
				return db.Row[db.Order]{}, ignoreNoRows(err)
			},
			func(p *db.Pipeline) func(pgx.Tx) any { r := p.OrderLock(-1); return func(pgx.Tx) any { return *r } }},
		{"OrderByHold",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).OrderByHold(ctx, db.OrderByHoldParams{EventID: eventID, HoldID: o.HoldID})
				return db.Row[db.Order]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.OrderByHold(db.OrderByHoldParams{EventID: eventID, HoldID: o.HoldID})
				return func(pgx.Tx) any { return *r }
			}},
		{"SeatsOfHold",
			func(tx pgx.Tx) (any, error) {
				return db.New(tx).SeatsOfHold(ctx, db.SeatsOfHoldParams{EventID: eventID, HoldID: &o.HoldID})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.SeatsOfHold(db.SeatsOfHoldParams{EventID: eventID, HoldID: &o.HoldID})
				return func(pgx.Tx) any { return r.Vals }
			}},
		{"HoldBasket",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).HoldBasket(ctx, db.HoldBasketParams{EventID: eventID, ID: o.HoldID})
				return db.Row[db.HoldBasketRow]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.HoldBasket(db.HoldBasketParams{EventID: eventID, ID: o.HoldID})
				return func(pgx.Tx) any { return *r }
			}},
		{"HoldBasketSeats",
			func(tx pgx.Tx) (any, error) {
				return db.New(tx).HoldBasketSeats(ctx, db.HoldBasketSeatsParams{EventID: eventID, HoldID: o.HoldID})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.HoldBasketSeats(db.HoldBasketSeatsParams{EventID: eventID, HoldID: o.HoldID})
				return func(pgx.Tx) any { return r.Vals }
			}},
		{"PricingGet, FeeList, TicketTypeList, TicketTypePriceList",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				p, err1 := q.PricingGet(ctx, eventID)
				fees, err2 := q.FeeList(ctx, eventID)
				types, err3 := q.TicketTypeList(ctx, eventID)
				prices, err4 := q.TicketTypePriceList(ctx, eventID)
				return []any{p, fees, types, prices}, errors.Join(err1, err2, err3, err4)
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				pr, fees, types, prices := p.PricingGet(eventID), p.FeeList(eventID), p.TicketTypeList(eventID), p.TicketTypePriceList(eventID)
				return func(pgx.Tx) any { return []any{pr.Val, fees.Vals, types.Vals, prices.Vals} }
			}},
		{"PaymentClaim, refused while a payment is under way",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).PaymentClaim(ctx, db.PaymentClaimParams{OrderID: o.ID, Provider: "test", IdempotencyKey: "pay_again"})
				return db.Row[db.Payment]{Val: v, Found: err == nil}, ignoreNoRows(err)
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.PaymentClaim(db.PaymentClaimParams{OrderID: o.ID, Provider: "test", IdempotencyKey: "pay_again"})
				return func(pgx.Tx) any { return *r }
			}},
		{"GATierGet",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).GATierGet(ctx, db.GATierGetParams{EventID: eventID, ID: tier})
				return db.Row[db.GATierGetRow]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.GATierGet(db.GATierGetParams{EventID: eventID, ID: tier})
				return func(pgx.Tx) any { return *r }
			}},
		{"HoldCreate (its id and now() differ: the hold it made)",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).HoldCreate(ctx, hold)
				return holdOf(ctx, tx, eventID, v), err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.HoldCreate(hold)
				return func(tx pgx.Tx) any { return holdOf(ctx, tx, eventID, r.Val) }
			}},
		{"GATakeFromOne",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).GATakeFromOne(ctx, db.GATakeFromOneParams{EventID: eventID, TierID: tier, Quantity: 3, Start: 5})
				return db.Row[int32]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.GATakeFromOne(db.GATakeFromOneParams{EventID: eventID, TierID: tier, Quantity: 3, Start: 5})
				return func(pgx.Tx) any { return *r }
			}},
		{"SeatHold",
			func(tx pgx.Tx) (any, error) {
				return db.New(tx).SeatHold(ctx, db.SeatHoldParams{EventID: eventID, SeatIds: free, HoldID: &o.HoldID, ExpiresAt: &later})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.SeatHold(db.SeatHoldParams{EventID: eventID, SeatIds: free, HoldID: &o.HoldID, ExpiresAt: &later})
				return func(pgx.Tx) any { return r.Vals }
			}},
		{"SeatClaimUnlocked",
			func(tx pgx.Tx) (any, error) {
				return db.New(tx).SeatClaimUnlocked(ctx, db.SeatClaimUnlockedParams{EventID: eventID, SeatIds: free, HoldID: &o.HoldID, ExpiresAt: &later})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.SeatClaimUnlocked(db.SeatClaimUnlockedParams{EventID: eventID, SeatIds: free, HoldID: &o.HoldID, ExpiresAt: &later})
				return func(pgx.Tx) any { return r.Vals }
			}},
		{"PaymentLockByProviderID",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				v, err := q.PaymentLockByProviderID(ctx, db.PaymentLockByProviderIDParams{Provider: "test", ProviderPaymentID: &providerID})
				return db.Row[db.Payment]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.PaymentLockByProviderID(db.PaymentLockByProviderIDParams{Provider: "test", ProviderPaymentID: &providerID})
				return func(pgx.Tx) any { return *r }
			}},
		{"PaymentSucceed",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				err := q.PaymentSucceed(ctx, db.PaymentSucceedParams{AmountCents: o.AmountCents, ProviderPaymentID: &providerID, ID: p.ID})
				return paymentState(ctx, tx, p.ID), err
			},
			func(pl *db.Pipeline) func(pgx.Tx) any {
				pl.PaymentSucceed(db.PaymentSucceedParams{AmountCents: o.AmountCents, ProviderPaymentID: &providerID, ID: p.ID})
				return nil
			}},
		{"HoldLock",
			func(tx pgx.Tx) (any, error) {
				v, err := db.New(tx).HoldLock(ctx, db.HoldLockParams{EventID: eventID, ID: o.HoldID})
				return db.Row[db.HoldLockRow]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.HoldLock(db.HoldLockParams{EventID: eventID, ID: o.HoldID})
				return func(pgx.Tx) any { return *r }
			}},
		{"BuyerLock",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				return nil, q.BuyerLock(ctx, db.BuyerLockParams{Buyer: o.Buyer, EventID: eventID})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				p.BuyerLock(db.BuyerLockParams{Buyer: o.Buyer, EventID: eventID})
				return func(pgx.Tx) any { return nil }
			}},
		{"BuyerWithinLimit",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				v, err := q.BuyerWithinLimit(ctx, db.BuyerWithinLimitParams{EventID: eventID, Buyer: o.Buyer, Asked: 2, BuyerLimit: 3})
				return db.Row[db.BuyerWithinLimitRow]{Val: v, Found: true}, err
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.BuyerWithinLimit(db.BuyerWithinLimitParams{EventID: eventID, Buyer: o.Buyer, Asked: 2, BuyerLimit: 3})
				return func(pgx.Tx) any { return *r }
			}},
		{"SeatSell",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				return q.SeatSell(ctx, db.SeatSellParams{EventID: eventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.SeatSell(db.SeatSellParams{EventID: eventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID})
				return func(pgx.Tx) any { return r.Vals }
			}},
		{"SeatSell, then TicketsIssueForSeats",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				if _, err := q.SeatSell(ctx, db.SeatSellParams{EventID: eventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID}); err != nil {
					return nil, err
				}
				return q.TicketsIssueForSeats(ctx, db.TicketsIssueForSeatsParams{EventID: eventID, OrderID: o.ID})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				p.SeatSell(db.SeatSellParams{EventID: eventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID})
				r := p.TicketsIssueForSeats(db.TicketsIssueForSeatsParams{EventID: eventID, OrderID: o.ID})
				return func(pgx.Tx) any { return r.N }
			}},
		{"TicketsIssueForGA",
			func(tx pgx.Tx) (any, error) {
				return db.New(tx).TicketsIssueForGA(ctx, db.TicketsIssueForGAParams{EventID: eventID, OrderID: o.ID, GaTierID: tier, Quantity: 2})
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.TicketsIssueForGA(db.TicketsIssueForGAParams{EventID: eventID, OrderID: o.ID, GaTierID: tier, Quantity: 2})
				return func(pgx.Tx) any { return r.N }
			}},
		{"OrderConfirm",
			func(tx pgx.Tx) (any, error) {
				q := db.New(tx)
				err := q.OrderConfirm(ctx, db.OrderConfirmParams{PaymentID: &providerID, ID: o.ID, EventID: eventID, HoldID: o.HoldID})
				o, _ := q.OrderLock(ctx, o.ID)
				sold, serr := holdSold(ctx, tx, eventID, o.HoldID)
				return [3]any{o.Status, *o.PaymentID, sold}, errors.Join(err, serr)
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				p.OrderConfirm(db.OrderConfirmParams{PaymentID: &providerID, ID: o.ID, EventID: eventID, HoldID: o.HoldID})
				r := p.OrderLock(o.ID)
				return func(tx pgx.Tx) any {
					sold, err := holdSold(ctx, tx, eventID, o.HoldID)
					if err != nil {
						return err.Error()
					}
					return [3]any{r.Val.Status, *r.Val.PaymentID, sold}
				}
			}},
		{"OrderCreate, none (the hold has its order)",
			func(tx pgx.Tx) (any, error) {
				_, err := db.New(tx).OrderCreate(ctx, db.OrderCreateParams{EventID: eventID, HoldID: o.HoldID, Buyer: o.Buyer, SeatIds: o.SeatIds, LinesKind: []string{"ticket"}})
				return db.Row[db.OrderCreateRow]{}, ignoreNoRows(err)
			},
			func(p *db.Pipeline) func(pgx.Tx) any {
				r := p.OrderCreate(db.OrderCreateParams{EventID: eventID, HoldID: o.HoldID, Buyer: o.Buyer, SeatIds: o.SeatIds, LinesKind: []string{"ticket"}})
				return func(pgx.Tx) any { return *r }
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := rolledBack(t, pool, func(tx pgx.Tx) any {
				v, err := c.alone(tx)
				if err != nil {
					t.Fatalf("alone: %v", err)
				}
				return v
			})
			got := rolledBack(t, pool, func(tx pgx.Tx) any {
				var pl db.Pipeline
				result := c.queue(&pl)
				if err := pl.Send(ctx, tx); err != nil {
					t.Fatalf("pipelined: %v", err)
				}
				if result == nil { // the statement returns nothing: read what it did
					return paymentState(ctx, tx, p.ID)
				}
				return result(tx)
			})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("pipelined: %#v\nalone:     %#v", got, want)
			}
		})
	}
	// A statement that fails ends the batch: Send returns its error, and what was
	// queued after it is not run (its result stays empty).
	t.Run("a failure ends the batch", func(t *testing.T) {
		rolledBack(t, pool, func(tx pgx.Tx) any {
			var pl db.Pipeline
			pl.SeatSell(db.SeatSellParams{EventID: eventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID})
			first := pl.TicketsIssueForSeats(db.TicketsIssueForSeatsParams{EventID: eventID, OrderID: o.ID})
			pl.TicketsIssueForSeats(db.TicketsIssueForSeatsParams{EventID: eventID, OrderID: o.ID}) // a second ticket per seat
			after := pl.OrderLock(o.ID)
			err := pl.Send(ctx, tx)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
				t.Fatalf("send: %v, want a unique violation", err)
			}
			if first.N != 2 || after.Found {
				t.Errorf("first issue %d tickets (want 2), order after the failure found %v (want false)", first.N, after.Found)
			}
			if pl.Len() != 0 {
				t.Errorf("pipeline keeps %d statements after Send, want none", pl.Len())
			}
			return nil
		})
	})
}

// orderPaying makes, on a fresh database, an order checked out with two seats of the
// demo event and a payment under way whose provider id (pi_pipe) is recorded.
func orderPaying(t *testing.T) (*pgxpool.Pool, db.Order, db.Payment) {
	t.Helper()
	ctx := t.Context()
	pool := dbtest.Pool(t)
	eventID, err := demo.Create(ctx, pool, demo.DemoSpec(time.Now()))
	if err != nil {
		t.Fatalf("create event: %v", err)
	}
	svc := booking.New(pool, booking.Config{}, nil, nil, slog.New(slog.DiscardHandler))
	var seats []int64
	rows, _ := pool.Query(ctx, `SELECT id FROM seats WHERE event_id = $1 ORDER BY id LIMIT 2`, eventID)
	if seats, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil || len(seats) != 2 {
		t.Fatalf("seats: %v %v", seats, err)
	}
	h, err := svc.Buyer.Hold(ctx, booking.HoldRequest{EventID: eventID, Buyer: "pipe", SeatIDs: seats})
	if err != nil {
		t.Fatalf("hold: %v", err)
	}
	bo, err := svc.Buyer.Checkout(ctx, h.ID, "pipe", "pipe@example.com")
	if err != nil {
		t.Fatalf("checkout: %v", err)
	}
	q := db.New(pool)
	o, err := q.OrderLock(ctx, bo.ID)
	if err != nil {
		t.Fatalf("order: %v", err)
	}
	p, err := q.PaymentClaim(ctx, db.PaymentClaimParams{OrderID: o.ID, Provider: "test", IdempotencyKey: "pay_pipe"})
	if err != nil {
		t.Fatalf("payment claim: %v", err)
	}
	providerID := "pi_pipe"
	if err := q.PaymentSetProviderID(ctx, db.PaymentSetProviderIDParams{ID: p.ID, ProviderPaymentID: &providerID}); err != nil {
		t.Fatalf("payment id: %v", err)
	}
	p.ProviderPaymentID = &providerID
	return pool, o, p
}

// rolledBack runs fn in a transaction that it rolls back, and returns fn's answer.
func rolledBack(t *testing.T, pool *pgxpool.Pool, fn func(pgx.Tx) any) any {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context())) //nolint:errcheck // the point
	return fn(tx)
}

// ignoreNoRows is err, but nil for "no rows": a Row's Found says that.
func ignoreNoRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// holdOf describes the hold row made as HoldCreate said: its buyer, seats and time to
// live, and whether its expiry is the one HoldCreate answered.
func holdOf(ctx context.Context, tx pgx.Tx, eventID int64, made db.HoldCreateRow) string {
	var desc string
	err := tx.QueryRow(ctx, `
		SELECT buyer || ' ' || seat_count || ' ' || extract(epoch FROM expires_at - now())::int || ' ' || (expires_at = $3)
		FROM holds WHERE event_id = $1 AND id = $2`, eventID, made.ID, made.ExpiresAt).Scan(&desc)
	if err != nil {
		return "error: " + err.Error()
	}
	return desc
}

// paymentState is the payment's state and amount, as tx sees them.
func paymentState(ctx context.Context, tx pgx.Tx, id int64) string {
	var state string
	if err := tx.QueryRow(ctx, `SELECT state || ' ' || amount_cents FROM payments WHERE id = $1`, id).Scan(&state); err != nil {
		return "error: " + err.Error()
	}
	return state
}

// holdSold reads whether the hold is marked sold, in tx.
func holdSold(ctx context.Context, tx pgx.Tx, eventID, holdID int64) (bool, error) {
	var sold bool
	err := tx.QueryRow(ctx, `SELECT sold_at IS NOT NULL FROM holds WHERE event_id = $1 AND id = $2`, eventID, holdID).Scan(&sold)
	return sold, err
}
