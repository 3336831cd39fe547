package payment

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"boxoffice/internal/booking"
)

// RefundMode says what the test provider does with the refunds it is asked for from
// now on (SetRefundMode): what a real provider does now and then, for tests of
// boxoffice's handling.
type RefundMode string

// Refund modes.
const (
	// RefundNormal makes the refund, answers "pending" and delivers its success at
	// once.
	RefundNormal RefundMode = ""
	// RefundHeld makes the refund and leaves it pending, with no webhook, until
	// SettleRefund.
	RefundHeld RefundMode = "held"
	// RefundLost makes the refund, which succeeds, but answers ErrTimeout and delivers
	// no webhook: only a lookup finds it.
	RefundLost RefundMode = "lost"
)

// SetRefundMode sets what the refunds asked for from now on do.
func (p *TestProvider) SetRefundMode(m RefundMode) {
	p.led.mu.Lock()
	defer p.led.mu.Unlock()
	p.led.reMode = m
}

// Refund refunds a succeeded charge, once per req.Key while the provider keeps the key
// (until ExpireKeys): a repeat answers as the first call did. In RefundNormal it
// answers "pending" and delivers EventRefundUpdated with status "succeeded" right
// away (whatever the charge's delivery mode); lookups count the refund at once, as
// Stripe's count a pending refund.
func (p *TestProvider) Refund(ctx context.Context, req booking.RefundRequest) (booking.RefundResult, error) {
	if err := ctx.Err(); err != nil {
		return booking.RefundResult{}, err
	}
	if req.Key == "" || req.PaymentID == "" || req.AmountCents <= 0 {
		return booking.RefundResult{}, fmt.Errorf("payment: refund needs a key, a payment and a positive amount, got %q, %q, %d",
			req.Key, req.PaymentID, req.AmountCents)
	}
	p.led.mu.Lock()
	defer p.led.mu.Unlock()
	if r := p.led.refunds[req.Key]; r != nil {
		return booking.RefundResult{RefundID: r.id, State: booking.RefundPending}, nil
	}
	c := p.led.byID[req.PaymentID]
	switch {
	case c == nil:
		return booking.RefundResult{}, fmt.Errorf("payment: refund of unknown payment %s", req.PaymentID)
	case c.state != booking.PaymentSucceeded:
		return booking.RefundResult{}, fmt.Errorf("payment: refund of payment %s, which is %s", req.PaymentID, c.state)
	case req.AmountCents > c.amount-c.refunded:
		return booking.RefundResult{}, fmt.Errorf("payment: refund of %d cents of payment %s, of which %d are left", req.AmountCents, req.PaymentID, c.amount-c.refunded)
	}
	r := &refundRecord{id: newID("re_"), key: req.Key, payment: c.id, orderID: req.OrderID, eventID: req.EventID,
		amount: req.AmountCents, state: booking.RefundSucceeded}
	mode := p.led.reMode
	switch mode {
	case RefundHeld:
		r.state = booking.RefundPending
	case RefundNormal:
		if err := p.schedule(ctx, p.refundEvent(r), DeliverNormal); err != nil {
			return booking.RefundResult{}, err
		}
	}
	p.led.refunds[req.Key], p.led.reByID[r.id] = r, r
	c.refunded += req.AmountCents
	p.log.LogAttrs(ctx, slog.LevelDebug, "payment: refund", slog.String("refund_id", r.id),
		slog.String("payment_id", c.id), slog.Int64("amount", req.AmountCents), slog.String("mode", string(mode)))
	if mode == RefundLost {
		return booking.RefundResult{}, ErrTimeout
	}
	return booking.RefundResult{RefundID: r.id, State: booking.RefundPending}, nil
}

// refundEvent is the refund.updated event announcing where r stands.
func (p *TestProvider) refundEvent(r *refundRecord) Event {
	return Event{
		ID: newID("evt_"), Type: EventRefundUpdated, PaymentID: r.payment, RefundID: r.id, RefundKey: r.key,
		RefundState: string(r.state), OrderID: r.orderID, EventID: r.eventID, AmountCents: r.amount,
		Created: time.Unix(time.Now().Unix(), 0).UTC(),
	}
}

// LookUpRefund reports where a refund stands, by its id or else by its key among its
// payment's refunds; keys forgotten by ExpireKeys are still found, as Stripe lists a
// refund's metadata for good.
func (p *TestProvider) LookUpRefund(ctx context.Context, ref booking.RefundRef) (booking.RefundStatus, error) {
	if err := ctx.Err(); err != nil {
		return booking.RefundStatus{}, err
	}
	p.led.mu.Lock()
	defer p.led.mu.Unlock()
	r := p.led.reByID[ref.RefundID]
	if r == nil && ref.RefundID == "" {
		for _, x := range p.led.reByID {
			if x.payment == ref.PaymentID && x.key == ref.Key {
				r = x
			}
		}
	}
	if r == nil {
		return booking.RefundStatus{RefundID: ref.RefundID, State: booking.RefundNotFound}, nil
	}
	return booking.RefundStatus{RefundID: r.id, State: r.state, AmountCents: r.amount}, nil
}

// SettleRefund moves a refund to state (succeeded or failed) and delivers its
// refund.updated webhook, as the provider does later on its own. A refund may fail
// after it succeeded: its amount is then left to refund again.
func (p *TestProvider) SettleRefund(ctx context.Context, refundID string, state booking.RefundState) error {
	if state != booking.RefundSucceeded && state != booking.RefundFailed {
		return fmt.Errorf("payment: settle refund %s as %q: want succeeded or failed", refundID, state)
	}
	p.led.mu.Lock()
	defer p.led.mu.Unlock()
	r := p.led.reByID[refundID]
	if r == nil {
		return fmt.Errorf("payment: settle of unknown refund %s", refundID)
	}
	if state == booking.RefundFailed && r.state != booking.RefundFailed {
		p.led.byID[r.payment].refunded -= r.amount
	}
	r.state = state
	return p.schedule(ctx, p.refundEvent(r), DeliverNormal)
}

// ExpireKeys forgets the refunds' idempotency keys, as a provider does once its
// window has passed (Stripe: 24 hours): a repeat of a key then makes a second refund.
func (p *TestProvider) ExpireKeys() {
	p.led.mu.Lock()
	defer p.led.mu.Unlock()
	clear(p.led.refunds)
}

// Refunds counts the refunds of a payment that did not fail: tests use it to see
// that a buyer was never paid back twice.
func (p *TestProvider) Refunds(paymentID string) int {
	p.led.mu.Lock()
	defer p.led.mu.Unlock()
	n := 0
	for _, r := range p.led.reByID {
		if r.payment == paymentID && r.state != booking.RefundFailed {
			n++
		}
	}
	return n
}
