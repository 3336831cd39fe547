package booking

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// Refunds. A payment that sold nothing gets one refunds row (UNIQUE payment_id), with
// its own idempotency key, in the transaction that found it sold nothing, and its job
// queued there too (Jobs.RefundDue). runRefund hands it to the provider under that key
// and records the provider's refund id; the refund's webhook (or reconciliation, or a
// provider that answers "succeeded" at once) settles it. Run twice, or on two
// instances at once, it asks the provider twice with the same key, which refunds once.

// runRefund is RunRefund: see effects.go.
func (s *Service) runRefund(ctx context.Context, refundID int64) error {
	r, err := s.q.RefundGet(ctx, refundID)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("refund %d: no such refund", refundID)
	} else if err != nil {
		return translate(err)
	}
	if r.State != db.RefundStateDue {
		return nil // the provider has it already
	}
	if s.pay == nil {
		return ErrNoPayments
	}
	if r.Provider != s.pay.Name() {
		return fmt.Errorf("refund %d: payment of provider %q, this program pays with %q", refundID, r.Provider, s.pay.Name())
	}
	if r.ProviderPaymentID == nil {
		// Only a success, which always names its payment, leads to a refund.
		return fmt.Errorf("refund %d: its payment has no provider id", refundID)
	}
	res, err := s.pay.Refund(ctx, RefundRequest{
		Key: r.IdempotencyKey, PaymentID: *r.ProviderPaymentID, OrderID: r.OrderID, EventID: r.EventID,
		AmountCents: int64(r.AmountCents), Reason: r.Reason,
	})
	if err != nil {
		return fmt.Errorf("refund %d: %w", refundID, err) // the job retries, with the same key
	}
	err = s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if _, err := q.OrderLock(ctx, r.OrderID); err != nil {
			return err
		}
		return q.RefundSetProviderID(ctx, db.RefundSetProviderIDParams{ID: r.ID, ProviderRefundID: &res.RefundID})
	})
	if err != nil {
		return err
	}
	if res.State == RefundSucceeded || res.State == RefundFailed {
		// Settled already: apply it as its webhook would, under an event id of its own,
		// so that the webhook, when it comes, finds it done.
		kind := KindRefundSucceeded
		if res.State == RefundFailed {
			kind = KindRefundFailed
		}
		_, err = s.ApplyPayment(ctx, r.Provider, PaymentEvent{
			ID: "refund_answer_" + res.RefundID, Kind: kind, RefundID: res.RefundID, RefundKey: r.IdempotencyKey,
			PaymentID: *r.ProviderPaymentID, OrderID: r.OrderID, EventID: r.EventID, AmountCents: int64(r.AmountCents),
		})
	}
	return err
}

// refundSettled acts on the provider's word on a refund: done, or failed. When an
// order that sold nothing has no refund left under way, it ends refunded.
func (a *applier) refundSettled(ctx context.Context) (PaymentOutcome, error) {
	r, err := a.q.RefundLockByProviderID(ctx, db.RefundLockByProviderIDParams{Provider: a.provider, ProviderRefundID: &a.ev.RefundID})
	if errors.Is(err, pgx.ErrNoRows) && a.ev.RefundKey != "" {
		// The webhook may come before runRefund recorded the provider's id.
		r, err = a.q.RefundLockByKey(ctx, a.ev.RefundKey)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		a.s.log.WarnContext(ctx, "refund event for an unknown refund", "event", a.ev.ID, "refund", a.ev.RefundID)
		return OutcomeIgnored, nil
	} else if err != nil {
		return "", err
	}
	if r.OrderID != a.o.ID {
		a.s.log.WarnContext(ctx, "refund event names another order than its refund's", "event", a.ev.ID, "refund", r.ID)
		return OutcomeIgnored, nil
	}
	state, outcome := db.RefundStateSucceeded, OutcomeRefunded
	if a.ev.Kind == KindRefundFailed {
		state, outcome = db.RefundStateFailed, OutcomeFailed
	}
	n, err := a.q.RefundSettle(ctx, db.RefundSettleParams{ID: r.ID, State: state, ProviderRefundID: &a.ev.RefundID})
	if err != nil || n == 0 {
		return OutcomeIgnored, err
	}
	if state == db.RefundStateFailed {
		// Money the buyer is owed and did not get back: a person must look.
		a.s.log.ErrorContext(ctx, "refund failed at the provider", "order", a.o.ID, "refund", r.ID, "provider_refund", a.ev.RefundID)
		return outcome, nil
	}
	if err := a.q.PaymentMarkRefunded(ctx, r.PaymentID); err != nil {
		return "", err
	}
	if a.o.Status != db.OrderStatusRefundPending {
		// A payment given back while its order stands (a confirmed order's second
		// payment, say) or is over already: the order's own email does not cover it,
		// so the buyer hears of this refund on its own.
		if a.s.jobs != nil {
			if err := a.s.jobs.PaymentRefunded(ctx, a.tx, a.o.ID, r.ID); err != nil {
				return "", err
			}
		}
		return outcome, nil
	}
	left, err := a.q.RefundsUnsettledCount(ctx, a.o.ID)
	if err != nil || left > 0 {
		return outcome, err
	}
	if err := a.q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: a.o.ID, Status: db.OrderStatusRefunded, StatusReason: a.o.StatusReason}); err != nil {
		return "", err
	}
	if a.s.jobs != nil {
		if err := a.s.jobs.OrderRefunded(ctx, a.tx, a.o.ID); err != nil {
			return "", err
		}
	}
	return outcome, nil
}
