package booking

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/payment"
)

// PaymentOutcome says what a payment event did.
type PaymentOutcome string

// Outcomes of ApplyPayment.
const (
	OutcomeDuplicate     PaymentOutcome = "duplicate"      // this provider event was acted on before
	OutcomeConfirmed     PaymentOutcome = "confirmed"      // the order is sold and has tickets
	OutcomeRefundPending PaymentOutcome = "refund_pending" // paid, but nothing could be sold
	OutcomeIgnored       PaymentOutcome = "ignored"        // nothing to do: unknown order, or it moved on
	OutcomeFailed        PaymentOutcome = "failed"         // the payment failed; the order stays pending
)

// ApplyPayment acts on a verified provider event, exactly once per provider event id,
// and idempotently per order: the event id is recorded in the transaction that acts on
// it, and the order row is locked while its state moves, which only ever moves forward.
//
// A success sells the order's seats: those still held by its hold, or free again after
// the hold lapsed, are sold in one statement. If any is gone, nothing is sold and the
// order goes to refund_pending: money is reversible, a double sale is not.
//
// The sales window does not apply here, on purpose: the payment was claimed while the
// sale was open (OrderClaimPayment carries the window), the money is taken, and
// selling what was held in time is right even if the webhook arrives after the close.
func (s *Service) ApplyPayment(ctx context.Context, provider string, ev payment.Event) (PaymentOutcome, error) {
	outcome := OutcomeIgnored
	var sold []int64
	var eventID int64
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		sold, outcome = nil, OutcomeIgnored
		n, err := q.PaymentEventRecord(ctx, db.PaymentEventRecordParams{
			Provider: provider, EventID: ev.ID, Type: ev.Type, OrderID: &ev.OrderID,
		})
		if err != nil {
			return err
		}
		if n == 0 {
			outcome = OutcomeDuplicate
			return nil
		}
		o, err := q.OrderLock(ctx, ev.OrderID)
		if errors.Is(err, pgx.ErrNoRows) {
			s.log.WarnContext(ctx, "payment event for unknown order", "event", ev.ID, "order", ev.OrderID)
			return nil
		} else if err != nil {
			return err
		}
		eventID = o.EventID
		if o.EventID != ev.EventID || o.Status != db.OrderStatusPending {
			// Never backwards: a failure after a success, or a second success, changes nothing.
			return nil
		}
		switch ev.Type {
		case payment.EventFailed:
			outcome = OutcomeFailed
			return q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: o.ID, Status: db.OrderStatusPending, StatusReason: "payment_failed"})
		case payment.EventSucceeded:
		default:
			return nil
		}
		if ev.AmountCents != int64(o.AmountCents) {
			outcome = OutcomeRefundPending
			return q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: o.ID, Status: db.OrderStatusRefundPending, StatusReason: "amount_mismatch"})
		}
		var reason string
		sold, reason, err = s.sell(ctx, tx, q, o)
		if err != nil {
			return err
		}
		if reason != "" {
			outcome = OutcomeRefundPending
			return q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: o.ID, Status: db.OrderStatusRefundPending, StatusReason: reason})
		}
		outcome = OutcomeConfirmed
		return q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: o.ID, Status: db.OrderStatusConfirmed})
	})
	if err != nil {
		return "", err
	}
	s.announce(ctx, eventID, sold)
	return outcome, nil
}

// sell sells the order's seats and places and issues its tickets, inside a savepoint:
// on any shortfall everything it did is undone and reason says why.
func (s *Service) sell(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order) (sold []int64, reason string, err error) {
	h, err := q.HoldLock(ctx, db.HoldLockParams{EventID: o.EventID, ID: o.HoldID})
	if err != nil {
		return nil, "", err
	}
	if err := q.BuyerLock(ctx, db.BuyerLockParams{Buyer: o.Buyer, EventID: o.EventID}); err != nil {
		return nil, "", err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, "", err
	}
	defer sp.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	spq := q.WithTx(sp)

	if !h.Live || h.ReleasedAt != nil {
		// The hold no longer counts towards the buyer's limit: selling it again must
		// not take the buyer past it.
		others, err := spq.BuyerPlaces(ctx, db.BuyerPlacesParams{EventID: o.EventID, Buyer: o.Buyer, ExceptHoldID: h.ID})
		if err != nil {
			return nil, "", err
		}
		if int(others)+len(o.SeatIds)+int(o.GaQuantity) > s.cfg.MaxPerBuyer {
			return nil, "buyer_limit", nil
		}
	}
	if len(o.SeatIds) > 0 {
		sold, err = spq.SeatSell(ctx, db.SeatSellParams{EventID: o.EventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID})
		if err != nil {
			return nil, "", err
		}
		if len(sold) != len(o.SeatIds) {
			return nil, "seats_unavailable", nil
		}
		if _, err := spq.TicketsIssueForSeats(ctx, db.TicketsIssueForSeatsParams{EventID: o.EventID, OrderID: o.ID}); err != nil {
			return nil, "", err
		}
	}
	if o.GaQuantity > 0 && o.GaTierID != nil {
		if h.ReleasedAt != nil {
			// The tidy-up gave the places back after the hold lapsed: take them again.
			tier, err := spq.GATierGet(ctx, db.GATierGetParams{EventID: o.EventID, ID: *o.GaTierID})
			if err != nil {
				return nil, "", err
			}
			err = s.takeGA(ctx, spq, o.EventID, h.ID, tier.ID, int(tier.Stripes), int(o.GaQuantity))
			if errors.Is(err, ErrSoldOut) {
				return nil, "sold_out", nil
			} else if err != nil {
				return nil, "", err
			}
		}
		if _, err := spq.TicketsIssueForGA(ctx, db.TicketsIssueForGAParams{
			EventID: o.EventID, OrderID: o.ID, GaTierID: *o.GaTierID, Quantity: o.GaQuantity,
		}); err != nil {
			return nil, "", err
		}
	}
	if _, err := spq.HoldMarkSold(ctx, db.HoldMarkSoldParams{EventID: o.EventID, ID: h.ID}); err != nil {
		return nil, "", err
	}
	return sold, "", sp.Commit(ctx)
}
