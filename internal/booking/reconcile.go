package booking

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// reconcile is Reconcile: see effects.go. Each step is safe on several instances at
// once: a lookup's answer is applied through ApplyPayment under an event id made of
// the payment and its state, recorded like a webhook's, so two instances applying the
// same answer act once; refunds carry their idempotency keys; expiry is a conditional
// statement under the order's lock.
func (s *store) reconcile(ctx context.Context) (ReconcileResult, error) {
	var res ReconcileResult
	age := s.cfg.ReconcileAfter.Seconds()
	if s.pay != nil {
		if err := s.reconcilePayments(ctx, age, &res); err != nil {
			return res, err
		}
		if err := s.reconcileRefunds(ctx, age, &res); err != nil {
			return res, err
		}
	}
	if err := s.expireOrders(ctx, &res); err != nil {
		return res, err
	}
	n, err := s.q.IdempotencyKeysExpire(ctx, 1000)
	if err != nil {
		return res, translate(err)
	}
	res.Keys = int(n)
	return res, nil
}

// reconcilePayments looks up the payments with no word from the provider for age
// seconds and applies what the provider says as if its webhook had come.
func (s *store) reconcilePayments(ctx context.Context, age float64, res *ReconcileResult) error {
	pays, err := s.q.PaymentsUnsettled(ctx, db.PaymentsUnsettledParams{
		Provider: s.pay.Name(), AgeSeconds: age, MaxRows: int32(s.cfg.ReconcileBatch),
	})
	if err != nil {
		return translate(err)
	}
	for _, p := range pays {
		// To the back of the line first, whatever follows: the batch is the oldest
		// rows, and one the provider cannot settle must not keep the rest waiting.
		if err := s.q.PaymentTouch(ctx, p.ID); err != nil {
			return translate(err)
		}
		ref := PaymentRef{Key: p.IdempotencyKey}
		if p.ProviderPaymentID != nil {
			ref.PaymentID = *p.ProviderPaymentID
		}
		st, err := s.pay.LookUp(ctx, ref)
		res.Looked++
		if err != nil {
			// The provider could not say: the claim stays, and the next pass asks again.
			s.log.WarnContext(ctx, "payment lookup failed", "payment", p.ID, "order", p.OrderID, "err", err)
			continue
		}
		ev := PaymentEvent{
			ID: "lookup_" + strconv.FormatInt(p.ID, 10) + "_" + string(st.State), PaymentID: st.PaymentID,
			PaymentKey: p.IdempotencyKey, OrderID: p.OrderID, EventID: p.EventID, AmountCents: st.AmountCents,
		}
		switch st.State {
		case PaymentSucceeded:
			ev.Kind = KindPaymentSucceeded
		case PaymentFailed, PaymentNotFound:
			// Nothing was taken: the claim is given up.
			ev.Kind = KindPaymentFailed
		default:
			continue // still processing: asked again in a later pass
		}
		if ev.PaymentID == "" {
			ev.PaymentID = ref.PaymentID
		}
		if _, err := s.applyPayment(ctx, p.Provider, ev); err != nil {
			s.log.WarnContext(ctx, "payment lookup not applied, to be tried again", "payment", p.ID, "order", p.OrderID, "err", err)
			continue
		}
		res.Applied++
	}
	return nil
}

// reconcileRefunds runs the refunds no job has run (lost, or no job queue configured)
// and settles those whose webhook never came by looking each up at the provider, by
// its own id: what the payment has been refunded in all says nothing of one refund
// among several (an earlier one may account for it while this one is still pending).
func (s *store) reconcileRefunds(ctx context.Context, age float64, res *ReconcileResult) error {
	refunds, err := s.q.RefundsStale(ctx, db.RefundsStaleParams{
		Provider: s.pay.Name(), AgeSeconds: age, MaxRows: int32(s.cfg.ReconcileBatch),
	})
	if err != nil {
		return translate(err)
	}
	for _, r := range refunds {
		// To the back of the line first, as for payments.
		if err := s.q.RefundTouch(ctx, r.ID); err != nil {
			return translate(err)
		}
		if r.ProviderPaymentID == nil {
			s.log.WarnContext(ctx, "refund of a payment the provider never named", "refund", r.ID, "order", r.OrderID)
			continue
		}
		if r.State == db.RefundStateDue {
			if err := s.runRefund(ctx, r.ID); err != nil {
				s.log.WarnContext(ctx, "refund failed, to be tried again", "refund", r.ID, "err", err)
				continue
			}
			res.Refunds++
			continue
		}
		ref := RefundRef{PaymentID: *r.ProviderPaymentID, Key: r.IdempotencyKey}
		if r.ProviderRefundID != nil {
			ref.RefundID = *r.ProviderRefundID
		}
		st, err := s.pay.LookUpRefund(ctx, ref)
		res.Looked++
		if err != nil {
			s.log.WarnContext(ctx, "refund lookup failed", "refund", r.ID, "err", err)
			continue
		}
		var kind PaymentEventKind
		switch st.State {
		case RefundSucceeded:
			kind = KindRefundSucceeded
		case RefundFailed:
			kind = KindRefundFailed
		case RefundNotFound:
			// Pending under an id the provider does not know: not a state booking
			// makes. Money may be owed: a person must look.
			s.log.ErrorContext(ctx, "refund pending here, unknown to the provider", "order", r.OrderID, "refund", r.ID, "provider_refund", ref.RefundID)
			continue
		default:
			continue // not through yet: asked again in a later pass
		}
		if st.RefundID == "" {
			st.RefundID = ref.RefundID
		}
		if _, err := s.applyPayment(ctx, r.Provider, PaymentEvent{
			ID: "lookup_refund_" + st.RefundID + "_" + string(st.State), Kind: kind,
			RefundID: st.RefundID, RefundKey: r.IdempotencyKey, PaymentID: *r.ProviderPaymentID,
			OrderID: r.OrderID, EventID: r.EventID, AmountCents: int64(r.AmountCents),
		}); err != nil {
			s.log.WarnContext(ctx, "refund lookup not applied, to be tried again", "refund", r.ID, "err", err)
			continue
		}
		res.Refunds++
	}
	return nil
}

// expireOrders ends the pending orders whose hold lapsed with no payment under way,
// giving back any voucher use each counted.
func (s *store) expireOrders(ctx context.Context, res *ReconcileResult) error {
	ids, err := s.q.OrdersLapsed(ctx, int32(s.cfg.ReconcileBatch))
	if err != nil {
		return translate(err)
	}
	for _, id := range ids {
		expired := false
		err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
			o, err := q.OrderLock(ctx, id)
			if err != nil {
				return err
			}
			n, err := q.OrderExpire(ctx, id)
			if expired = n > 0; err != nil || !expired {
				return err
			}
			return releaseVoucher(ctx, q, o.EventID, id) // nothing was charged: the use goes back
		})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err == nil && expired {
			res.Expired++
		}
	}
	return nil
}
