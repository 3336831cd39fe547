package booking

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"
	"testing"
)

// fakeProvider is a payment provider for booking's own tests: it takes every charge
// (or does what next says), keeps what it took by key and id as a real one does, and
// sends no webhooks: a test applies the events it wants, built by event and
// refundEvent.
type fakeProvider struct {
	mu        sync.Mutex
	next      []fakeOutcome // outcomes of the next charges, in order; then fakeOK
	byKey     map[string]*fakeCharge
	byID      map[string]*fakeCharge
	refunds   map[string]*fakeRefund // by the key the provider still keeps
	refundsID map[string]*fakeRefund // every refund made, by id
	nextRe    []fakeRefundOutcome    // outcomes of the next refunds, in order; then fakeRefundDone
	charges   int                    // charges taken
	refundsN  int                    // refunds made (not repeats of a key)
	cannotSay map[string]bool        // payment ids whose lookups fail
}

// fakeRefundOutcome is what one refund does.
type fakeRefundOutcome int

const (
	fakeRefundDone    fakeRefundOutcome = iota // made, and succeeded at once
	fakeRefundPending                          // made, pending until the test settles it
	fakeRefundLost                             // made and succeeded, but the answer is lost
)

// fakeRefund is one refund the provider made.
type fakeRefund struct {
	id, key, payment string
	amount           int64
	state            RefundState
}

// fakeOutcome is what one charge does.
type fakeOutcome int

const (
	fakeOK           fakeOutcome = iota // taken; succeeds
	fakeDeclined                        // declined at once: nothing taken
	fakeLostAnswer                      // taken and succeeds, but the answer is lost
	fakeDownNoCharge                    // the provider fails before charging; the caller cannot tell
)

type fakeCharge struct {
	id, key  string
	req      ChargeRequest
	state    PaymentState
	refunded int64
}

// errFakeTimeout is the lost answer: not a definite failure.
var errFakeTimeout = errors.New("fake provider: timeout")

func newFakeProvider(next ...fakeOutcome) *fakeProvider {
	return &fakeProvider{next: next, byKey: map[string]*fakeCharge{}, byID: map[string]*fakeCharge{},
		refunds: map[string]*fakeRefund{}, refundsID: map[string]*fakeRefund{}}
}

func (p *fakeProvider) Name() string { return "test" }

func (p *fakeProvider) Charge(_ context.Context, req ChargeRequest) (ChargeResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.byKey[req.Key]; c != nil {
		return ChargeResult{PaymentID: c.id, State: PaymentProcessing}, nil
	}
	out := fakeOK
	if len(p.next) > 0 {
		out, p.next = p.next[0], p.next[1:]
	}
	switch out {
	case fakeDownNoCharge:
		return ChargeResult{}, errFakeTimeout
	case fakeDeclined:
		return ChargeResult{}, ErrCardDeclined
	}
	c := &fakeCharge{id: "pi_" + rand.Text(), key: req.Key, req: req, state: PaymentSucceeded}
	p.byKey[c.key], p.byID[c.id] = c, c
	p.charges++
	if out == fakeLostAnswer {
		return ChargeResult{}, errFakeTimeout
	}
	return ChargeResult{PaymentID: c.id, State: PaymentProcessing}, nil
}

func (p *fakeProvider) LookUp(_ context.Context, ref PaymentRef) (PaymentStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cannotSay[ref.PaymentID] {
		return PaymentStatus{}, errFakeTimeout
	}
	c := p.byID[ref.PaymentID]
	if c == nil {
		c = p.byKey[ref.Key]
	}
	if c == nil {
		return PaymentStatus{State: PaymentNotFound}, nil
	}
	return PaymentStatus{PaymentID: c.id, State: c.state, AmountCents: c.req.AmountCents, RefundedCents: c.refunded}, nil
}

func (p *fakeProvider) Refund(_ context.Context, req RefundRequest) (RefundResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.refunds[req.Key]; ok {
		return RefundResult{RefundID: r.id, State: RefundPending}, nil
	}
	c := p.byID[req.PaymentID]
	if c == nil {
		// A payment the test made up (paid()): the provider takes the refund anyway.
		c = &fakeCharge{id: req.PaymentID, state: PaymentSucceeded, req: ChargeRequest{AmountCents: req.AmountCents}}
		p.byID[c.id] = c
	}
	out := fakeRefundDone
	if len(p.nextRe) > 0 {
		out, p.nextRe = p.nextRe[0], p.nextRe[1:]
	}
	c.refunded += req.AmountCents
	r := &fakeRefund{id: "re_" + rand.Text(), key: req.Key, payment: c.id, amount: req.AmountCents, state: RefundSucceeded}
	p.refunds[req.Key], p.refundsID[r.id] = r, r
	p.refundsN++
	switch out {
	case fakeRefundPending:
		r.state = RefundPending
	case fakeRefundLost:
		return RefundResult{}, errFakeTimeout
	}
	// Done at once, as card refunds often are: booking settles it without a webhook.
	return RefundResult{RefundID: r.id, State: r.state}, nil
}

func (p *fakeProvider) LookUpRefund(_ context.Context, ref RefundRef) (RefundStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.refundsID[ref.RefundID]
	for _, x := range p.refundsID {
		if r == nil && ref.RefundID == "" && x.payment == ref.PaymentID && x.key == ref.Key {
			r = x
		}
	}
	if r == nil {
		return RefundStatus{RefundID: ref.RefundID, State: RefundNotFound}, nil
	}
	return RefundStatus{RefundID: r.id, State: r.state, AmountCents: r.amount}, nil
}

// refundNext sets what the next refunds do.
func (p *fakeProvider) refundNext(outs ...fakeRefundOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextRe = outs
}

// settleRefund moves a refund to state, as the provider does later on its own (a
// refund may fail after it succeeded), and returns its webhook.
func (p *fakeProvider) settleRefund(t *testing.T, id string, state RefundState, o Order) PaymentEvent {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.refundsID[id]
	if r == nil {
		t.Fatalf("no refund %s", id)
	}
	if state == RefundFailed && r.state != RefundFailed {
		p.byID[r.payment].refunded -= r.amount
	}
	r.state = state
	kind := KindRefundSucceeded
	if state == RefundFailed {
		kind = KindRefundFailed
	}
	return PaymentEvent{ID: "evt_" + rand.Text(), Kind: kind, PaymentID: r.payment, RefundID: r.id, RefundKey: r.key,
		OrderID: o.ID, EventID: o.EventID, AmountCents: r.amount}
}

// forgetKeys forgets the refunds' idempotency keys, as a provider does once its
// window has passed (Stripe: 24 hours): a repeat of a key then makes a new refund.
func (p *fakeProvider) forgetKeys() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.refunds)
}

// refundsOf returns the refunds made of a payment that did not fail, and what they
// add up to: what the buyer is paid back.
func (p *fakeProvider) refundsOf(paymentID string) (n int, cents int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.refundsID {
		if r.payment == paymentID && r.state != RefundFailed {
			n++
			cents += r.amount
		}
	}
	return n, cents
}

// charge returns the charge made for an order (the last one), or fails the test.
func (p *fakeProvider) chargeOf(t *testing.T, orderID int64) *fakeCharge {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var last *fakeCharge
	for _, c := range p.byKey {
		if c.req.OrderID == orderID && (last == nil || c.id > last.id) {
			last = c
		}
	}
	if last == nil {
		t.Fatalf("no charge for order %d", orderID)
	}
	return last
}

// counts returns the charges taken and the refunds made.
func (p *fakeProvider) counts() (charges, refunds int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.charges, p.refundsN
}

// event is the provider's webhook for a charge: its success or failure.
func (c *fakeCharge) event(id string, kind PaymentEventKind) PaymentEvent {
	return PaymentEvent{
		ID: id, Kind: kind, PaymentID: c.id, PaymentKey: c.key,
		OrderID: c.req.OrderID, EventID: c.req.EventID, AmountCents: c.req.AmountCents,
	}
}

// withProvider is f with a service that pays through p.
func (f fixture) withProvider(p Provider) fixture {
	return f.withProviderConfig(p, DefaultConfig())
}

// withProviderConfig is f with a service of cfg that pays through p.
func (f fixture) withProviderConfig(p Provider, cfg Config) fixture {
	f.svc = New(f.pool, cfg, nil, p, slog.New(f.log))
	return f
}
