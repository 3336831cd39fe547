package booking

import (
	"context"
	"crypto/rand"
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
//
// The provider keeps a key for a while only (Stripe: 24 hours), and the job retries
// for days: a retry later than Config.RefundKeyWindow after the key's first use looks
// the refund up by its key first, and asks again only if none was made under it.
//
// A refund the provider fails, whether booking had it pending or succeeded (a refund
// can fail after it succeeded, and what it marked is then undone), is still owed to
// the buyer: it is made again under a new key, up to maxRefundAttempts refunds in all,
// and after that stays failed for a person to settle. Each failure is logged as an
// error with the order and the refund.

// maxRefundAttempts bounds the refunds made at the provider for one refunds row: a
// payment method that fails a refund tends to fail the next one too, and a person
// then pays the buyer back another way.
const maxRefundAttempts = 3

// errRefundNotDue: the refund moved on while runRefund was at it (another run, or the
// provider's word, came first).
var errRefundNotDue = errors.New("refund not due")

// runRefund is RunRefund: see effects.go.
func (s *store) runRefund(ctx context.Context, refundID int64) error {
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
	res, err := s.askRefund(ctx, r)
	if errors.Is(err, errRefundNotDue) {
		return nil
	} else if err != nil {
		return fmt.Errorf("refund %d: %w", refundID, err) // the job retries, with the same key
	}
	err = s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if _, err := q.OrderLock(ctx, r.OrderID); err != nil {
			return err
		}
		return q.RefundSetProviderID(ctx, db.RefundSetProviderIDParams{
			ID: r.ID, ProviderRefundID: &res.RefundID, IdempotencyKey: r.IdempotencyKey,
		})
	})
	if err != nil || res.State == RefundPending {
		return err
	}
	// Settled already: apply it as its webhook would, under an event id of its own,
	// so that the webhook, when it comes, finds it done.
	kind := KindRefundSucceeded
	if res.State == RefundFailed {
		kind = KindRefundFailed
	}
	// A failure makes the refund again under a new key, with a job of its own.
	_, err = s.applyPayment(ctx, r.Provider, PaymentEvent{
		ID: "refund_answer_" + res.RefundID + "_" + string(res.State), Kind: kind, RefundID: res.RefundID, RefundKey: r.IdempotencyKey,
		PaymentID: *r.ProviderPaymentID, OrderID: r.OrderID, EventID: r.EventID, AmountCents: int64(r.AmountCents),
	})
	return err
}

// askRefund asks the provider for the refund under its key. The key's first use is
// recorded before; a use older than Config.RefundKeyWindow may be forgotten by the
// provider, which would make a second refund of the same key, so the refund is then
// looked up first and asked for only if none was made under the key.
func (s *store) askRefund(ctx context.Context, r db.RefundGetRow) (RefundResult, error) {
	stale, err := s.q.RefundKeyUse(ctx, db.RefundKeyUseParams{ID: r.ID, WindowSeconds: s.cfg.RefundKeyWindow.Seconds()})
	if errors.Is(err, pgx.ErrNoRows) {
		return RefundResult{}, errRefundNotDue
	} else if err != nil {
		return RefundResult{}, translate(err)
	}
	req := RefundRequest{
		Key: r.IdempotencyKey, PaymentID: *r.ProviderPaymentID, OrderID: r.OrderID, EventID: r.EventID,
		AmountCents: int64(r.AmountCents), Reason: r.Reason,
	}
	if stale {
		st, err := s.pay.LookUpRefund(ctx, RefundRef{PaymentID: req.PaymentID, Key: req.Key})
		if err != nil {
			return RefundResult{}, fmt.Errorf("look up before asking again: %w", err)
		}
		if st.State != RefundNotFound {
			s.log.InfoContext(ctx, "refund found at the provider under its key, not asked for again",
				"order", r.OrderID, "refund", r.ID, "provider_refund", st.RefundID, "state", st.State)
			return RefundResult{RefundID: st.RefundID, State: st.State}, nil
		}
	}
	return s.pay.Refund(ctx, req)
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
	if a.ev.Kind == KindRefundFailed {
		return a.refundFailed(ctx, r)
	}
	n, err := a.q.RefundSettle(ctx, db.RefundSettleParams{ID: r.ID, State: db.RefundStateSucceeded, ProviderRefundID: &a.ev.RefundID})
	if err != nil || n == 0 {
		return OutcomeIgnored, err
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
		return OutcomeRefunded, nil
	}
	left, err := a.q.RefundsUnsettledCount(ctx, a.o.ID)
	if err != nil || left > 0 {
		return OutcomeRefunded, err
	}
	if err := a.q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: a.o.ID, Status: db.OrderStatusRefunded, StatusReason: a.o.StatusReason}); err != nil {
		return "", err
	}
	if a.s.jobs != nil {
		if err := a.s.jobs.OrderRefunded(ctx, a.tx, a.o.ID); err != nil {
			return "", err
		}
	}
	return OutcomeRefunded, nil
}

// refundFailed acts on the provider's word that a refund failed, pending or succeeded
// as booking had it: the buyer is still owed the money. The refund is made again under
// a new key, its job queued, or after maxRefundAttempts it stays failed; what its
// success had marked (its payment refunded in full, its order refunded) is undone, so
// that the money's books show it owed until it is paid.
func (a *applier) refundFailed(ctx context.Context, r db.Refund) (PaymentOutcome, error) {
	attrs := []any{"order", a.o.ID, "refund", r.ID, "provider_refund", a.ev.RefundID, "was", r.State, "attempt", r.Attempt}
	if r.State == db.RefundStateFailed {
		return OutcomeIgnored, nil // given up already: a person has it
	}
	if r.Attempt >= maxRefundAttempts {
		if _, err := a.q.RefundGiveUp(ctx, r.ID); err != nil {
			return "", err
		}
		// Money the buyer is owed and did not get back: a person must look.
		a.s.log.ErrorContext(ctx, "refund failed at the provider again, not made again: the buyer must be paid back by hand", attrs...)
	} else {
		if _, err := a.q.RefundReopen(ctx, db.RefundReopenParams{ID: r.ID, IdempotencyKey: "refund_" + rand.Text()}); err != nil {
			return "", err
		}
		if a.s.jobs != nil {
			if err := a.s.jobs.RefundDue(ctx, a.tx, r.ID, int(r.Attempt)+1); err != nil {
				return "", err
			}
		}
		a.s.log.ErrorContext(ctx, "refund failed at the provider, made again under a new key", attrs...)
	}
	if r.State != db.RefundStateSucceeded {
		return OutcomeFailed, nil
	}
	if err := a.q.PaymentUnmarkRefunded(ctx, r.PaymentID); err != nil {
		return "", err
	}
	if a.o.Status == db.OrderStatusRefunded {
		// Ended refunded with this refund counted as paid, which it was not: under
		// way again until it is.
		err := a.q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: a.o.ID, Status: db.OrderStatusRefundPending, StatusReason: a.o.StatusReason})
		if err != nil {
			return "", err
		}
	}
	return OutcomeFailed, nil
}
