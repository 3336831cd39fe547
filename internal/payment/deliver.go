package payment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Retry policy for deliveries: exponential backoff from firstBackoff up to
// maxBackoff, at most maxAttempts attempts in all (about two and a half minutes).
// Stripe retries for days; the test provider retries long enough to ride out a
// database restart, since a success it gives up on leaves a paid order pending.
const (
	firstBackoff = 200 * time.Millisecond
	maxBackoff   = 30 * time.Second
	maxAttempts  = 12
)

// schedule starts the deliveries of ev in the given mode.
func (p *TestProvider) schedule(ctx context.Context, ev Event, mode Delivery) error {
	body, err := Payload(ev)
	if err != nil {
		return err
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	switch {
	case !mode.delivers():
	case mode == DeliverLate:
		p.goDeliver(ctx, func(ctx context.Context) {
			t := time.NewTimer(p.lateDelay)
			defer t.Stop()
			// Close waits for a late delivery; only its deadline cuts it short.
			select {
			case <-t.C:
				p.deliver(ctx, ev, body)
			case <-ctx.Done():
				p.logOutcome(ctx, slog.LevelWarn, "payment: late webhook cancelled", ev, 0, 0, ctx.Err())
			}
		})
	case mode == DeliverTwice:
		// Both deliveries leave together so that the receiver sees the same
		// event id in two concurrent requests.
		start := make(chan struct{})
		for range 2 {
			p.goDeliver(ctx, func(ctx context.Context) {
				<-start
				p.deliver(ctx, ev, body)
			})
		}
		close(start)
	case mode == DeliverOutOfOrder && ev.Type == EventSucceeded:
		stale := ev
		stale.ID = newID("evt_")
		stale.Type = EventFailed
		// An earlier attempt's failure that arrives late: Created before
		// the success, which is how a receiver can tell it is stale.
		stale.Created = ev.Created.Add(-time.Second)
		staleBody, err := Payload(stale)
		if err != nil {
			return err
		}
		p.goDeliver(ctx, func(ctx context.Context) {
			p.deliver(ctx, ev, body)
			if ctx.Err() == nil {
				p.deliver(ctx, stale, staleBody)
			}
		})
	default:
		p.goDeliver(ctx, func(ctx context.Context) {
			p.deliver(ctx, ev, body)
		})
	}
	return nil
}

// deliver POSTs body, the payload of ev, to the webhook URL, retrying
// connection errors, 408, 429 and 5xx answers with exponential backoff until
// maxAttempts, Close or ctx's end. Every outcome is logged; there is no one
// to return it to.
func (p *TestProvider) deliver(ctx context.Context, ev Event, body []byte) {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		status, err := p.post(ctx, body)
		switch {
		case err == nil && status >= 200 && status < 300:
			p.logOutcome(ctx, slog.LevelDebug, "payment: webhook delivered", ev, attempt, status, nil)
			return
		case ctx.Err() != nil:
			p.logOutcome(ctx, slog.LevelWarn, "payment: webhook cancelled", ev, attempt, status, ctx.Err())
			return
		case err == nil && !retryable(status):
			p.logOutcome(ctx, slog.LevelWarn, "payment: webhook refused, not retrying", ev, attempt, status, nil)
			return
		case attempt == maxAttempts:
			p.logOutcome(ctx, slog.LevelWarn, "payment: webhook failed, giving up", ev, attempt, status, err)
			return
		}
		p.logOutcome(ctx, slog.LevelWarn, "payment: webhook failed, will retry", ev, attempt, status, err)

		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-p.quit:
			t.Stop()
			p.logOutcome(ctx, slog.LevelWarn, "payment: provider closing, retry dropped", ev, attempt, status, err)
			return
		case <-ctx.Done():
			t.Stop()
			p.logOutcome(ctx, slog.LevelWarn, "payment: webhook cancelled", ev, attempt, status, ctx.Err())
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// post makes one delivery attempt, signed at the moment of sending so that a
// retry is not refused as stale. It returns the answer's status code, or an
// error if there was no answer.
func (p *TestProvider) post(ctx context.Context, body []byte) (int, error) {
	url := p.webhookURL()
	if url == "" {
		return 0, errors.New("no webhook URL configured")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(body, p.secret, time.Now()))
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	// Draining lets the connection be reused; the answer's content is not
	// used, and a bound keeps a misbehaving receiver from stalling us.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// retryable reports whether a delivery answered with status is worth another
// attempt: the receiver was overloaded or failed, rather than refused the
// event.
func retryable(status int) bool {
	return status == http.StatusRequestTimeout ||
		status == http.StatusTooManyRequests ||
		status >= 500
}

func (p *TestProvider) logOutcome(ctx context.Context, level slog.Level, msg string, ev Event, attempt, status int, err error) {
	attrs := []slog.Attr{
		slog.String("event_id", ev.ID),
		slog.String("type", ev.Type),
		slog.String("payment_id", ev.PaymentID),
		slog.Int("attempt", attempt),
		slog.Int("status", status),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	p.log.LogAttrs(ctx, level, msg, attrs...)
}
