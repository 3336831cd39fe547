package payment

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/booking"
)

// wait bounds every wait for something asynchronous; it is a deadline for
// failure, never a pause.
const wait = 5 * time.Second

// delivery is one webhook request as a receiver saw it.
type delivery struct {
	attempt int // the receiver's request count, from 1
	ev      Event
	err     error // from Verify
	header  http.Header
}

// receiver is a webhook endpoint for tests. It verifies every request,
// reports it on got before answering, and answers with respond's status.
type receiver struct {
	srv      *httptest.Server
	got      chan delivery
	attempts atomic.Int64
}

// newReceiver starts a receiver. respond, which may block, chooses the
// status for the n-th request; nil answers 200 to everything.
func newReceiver(t *testing.T, respond func(n int, r *http.Request) int) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan delivery, 64)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(rc.attempts.Add(1))
		body, err := io.ReadAll(r.Body)
		d := delivery{attempt: n, err: err, header: r.Header.Clone()}
		if err == nil {
			d.ev, d.err = Verify(body, r.Header.Get(SignatureHeader), testSecret)
		}
		rc.got <- d
		status := http.StatusOK
		if respond != nil {
			status = respond(n, r)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// next waits for the receiver's next request and fails the test if none
// arrives in time or it does not verify.
func (rc *receiver) next(t *testing.T) delivery {
	t.Helper()
	select {
	case d := <-rc.got:
		if d.err != nil {
			t.Fatalf("request %d: got Verify error %v, want nil", d.attempt, d.err)
		}
		if ct := d.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("request %d: got Content-Type %q, want application/json", d.attempt, ct)
		}
		return d
	case <-time.After(wait):
		t.Fatalf("got no webhook within %v, want one", wait)
		return delivery{}
	}
}

// newProvider returns a provider sending to rc (if not nil) and logging to
// the test's output. It is closed when the test ends, so that no delivery
// outlives the test.
func newProvider(t *testing.T, rc *receiver, cfg Config) *TestProvider {
	t.Helper()
	cfg.Secret = testSecret
	if rc != nil {
		cfg.WebhookURL = rc.srv.URL
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	p := NewTestProvider(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
	})
	return p
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// messages is a slog handler that also reports each message on a channel,
// so that a test can wait for something the provider only logs.
type messages struct {
	slog.Handler
	ch chan string
}

func (m messages) Handle(ctx context.Context, r slog.Record) error {
	select {
	case m.ch <- r.Message:
	default:
	}
	return m.Handler.Handle(ctx, r)
}

// nextWebhookLog waits for the next log message about a delivery attempt
// and returns it.
func nextWebhookLog(t *testing.T, ch <-chan string) string {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case msg := <-ch:
			if strings.HasPrefix(msg, "payment: webhook") {
				return msg
			}
		case <-deadline:
			t.Fatalf("got no delivery log within %v, want one", wait)
			return ""
		}
	}
}

// logTo returns a logger for t that also reports messages on a new channel.
func logTo(t *testing.T) (*slog.Logger, <-chan string) {
	ch := make(chan string, 64)
	return slog.New(messages{Handler: testLogger(t).Handler(), ch: ch}), ch
}

// charge charges card for order 1 of event 2 in mode, under a key of its own.
func charge(t *testing.T, p *TestProvider, card string, mode Delivery) (booking.ChargeResult, error) {
	t.Helper()
	return p.Charge(t.Context(), booking.ChargeRequest{
		Key: "key_" + rand.Text(), OrderID: 1, EventID: 2, AmountCents: 3000, Method: card, Simulate: string(mode),
	})
}

// noMore fails the test if the receiver got requests beyond want. Call it
// after Close, which has waited for every delivery.
func (rc *receiver) noMore(t *testing.T, want int) {
	t.Helper()
	if got := int(rc.attempts.Load()); got != want {
		t.Errorf("got %d webhook requests in all, want %d", got, want)
	}
}

func closeProvider(t *testing.T, p *TestProvider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: got %v, want nil", err)
	}
}
