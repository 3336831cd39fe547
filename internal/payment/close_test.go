package payment

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestCloseWaitsForLateDelivery(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{LateDelay: 100 * time.Millisecond})
	ch, err := charge(t, p, cardOK, DeliverLate)
	if err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	closeProvider(t, p)
	// The receiver reports before it answers, so the event is already here.
	select {
	case d := <-rc.got:
		checkSuccess(t, d, ch)
	default:
		t.Fatalf("got no webhook by the time Close returned, want the late one")
	}
	rc.noMore(t, 1)
}

func TestCloseCancelsLateDelivery(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{LateDelay: time.Hour})
	if _, err := charge(t, p, cardOK, DeliverLate); err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: got %v, want context.DeadlineExceeded", err)
	}
	rc.noMore(t, 0)
}

func TestCloseCancelsInFlightDelivery(t *testing.T) {
	t.Parallel()
	// The receiver holds the request until the provider gives up on it.
	rc := newReceiver(t, func(_ int, r *http.Request) int {
		<-r.Context().Done()
		return http.StatusOK
	})
	p := newProvider(t, rc, Config{})
	if _, err := charge(t, p, cardOK, DeliverNormal); err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	rc.next(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: got %v, want context.DeadlineExceeded", err)
	}
	rc.noMore(t, 1)
}

func TestCloseStopsRetries(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	rc := newReceiver(t, func(_ int, r *http.Request) int {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return http.StatusServiceUnavailable
	})
	p := newProvider(t, rc, Config{})
	if _, err := charge(t, p, cardOK, DeliverNormal); err != nil {
		t.Fatalf("Charge: got %v, want nil", err)
	}
	rc.next(t)

	// Close must have begun before the first attempt fails, so that the
	// retry is the one thing it can prevent.
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		closed <- p.Close(ctx)
	}()
	select {
	case <-p.quit:
	case <-time.After(wait):
		t.Fatalf("Close did not start within %v", wait)
	}
	close(release)

	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
	case <-time.After(wait):
		t.Fatalf("Close did not return within %v", wait)
	}
	rc.noMore(t, 1)
}

func TestChargeAfterClose(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	closeProvider(t, p)
	for _, card := range []string{cardOK, "4000 0000 0000 0002"} {
		if _, err := charge(t, p, card, DeliverNormal); !errors.Is(err, ErrClosed) {
			t.Errorf("Charge(%q) after Close: got %v, want ErrClosed", card, err)
		}
	}
	closeProvider(t, p) // a second Close is harmless
	rc.noMore(t, 0)
}
