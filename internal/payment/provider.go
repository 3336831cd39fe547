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

	"boxoffice/internal/booking"
)

// Delivery says how the test provider behaves for one charge: how it delivers
// the webhook(s), or how the charge's answer goes wrong. The modes other than
// DeliverNormal reproduce what a real provider does now and then, so that
// boxoffice's handling can be tested against them. A charge asks for one in
// booking.ChargeRequest.Simulate (the API's pay call: "delivery").
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
	// DeliverNone takes the charge and answers as usual, but never delivers its
	// webhook: only a lookup (reconciliation) finds out how it ended. Resend
	// delivers it later, on demand.
	DeliverNone Delivery = "none"
	// DeliverTimeout takes the charge and delivers its webhook as usual, but
	// Charge answers ErrTimeout, as if the answer had been lost: the outcome is
	// unknown to the caller.
	DeliverTimeout Delivery = "timeout"
	// DeliverLost is DeliverTimeout and DeliverNone together: the charge is
	// taken, its answer lost and its webhook never sent.
	DeliverLost Delivery = "lost"
	// DeliverError answers ErrUnavailable (a provider 5xx) without taking the
	// charge: the caller cannot tell, and a lookup finds nothing.
	DeliverError Delivery = "error"
)

// ParseDelivery parses a delivery mode as written in configuration or a
// request: "", "normal", "late", "twice", "out_of_order", "none", "timeout",
// "lost" or "error".
func ParseDelivery(s string) (Delivery, error) {
	switch d := Delivery(s); d {
	case "normal":
		return DeliverNormal, nil
	case DeliverNormal, DeliverLate, DeliverTwice, DeliverOutOfOrder, DeliverNone, DeliverTimeout, DeliverLost, DeliverError:
		return d, nil
	default:
		return "", fmt.Errorf("payment: unknown delivery mode %q (want normal, late, twice, out_of_order, none, timeout, lost or error)", s)
	}
}

// delivers reports whether the mode sends the charge's webhook at all.
func (d Delivery) delivers() bool { return d != DeliverNone && d != DeliverLost && d != DeliverError }

// answerLost reports whether the mode loses Charge's answer.
func (d Delivery) answerLost() bool { return d == DeliverTimeout || d == DeliverLost }

// ErrClosed is returned by Charge (and Refund) once Close has been called: a
// charge whose confirmation could never be delivered must not be accepted. It
// wraps booking.ErrNotCharged: nothing was taken.
var ErrClosed = fmt.Errorf("payment provider closed: %w", booking.ErrNotCharged)

// Charge's answers when the outcome is unknown to the caller (DeliverTimeout,
// DeliverLost, DeliverError). They wrap none of booking's definite failures.
var (
	// ErrTimeout: the charge was taken, but its answer is lost (DeliverTimeout,
	// DeliverLost).
	ErrTimeout = errors.New("payment: the provider did not answer in time")
	// ErrUnavailable: the provider failed before charging (DeliverError), which
	// its caller cannot tell from a failure after charging.
	ErrUnavailable = errors.New("payment: the provider answered 500")
)

// Config configures a TestProvider.
type Config struct {
	Secret     string        // webhook signing secret
	WebhookURL string        // where events are POSTed, e.g. http://127.0.0.1:8080/api/v1/payments/webhook
	LateDelay  time.Duration // wait before a DeliverLate delivery; 3s when zero
	Default    Delivery      // the mode used when ChargeRequest.Delivery is ""
	Client     *http.Client  // sends the webhooks; when nil, a client of its own (webhookClient)
	Logger     *slog.Logger  // slog.Default() when nil
}

// TestProvider is the built-in payment provider: it accepts Stripe's test
// cards and confirms charges and refunds by signed webhooks, as Stripe does. It
// implements booking.Provider. What it charged and refunded it keeps in memory
// only: after a restart, lookups find nothing (as if nothing had been charged),
// which is fine for a provider that moves no money.
type TestProvider struct {
	secret    string
	lateDelay time.Duration
	def       Delivery
	client    *http.Client
	ownClient bool // client is webhookClient's: Close closes its idle connections
	log       *slog.Logger
	url       atomic.Pointer[string]
	led       ledger
	hook      atomic.Pointer[func(booking.ChargeRequest)]

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
		led:       newLedger(),
	}
	if p.lateDelay == 0 {
		p.lateDelay = 3 * time.Second
	}
	if p.client == nil {
		p.client = webhookClient()
		p.ownClient = true
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.SetWebhookURL(cfg.WebhookURL)
	return p
}

// webhookIdleConns is how many idle connections to the webhook's host the provider
// keeps for its next deliveries.
const webhookIdleConns = 64

// webhookClient is the provider's own client: a 10 s timeout, and up to
// webhookIdleConns connections kept open between deliveries. Go's default transport
// keeps 2 a host: at an onsale the provider sends about a hundred webhooks a
// second, many at once, and every delivery beyond the second would open a connection
// of its own, which the receiver then accepts, serves once and closes (a dial and an
// accept of 0.23 s in a 40-s profile of the server during make onsale).
func webhookClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = webhookIdleConns
	tr.MaxIdleConns = webhookIdleConns
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
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
		if p.ownClient {
			p.client.CloseIdleConnections()
		}
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
