package booking

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Booking is cut by who calls it, over one store (store.go) that every part shares:
// the pool, the rules, the publisher, the provider, the job queue, the counters and
// the caches. A part holds no state of its own, so that a hold the buyer makes, a
// sale at the window and the seat map all read and decide over the same rows.

// Buyer is the buyer's flow: the events and their pages' reads, holds (Hold,
// Release, GetHold, BuyerHolds), checkout, payment and the provider's webhooks,
// orders as their buyer sees them, and the API's Idempotency-Key answers.
type Buyer struct{ *store }

// Desk is the box office's staff: sales at the window, staff holds, refunds, the
// orders' search, detail and export, resent confirmations, and the control room's
// figures and queue settings.
type Desk struct{ *store }

// Maps is the seat maps: the cache the live feed keeps current, what it shows of the
// stock left to the waiting room, and how best available used it.
type Maps struct{ *store }

// Worker is what runs without a request: the job queue's workers (refunds,
// reconciliation, the emails' receipts) and the tidy-up of lapsed holds.
type Worker struct{ *store }

// Service is the booking domain over one store, with every part's methods.
type Service struct {
	*store
	*Buyer
	*Desk
	*Maps
	*Worker
}

// New returns a Service. notify and provider may be nil: changes then go unannounced,
// and Pay refuses anything but free orders.
func New(pool *pgxpool.Pool, cfg Config, notify Notifier, provider Provider, log *slog.Logger) *Service {
	st := newStore(pool, cfg, notify, provider, log)
	return &Service{st, &Buyer{st}, &Desk{st}, &Maps{st}, &Worker{st}}
}

// Config returns the rules the service runs with.
func (s *Buyer) Config() Config { return s.cfg }
