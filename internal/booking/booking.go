// Package booking sells seats and general-admission places without ever selling one
// twice. It owns the transactions: every hold, release, checkout and confirm is a short
// transaction of conditional statements whose affected rows are the verdict, and it
// translates database failures into the errors of errors.go. Redis is told about
// changes only after they commit.
//
// It is cut by who calls it, over one shared store (services.go): Buyer, the buyer's
// flow; Desk, the box office's staff; Maps, the seat maps; Worker, the job queue's
// workers and the tidy-up. New builds all four.
//
// It owns the sale's rules and the statements that apply them (through the generated
// queries of internal/db), and knows nothing of HTTP or pages: it never imports web,
// views, Echo or the composition root (internal/app). Its callers (web, jobs, checkin,
// the payment adapters) depend on it, never the other way round.
package booking

import (
	"context"
	"time"
)

// Config tunes the rules of a sale.
type Config struct {
	// HoldTTL is how long a hold keeps its seats. The database clock decides when it
	// has passed.
	HoldTTL time.Duration
	// MaxPerBuyer caps the seats and GA places one buyer may hold or own per event.
	MaxPerBuyer int
	// MaxHeldPerClient caps the seats and GA places held at once on an event from one
	// client network (HoldRequest.Client), whatever the number of buyers there; 0: no
	// cap, and no network recorded.
	MaxHeldPerClient int
	// MapMaxAge is how stale a served seat map may be when the live feed does not keep
	// it current (nobody in this process watches its event).
	MapMaxAge time.Duration
	// ReconcileAfter is how long a payment (or refund) may go without word from the
	// provider before reconciliation looks it up: long enough that its webhook has
	// normally come, so lookups are the exception, and well above a charge's own
	// time limit (chargeTimeout), since a lookup that finds nothing frees the claim.
	ReconcileAfter time.Duration
	// ReconcileBatch bounds the payments (and refunds) one reconciliation pass looks
	// up; the next pass takes the rest.
	ReconcileBatch int
	// IdempotencyTTL is how long the API keeps the answer of a request sent with an
	// Idempotency-Key.
	IdempotencyTTL time.Duration
	// RefundKeyWindow is how long a refund's idempotency key is trusted to make a
	// retry safe: a refund asked for again later than this after its key's first use
	// is looked up at the provider first (refund.go). It must stay inside the
	// provider's own window (Stripe keeps keys 24 hours); zero looks up before every
	// retry.
	RefundKeyWindow time.Duration
}

// DefaultConfig is the sale as buyers expect it: ten minutes to pay, ten seats each;
// payments looked up after three minutes without a webhook; answers to idempotent
// requests kept for a day, as Stripe keeps them; a refund retried an hour or more
// after it was first asked for is looked up first.
func DefaultConfig() Config {
	return Config{
		HoldTTL: 10 * time.Minute, MaxPerBuyer: 10, MapMaxAge: time.Second,
		ReconcileAfter: 3 * time.Minute, ReconcileBatch: 200, IdempotencyTTL: 24 * time.Hour,
		RefundKeyWindow: time.Hour,
	}
}

// Notifier hears about seats whose state changed, after the change committed. It is a
// hint for live seat maps, never a record: it may drop messages. No seat ids means that
// general-admission places changed (they have no ids to name).
type Notifier interface {
	SeatsChanged(ctx context.Context, eventID int64, seatIDs []int64)
}
