package payment

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/booking"
)

const cardOK = "4242 4242 4242 4242"

// checkSuccess checks that d carries the success of ch.
func checkSuccess(t *testing.T, d delivery, ch booking.ChargeResult) {
	t.Helper()
	want := Event{ID: d.ev.ID, Type: EventSucceeded, PaymentID: ch.PaymentID, PaymentKey: d.ev.PaymentKey,
		OrderID: 1, EventID: 2, AmountCents: 3000, Created: d.ev.Created}
	if d.ev != want || !strings.HasPrefix(d.ev.PaymentKey, "key_") {
		t.Errorf("got event %+v, want %+v with the charge's key", d.ev, want)
	}
	if !strings.HasPrefix(d.ev.ID, "evt_") || len(d.ev.ID) < len("evt_")+20 {
		t.Errorf("got event id %q, want evt_ and at least 96 random bits", d.ev.ID)
	}
}

func TestChargeNormal(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	ch, err := charge(t, p, cardOK, DeliverNormal)
	if err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	if ch.State != booking.PaymentProcessing || !strings.HasPrefix(ch.PaymentID, "pi_") || len(ch.PaymentID) < len("pi_")+20 {
		t.Errorf("got %+v, want status processing and a random pi_ id", ch)
	}
	checkSuccess(t, rc.next(t), ch)
	closeProvider(t, p)
	rc.noMore(t, 1)
}

func TestChargeIDsAreUnique(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	seen := map[string]bool{}
	for range 2 {
		ch, err := charge(t, p, cardOK, DeliverNormal)
		if err != nil {
			t.Fatalf("Charge: got %v, want nil", err)
		}
		d := rc.next(t)
		for _, id := range []string{ch.PaymentID, d.ev.ID} {
			if seen[id] {
				t.Errorf("got id %s twice, want unique ids", id)
			}
			seen[id] = true
		}
	}
}

func TestChargeLate(t *testing.T) {
	t.Parallel()
	const delay = 100 * time.Millisecond
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{LateDelay: delay})
	start := time.Now()
	ch, err := charge(t, p, cardOK, DeliverLate)
	if err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	checkSuccess(t, rc.next(t), ch)
	// A lower bound only: a timer never fires early, whatever the load.
	if got := time.Since(start); got < delay {
		t.Errorf("got the webhook after %v, want at least %v", got, delay)
	}
	closeProvider(t, p)
	rc.noMore(t, 1)
}

func TestChargeTwice(t *testing.T) {
	for _, viaDefault := range []bool{false, true} {
		t.Run(fmt.Sprintf("default=%v", viaDefault), func(t *testing.T) {
			t.Parallel()
			// Each request waits until both have arrived, which only
			// happens if they are in flight together.
			both := make(chan struct{})
			var arrived, concurrent atomic.Int64
			rc := newReceiver(t, func(n int, r *http.Request) int {
				if arrived.Add(1) == 2 {
					close(both)
				}
				select {
				case <-both:
					concurrent.Add(1)
				case <-time.After(wait):
				case <-r.Context().Done():
				}
				return http.StatusOK
			})
			cfg, mode := Config{}, DeliverTwice
			if viaDefault {
				cfg.Default, mode = DeliverTwice, DeliverNormal
			}
			p := newProvider(t, rc, cfg)
			ch, err := charge(t, p, cardOK, mode)
			if err != nil {
				t.Fatalf("Charge: got %v, want nil", err)
			}
			a, b := rc.next(t), rc.next(t)
			checkSuccess(t, a, ch)
			checkSuccess(t, b, ch)
			if a.ev.ID != b.ev.ID {
				t.Errorf("got event ids %s and %s, want the same id twice", a.ev.ID, b.ev.ID)
			}
			closeProvider(t, p)
			rc.noMore(t, 2)
			if got := concurrent.Load(); got != 2 {
				t.Errorf("got %d requests that overlapped, want 2", got)
			}
		})
	}
}

func TestChargeOutOfOrder(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	ch, err := charge(t, p, cardOK, DeliverOutOfOrder)
	if err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	first := rc.next(t)
	checkSuccess(t, first, ch)
	second := rc.next(t)
	if second.ev.Type != EventFailed {
		t.Errorf("second event: got type %s, want %s", second.ev.Type, EventFailed)
	}
	if second.ev.ID == first.ev.ID {
		t.Errorf("second event: got id %s again, want another id", second.ev.ID)
	}
	if second.ev.PaymentID != ch.PaymentID || second.ev.OrderID != 1 {
		t.Errorf("second event: got payment %s order %d, want %s order 1", second.ev.PaymentID, second.ev.OrderID, ch.PaymentID)
	}
	if !second.ev.Created.Before(first.ev.Created) {
		t.Errorf("second event: got created %v, want before the success's %v", second.ev.Created, first.ev.Created)
	}
	closeProvider(t, p)
	rc.noMore(t, 2)
}

func TestChargeDeclined(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	ch, err := charge(t, p, "4000 0000 0000 0002", DeliverNormal)
	if !errors.Is(err, ErrDeclined) {
		t.Fatalf("Charge: got error %v, want ErrDeclined", err)
	}
	d := rc.next(t)
	want := Event{ID: d.ev.ID, Type: EventFailed, PaymentID: ch.PaymentID, PaymentKey: d.ev.PaymentKey,
		OrderID: 1, EventID: 2, AmountCents: 3000, Created: d.ev.Created}
	if d.ev != want || ch.PaymentID == "" {
		t.Errorf("got event %+v for charge %+v, want %+v", d.ev, ch, want)
	}
	closeProvider(t, p)
	rc.noMore(t, 1)
}

func TestChargeInvalidCard(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	for _, card := range []string{"", "abc", "4242", "4242 4242 4242 4241", "1234567812345670"} {
		for _, mode := range []Delivery{DeliverNormal, DeliverTwice} {
			if _, err := charge(t, p, card, mode); !errors.Is(err, ErrInvalidCard) {
				t.Errorf("Charge(%q, %q): got error %v, want ErrInvalidCard", card, mode, err)
			}
		}
	}
	// Close waits for every delivery, so nothing can arrive afterwards.
	closeProvider(t, p)
	rc.noMore(t, 0)
}

func TestChargeBadRequest(t *testing.T) {
	t.Parallel()
	p := newProvider(t, nil, Config{})
	tests := []booking.ChargeRequest{
		{Key: "k1", OrderID: 0, EventID: 2, AmountCents: 3000, Method: cardOK},
		{Key: "k2", OrderID: 1, EventID: -1, AmountCents: 3000, Method: cardOK},
		{Key: "k3", OrderID: 1, EventID: 2, AmountCents: 0, Method: cardOK},
		{Key: "k4", OrderID: 1, EventID: 2, AmountCents: 3000, Method: cardOK, Simulate: "thrice"},
		{Key: "", OrderID: 1, EventID: 2, AmountCents: 3000, Method: cardOK},
	}
	for _, req := range tests {
		if _, err := p.Charge(t.Context(), req); !errors.Is(err, booking.ErrNotCharged) {
			t.Errorf("Charge(%+v): got %v, want an error wrapping booking.ErrNotCharged", req, err)
		}
	}
}

func TestDeliveryRetries(t *testing.T) {
	t.Parallel()
	const (
		retry = "payment: webhook failed, will retry"
		final = "payment: webhook refused, not retrying"
	)
	tests := []struct {
		status       int
		wantLog      string // what the provider decides after the first answer
		wantAttempts int
	}{
		{http.StatusServiceUnavailable, retry, 2},
		{http.StatusInternalServerError, retry, 2},
		{http.StatusRequestTimeout, retry, 2},
		{http.StatusTooManyRequests, retry, 2},
		{http.StatusBadRequest, final, 1},
		{http.StatusNotFound, final, 1},
		{http.StatusConflict, final, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, func(n int, _ *http.Request) int {
				if n == 1 {
					return tt.status
				}
				return http.StatusOK
			})
			logger, logs := logTo(t)
			p := newProvider(t, rc, Config{Logger: logger})
			ch, err := charge(t, p, cardOK, DeliverNormal)
			if err != nil {
				t.Fatalf("Charge: got %v, want nil", err)
			}
			// Close drops retries, so the test must see the decision first.
			if got := nextWebhookLog(t, logs); got != tt.wantLog {
				t.Errorf("after %d: got log %q, want %q", tt.status, got, tt.wantLog)
			}
			var ds []delivery
			for range tt.wantAttempts {
				d := rc.next(t)
				checkSuccess(t, d, ch)
				ds = append(ds, d)
			}
			if len(ds) == 2 && ds[0].ev.ID != ds[1].ev.ID {
				t.Errorf("got event ids %s and %s, want the retry to resend the same event", ds[0].ev.ID, ds[1].ev.ID)
			}
			closeProvider(t, p)
			rc.noMore(t, tt.wantAttempts)
		})
	}
}

func TestDeliveryRetriesConnectionError(t *testing.T) {
	t.Parallel()
	// A port that was just free: connecting to it is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()

	rc := newReceiver(t, nil)
	logger, logs := logTo(t)
	p := newProvider(t, nil, Config{WebhookURL: dead, Logger: logger})
	ch, err := charge(t, p, cardOK, DeliverNormal)
	if err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	if got, want := nextWebhookLog(t, logs), "payment: webhook failed, will retry"; got != want {
		t.Fatalf("got log %q, want %q", got, want)
	}
	p.SetWebhookURL(rc.srv.URL)
	checkSuccess(t, rc.next(t), ch)
	closeProvider(t, p)
	rc.noMore(t, 1)
}
