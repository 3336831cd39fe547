package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"boxoffice/internal/booking"
)

// The test provider as booking sees it: booking.Provider.
var _ booking.Provider = (*TestProvider)(nil)

// Name is "test": payments and webhook events of this provider are recorded
// under it.
func (p *TestProvider) Name() string { return "test" }

// Charge charges req.Method, a card number, once per req.Key. The card is
// checked synchronously:
//
//   - 4242 4242 4242 4242 succeeds: Charge answers "processing" and delivers
//     EventSucceeded asynchronously, according to the delivery mode.
//   - 4000 0000 0000 0002 is declined: Charge returns ErrDeclined, together
//     with the result whose PaymentID the failure event carries, and delivers
//     EventFailed asynchronously, as Stripe does.
//   - 4000 0000 0000 0341 is taken and fails afterwards: Charge answers
//     "processing", and the failure arrives by webhook (an asynchronous
//     failure).
//   - anything else returns ErrInvalidCard and delivers nothing.
//
// The delivery mode (req.Simulate, or Config.Default) may lose the answer
// (DeliverTimeout, DeliverLost: ErrTimeout after taking the charge), fail
// without charging (DeliverError: ErrUnavailable) or never send the webhook
// (DeliverNone, DeliverLost). A repeat of a key is answered as the first call
// was, with nothing charged or delivered again. After Close, Charge returns
// ErrClosed for any valid card.
func (p *TestProvider) Charge(ctx context.Context, req booking.ChargeRequest) (booking.ChargeResult, error) {
	if err := ctx.Err(); err != nil {
		return booking.ChargeResult{}, err
	}
	mode := Delivery(req.Simulate)
	if mode == DeliverNormal {
		mode = p.def
	}
	mode, err := ParseDelivery(string(mode))
	if err != nil {
		return booking.ChargeResult{}, fmt.Errorf("%w: %w", booking.ErrNotCharged, err)
	}
	if req.OrderID <= 0 || req.EventID <= 0 || req.AmountCents <= 0 || req.Key == "" {
		// Verify would refuse the resulting event, so fail where the bug is.
		return booking.ChargeResult{}, fmt.Errorf("%w: charge needs a key and positive order id, event id and amount, got %q, %d, %d, %d",
			booking.ErrNotCharged, req.Key, req.OrderID, req.EventID, req.AmountCents)
	}
	// The ledger's lock is held from the key's check to the charge's record, so
	// that two calls with one key charge once.
	p.led.mu.Lock()
	locked := true
	defer func() {
		if locked {
			p.led.mu.Unlock()
		}
	}()
	if c := p.led.byKey[req.Key]; c != nil {
		return answer(*c)
	}
	if mode == DeliverError {
		return booking.ChargeResult{}, ErrUnavailable
	}
	outcome := cardOutcome(req.Method)
	if errors.Is(outcome, ErrInvalidCard) {
		return booking.ChargeResult{}, outcome
	}
	c := &chargeRecord{
		id: newID("pi_"), key: req.Key, orderID: req.OrderID, amount: req.AmountCents,
		state: booking.PaymentSucceeded, declined: errors.Is(outcome, ErrDeclined),
	}
	c.event = Event{
		ID:          newID("evt_"),
		Type:        EventSucceeded,
		PaymentID:   c.id,
		PaymentKey:  req.Key,
		OrderID:     req.OrderID,
		EventID:     req.EventID,
		AmountCents: req.AmountCents,
		// Stripe's timestamps are whole seconds; truncating here keeps
		// the Event equal to what Verify parses back.
		Created: time.Unix(time.Now().Unix(), 0).UTC(),
	}
	if outcome != nil {
		c.state, c.event.Type = booking.PaymentFailed, EventFailed
	}
	if err := p.schedule(ctx, c.event, mode); err != nil {
		return booking.ChargeResult{}, err
	}
	p.led.byKey[c.key], p.led.byID[c.id] = c, c
	p.led.perOrder[c.orderID]++
	res, err := answer(*c)
	p.led.mu.Unlock()
	locked = false
	p.log.LogAttrs(ctx, slog.LevelDebug, "payment: charge",
		slog.String("payment_id", c.id), slog.Int64("order_id", req.OrderID),
		slog.String("state", string(c.state)), slog.String("delivery", string(mode)))
	if hook := p.hook.Load(); hook != nil {
		(*hook)(req)
	}
	if mode.answerLost() {
		return booking.ChargeResult{}, ErrTimeout
	}
	return res, err
}

// answer is Charge's answer for a charge taken.
func answer(c chargeRecord) (booking.ChargeResult, error) {
	res := booking.ChargeResult{PaymentID: c.id, State: booking.PaymentProcessing}
	if c.declined {
		return res, ErrDeclined
	}
	return res, nil
}

// LookUp reports where a charge stands, by its id or its idempotency key. A
// charge the provider never took (an invalid card, DeliverError, or one made
// before a restart) is booking.PaymentNotFound.
func (p *TestProvider) LookUp(ctx context.Context, ref booking.PaymentRef) (booking.PaymentStatus, error) {
	if err := ctx.Err(); err != nil {
		return booking.PaymentStatus{}, err
	}
	c, ok := p.led.find(ref.PaymentID, ref.Key)
	if !ok {
		return booking.PaymentStatus{PaymentID: ref.PaymentID, State: booking.PaymentNotFound}, nil
	}
	return booking.PaymentStatus{PaymentID: c.id, State: c.state, AmountCents: c.amount, RefundedCents: c.refunded}, nil
}

// Resend delivers the event that announced how a charge ended, again (the same
// event id), now: a late webhook on demand, as Stripe's dashboard resends one.
func (p *TestProvider) Resend(ctx context.Context, paymentID string) error {
	c, ok := p.led.find(paymentID, "")
	if !ok {
		return fmt.Errorf("payment: resend of unknown payment %s", paymentID)
	}
	return p.schedule(ctx, c.event, DeliverNormal)
}

// Charges counts the charges taken for a boxoffice order (succeeded or failed;
// not those refused before charging). Tests use it to see that an order was
// never charged twice.
func (p *TestProvider) Charges(orderID int64) int {
	p.led.mu.Lock()
	defer p.led.mu.Unlock()
	return p.led.perOrder[orderID]
}

// Refunded reports how much of a payment has been refunded.
func (p *TestProvider) Refunded(paymentID string) int64 {
	c, _ := p.led.find(paymentID, "")
	return c.refunded
}

// AfterCharge sets a function called after each charge is taken and before
// Charge answers: tests use it to cut the database between a charge and its
// record. nil removes it.
func (p *TestProvider) AfterCharge(fn func(booking.ChargeRequest)) {
	if fn == nil {
		p.hook.Store(nil)
		return
	}
	p.hook.Store(&fn)
}

// Event returns the event that announced how a charge ended (the zero Event for
// an unknown payment), for tests that deliver it themselves.
func (p *TestProvider) Event(paymentID string) Event {
	c, _ := p.led.find(paymentID, "")
	return c.event
}
