package payment

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Delivery says how the test provider delivers the webhook(s) for one charge.
// The modes other than DeliverNormal reproduce what a real provider does now
// and then, so that boxoffice's webhook handling can be tested against them.
type Delivery string

// Delivery modes.
const (
	// DeliverNormal delivers once, right away.
	DeliverNormal Delivery = ""
	// DeliverLate delivers once, after Config.LateDelay: the buyer returns
	// before the confirmation does.
	DeliverLate Delivery = "late"
	// DeliverTwice delivers the same event (same event id) twice,
	// concurrently, as a provider retrying after a lost answer does.
	DeliverTwice Delivery = "twice"
	// DeliverOutOfOrder, for a success, delivers the success event and then,
	// once that delivery is over, a stale failure event for the same payment
	// with another event id and an earlier Created time. For a decline it
	// behaves like DeliverNormal.
	DeliverOutOfOrder Delivery = "out_of_order"
)

// ParseDelivery parses a delivery mode as written in configuration or a
// request: "", "normal", "late", "twice" or "out_of_order".
func ParseDelivery(s string) (Delivery, error) {
	switch d := Delivery(s); d {
	case "normal":
		return DeliverNormal, nil
	case DeliverNormal, DeliverLate, DeliverTwice, DeliverOutOfOrder:
		return d, nil
	default:
		return "", fmt.Errorf("payment: unknown delivery mode %q (want normal, late, twice or out_of_order)", s)
	}
}

// ErrClosed is returned by Charge once Close has been called: a charge whose
// confirmation could never be delivered must not be accepted.
var ErrClosed = errors.New("payment provider closed")

// Config configures a TestProvider.
type Config struct {
	Secret     string        // webhook signing secret
	WebhookURL string        // where events are POSTed, e.g. http://127.0.0.1:8080/api/v1/payments/webhook
	LateDelay  time.Duration // wait before a DeliverLate delivery; 3s when zero
	Default    Delivery      // the mode used when ChargeRequest.Delivery is ""
	Client     *http.Client  // sends the webhooks; a client with a 10s timeout when nil
	Logger     *slog.Logger  // slog.Default() when nil
}

// ChargeRequest asks the test provider to charge a card for an order.
type ChargeRequest struct {
	OrderID, EventID int64    // boxoffice ids, carried back in the event's metadata
	AmountCents      int64    // the amount, in euro cents; must be positive
	Card             string   // card number; spaces allowed: "4242 4242 4242 4242"
	Delivery         Delivery // "" means Config.Default
}

// Charge is the provider's synchronous answer to a charge.
type Charge struct {
	PaymentID string // "pi_" + random
	Status    string // "processing" for a success: the confirmation arrives by webhook
}

// Statuses of a Charge. A success is only "processing" because, as with
// Stripe, only the webhook confirms it.
const (
	statusProcessing = "processing"
	statusDeclined   = "requires_payment_method"
)

// TestProvider is the built-in payment provider: it accepts Stripe's test
// cards and confirms charges by signed webhooks, as Stripe does.
type TestProvider struct {
	secret    string
	lateDelay time.Duration
	def       Delivery
	client    *http.Client
	log       *slog.Logger
	url       atomic.Pointer[string]

	// mu guards closed so that no delivery is added to wg once Close has
	// started waiting on it.
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup

	quit      chan struct{} // closed by Close: no further retries
	abort     chan struct{} // closed when Close's context ends: cancel deliveries
	abortOnce sync.Once
}

// NewTestProvider returns a test provider configured by cfg, with defaults
// filled in for its zero fields.
func NewTestProvider(cfg Config) *TestProvider {
	p := &TestProvider{
		secret:    cfg.Secret,
		lateDelay: cfg.LateDelay,
		def:       cfg.Default,
		client:    cfg.Client,
		log:       cfg.Logger,
		quit:      make(chan struct{}),
		abort:     make(chan struct{}),
	}
	if p.lateDelay == 0 {
		p.lateDelay = 3 * time.Second
	}
	if p.client == nil {
		p.client = &http.Client{Timeout: 10 * time.Second}
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.SetWebhookURL(cfg.WebhookURL)
	return p
}

// SetWebhookURL changes where events are POSTed, from the next delivery
// attempt on; tests start their server after the provider. It is safe for
// concurrent use.
func (p *TestProvider) SetWebhookURL(u string) {
	p.url.Store(&u)
}

func (p *TestProvider) webhookURL() string {
	return *p.url.Load()
}

// Charge charges req.Card. The card is checked synchronously:
//
//   - 4242 4242 4242 4242 succeeds: Charge returns a "processing" Charge and
//     delivers EventSucceeded asynchronously, according to the delivery mode.
//   - 4000 0000 0000 0002 is declined: Charge returns ErrDeclined, together
//     with the Charge (status "requires_payment_method") whose PaymentID the
//     failure event carries, and delivers EventFailed asynchronously, as
//     Stripe does.
//   - anything else returns ErrInvalidCard and delivers nothing.
//
// After Close, Charge returns ErrClosed for any valid card.
func (p *TestProvider) Charge(ctx context.Context, req ChargeRequest) (Charge, error) {
	if err := ctx.Err(); err != nil {
		return Charge{}, err
	}
	mode := req.Delivery
	if mode == DeliverNormal {
		mode = p.def
	}
	mode, err := ParseDelivery(string(mode))
	if err != nil {
		return Charge{}, err
	}
	if req.OrderID <= 0 || req.EventID <= 0 || req.AmountCents <= 0 {
		// Verify would refuse the resulting event, so fail where the bug is.
		return Charge{}, fmt.Errorf("payment: charge needs positive order id, event id and amount, got %d, %d, %d",
			req.OrderID, req.EventID, req.AmountCents)
	}
	outcome := cardOutcome(req.Card)
	if errors.Is(outcome, ErrInvalidCard) {
		return Charge{}, outcome
	}

	ev := Event{
		ID:          newID("evt_"),
		Type:        EventSucceeded,
		PaymentID:   newID("pi_"),
		OrderID:     req.OrderID,
		EventID:     req.EventID,
		AmountCents: req.AmountCents,
		// Stripe's timestamps are whole seconds; truncating here keeps
		// the Event equal to what Verify parses back.
		Created: time.Unix(time.Now().Unix(), 0).UTC(),
	}
	ch := Charge{PaymentID: ev.PaymentID, Status: statusProcessing}
	if outcome != nil {
		ev.Type = EventFailed
		ch.Status = statusDeclined
	}
	if err := p.schedule(ctx, ev, mode); err != nil {
		return Charge{}, err
	}
	p.log.LogAttrs(ctx, slog.LevelDebug, "payment: charge",
		slog.String("payment_id", ch.PaymentID), slog.Int64("order_id", req.OrderID),
		slog.String("status", ch.Status), slog.String("delivery", string(mode)))
	return ch, outcome
}

// Close stops retries of failed deliveries and waits for the deliveries in
// flight, late ones included. If ctx ends first, it cancels them, waits for
// them to return and reports ctx's error. Charge fails with ErrClosed from
// the moment Close is called.
func (p *TestProvider) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.quit)
	}
	p.mu.Unlock()

	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		p.abortOnce.Do(func() { close(p.abort) })
		<-done
		return ctx.Err()
	}
}

// goDeliver runs fn in a goroutine tracked by wg, with a context that keeps
// parent's values (for log handlers) but not its cancellation, since the
// request that charged ends long before its webhooks are delivered; the
// context is cancelled instead when Close gives up waiting.
//
// The caller must hold p.mu and have checked p.closed.
func (p *TestProvider) goDeliver(parent context.Context, fn func(ctx context.Context)) {
	p.wg.Go(func() {
		ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
		defer cancel()
		go func() {
			select {
			case <-p.abort:
				cancel()
			case <-ctx.Done():
			}
		}()
		fn(ctx)
	})
}

// newID returns prefix followed by 128 random bits in base32.
func newID(prefix string) string {
	return prefix + rand.Text()
}
