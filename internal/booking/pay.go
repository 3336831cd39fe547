package booking

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// PaymentMethod is how a buyer pays: the method the provider understands (a card
// number for the test provider) and, for the test provider only, what it should
// simulate (see ChargeRequest.Simulate).
type PaymentMethod struct {
	Method   string
	Simulate string
}

// Pay statuses: what Pay could tell the buyer.
const (
	PayProcessing = "processing" // charged; the provider's webhook confirms the order
	PayUnknown    = "unknown"    // the charge's answer was lost: the payment is being checked
	PayConfirmed  = "confirmed"  // a free order, confirmed without a charge
)

// PayResult is Pay's answer.
type PayResult struct {
	PaymentID string // the provider's id, when known
	Status    string // PayProcessing, PayUnknown or PayConfirmed
}

// Pay charges a pending order through the provider. A charge taken does not confirm
// the order: the provider's webhook does (ApplyPayment), or reconciliation asking the
// provider. A free order is confirmed here, with no charge.
//
// One payment at a time: the claim is a payments row, taken (PaymentClaim) while the
// order is pending, its hold live and the sale open, and kept until the payment's
// outcome is known. A definite decline gives it up at once (the error wraps
// ErrCardDeclined or ErrInvalidCard; the buyer may pay again); an unknown outcome keeps
// it (PayUnknown) until reconciliation has asked the provider, so that no second
// charge starts without knowing the first.

// chargeTimeout bounds one call to the provider's charge; Config.ReconcileAfter (three
// minutes by default) must stay well above it.
const chargeTimeout = 30 * time.Second

func (s *Buyer) Pay(ctx context.Context, orderID int64, buyer string, m PaymentMethod) (PayResult, error) {
	o, p, err := s.claimPayment(ctx, orderID, buyer)
	if errors.Is(err, errFreeOrder) {
		return s.payFree(ctx, o)
	}
	if err != nil {
		return PayResult{}, err
	}
	// A charge must end (or be given up by us) well before reconciliation may look it
	// up: a lookup that finds nothing frees the claim, which is only safe if no charge
	// under that key can still be on its way. Not the caller's deadline alone, then.
	cctx, cancel := context.WithTimeout(ctx, chargeTimeout)
	ch, err := s.pay.Charge(cctx, ChargeRequest{
		Key: p.IdempotencyKey, OrderID: o.ID, EventID: o.EventID, AmountCents: int64(p.AmountCents),
		Method: m.Method, Simulate: m.Simulate,
	})
	cancel()
	// Whatever happened, it is recorded even if the buyer has gone: the claim must
	// end right, and a lost record only delays that until reconciliation.
	rctx := context.WithoutCancel(ctx)
	switch {
	case err == nil:
		if rerr := s.q.PaymentSetProviderID(rctx, db.PaymentSetProviderIDParams{ID: p.ID, ProviderPaymentID: &ch.PaymentID}); rerr != nil {
			// The payment keeps its claim; its webhook, carrying the key, finds it.
			s.log.WarnContext(ctx, "payment id not recorded", "order", o.ID, "payment", ch.PaymentID, "err", rerr)
		}
		return PayResult{PaymentID: ch.PaymentID, Status: PayProcessing}, nil
	case errors.Is(err, ErrCardDeclined), errors.Is(err, ErrInvalidCard), errors.Is(err, ErrNotCharged):
		s.recordFailure(rctx, o.ID, p.ID, ch.PaymentID, err)
		return PayResult{}, err
	}
	s.log.WarnContext(ctx, "charge outcome unknown: the claim is kept until reconciliation", "order", o.ID, "payment", p.ID, "err", err)
	rerr := s.inTx(rctx, func(tx pgx.Tx, q *db.Queries) error {
		if _, err := q.OrderLock(rctx, o.ID); err != nil {
			return err
		}
		if _, err := q.PaymentMarkUnknown(rctx, db.PaymentMarkUnknownParams{ID: p.ID, StateReason: "charge_unanswered"}); err != nil {
			return err
		}
		return q.OrderSetReason(rctx, db.OrderSetReasonParams{ID: o.ID, StatusReason: ReasonPaymentUnknown})
	})
	if rerr != nil {
		s.log.WarnContext(ctx, "unknown charge not recorded", "order", o.ID, "payment", p.ID, "err", rerr)
	}
	return PayResult{Status: PayUnknown}, nil
}

// claimPayment takes the order's payment claim, or says why it cannot. The order is
// read once, locked in the claim's transaction: no read before it, since the pool's
// connections are what an onsale's steps wait for (the pay call's middleware found
// the order's event with OrderEvent, from memory when this process checked it out). Another buyer's order is not found;
// a free order is errFreeOrder, with the order, for payFree.
func (s *store) claimPayment(ctx context.Context, orderID int64, buyer string) (db.Order, db.Payment, error) {
	var o db.Order
	var p db.Payment
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		// One round trip: the order locked, then the claim. The claim's own conditions
		// are the verdict; one made for an order this call then refuses (another
		// buyer's, a free one) is rolled back with the transaction.
		var pl db.Pipeline
		locked := pl.OrderLock(orderID)
		var claim *db.Row[db.Payment]
		if s.pay != nil {
			claim = pl.PaymentClaim(db.PaymentClaimParams{
				OrderID: orderID, Provider: s.pay.Name(), IdempotencyKey: "pay_" + rand.Text(),
			})
		}
		if err := pl.Send(ctx, tx); err != nil {
			return err
		}
		o = locked.Val
		switch {
		case !locked.Found || o.Buyer != buyer:
			return ErrOrderNotFound
		case o.Status != db.OrderStatusPending:
			return ErrOrderNotPending
		case o.AmountCents == 0:
			return errFreeOrder
		case s.pay == nil:
			return ErrNoPayments
		case claim.Found:
			p = claim.Val
			return nil
		}
		// Refused: say why, from what the claim's own transaction sees.
		if werr := saleWindowError(ctx, q, o.EventID); werr != nil {
			return werr
		}
		h, err := q.HoldGet(ctx, db.HoldGetParams{EventID: o.EventID, ID: o.HoldID})
		if err != nil {
			return err
		}
		if !h.Live {
			// Do not take money for seats whose hold has run out: they may be someone
			// else's by now.
			return ErrHoldExpired
		}
		return ErrPaymentInProgress
	})
	return o, p, err
}

// errFreeOrder is claimPayment's word that the order costs nothing: no claim, no
// charge; payFree confirms it.
var errFreeOrder = errors.New("a free order")

// recordFailure gives up the claim of a charge that certainly took nothing.
func (s *store) recordFailure(ctx context.Context, orderID, paymentID int64, providerID string, cause error) {
	var pid *string
	if providerID != "" {
		pid = &providerID
	}
	reason := "declined"
	if !errors.Is(cause, ErrCardDeclined) {
		reason = "refused"
	}
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if _, err := q.OrderLock(ctx, orderID); err != nil {
			return err
		}
		if _, err := q.PaymentFail(ctx, db.PaymentFailParams{ID: paymentID, StateReason: reason, ProviderPaymentID: pid}); err != nil {
			return err
		}
		if reason != "declined" {
			return nil // refused before any charge: the order has nothing new to say
		}
		return q.OrderSetReason(ctx, db.OrderSetReasonParams{ID: orderID, StatusReason: ReasonPaymentFailed})
	})
	if err != nil {
		// The claim stays until reconciliation finds nothing was charged.
		s.log.WarnContext(ctx, "failed charge not recorded", "order", orderID, "payment", paymentID, "err", err)
	}
}

// payFree confirms a free order that was left pending (checked out before free orders
// were confirmed at checkout, or refused by the buyer's limit then).
func (s *store) payFree(ctx context.Context, o db.Order) (PayResult, error) {
	var sold []int64
	confirmed := false
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		sold, confirmed = nil, false
		lo, err := q.OrderLock(ctx, o.ID)
		if err != nil {
			return err
		}
		if lo.Status != db.OrderStatusPending {
			return ErrOrderNotPending
		}
		h, err := q.HoldGet(ctx, db.HoldGetParams{EventID: o.EventID, ID: o.HoldID})
		if err != nil {
			return err
		}
		if !h.Live {
			return ErrHoldExpired
		}
		if werr := saleWindowError(ctx, q, o.EventID); werr != nil {
			return werr
		}
		var reason string
		if sold, reason, err = s.sell(ctx, tx, q, lo, nil, nil); err != nil {
			return err
		}
		if reason == ReasonBuyerLimit {
			held, err := q.BuyerPlaces(ctx, db.BuyerPlacesParams{EventID: o.EventID, Buyer: o.Buyer, ExceptHoldID: o.HoldID})
			if err != nil {
				return err
			}
			return &LimitError{Limit: s.cfg.MaxPerBuyer, Held: int(held)}
		} else if reason != "" {
			return ErrHoldExpired
		}
		confirmed = true
		if s.jobs != nil {
			return s.jobs.OrderConfirmed(ctx, tx, o.ID)
		}
		return nil
	})
	if err != nil {
		return PayResult{}, err
	}
	if confirmed {
		s.announce(ctx, o.EventID, sold)
		s.countConfirmed(o)
	}
	return PayResult{Status: PayConfirmed}, nil
}
