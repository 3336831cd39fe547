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

// Services are booking's parts, over one store.
type Services struct {
	Buyer  *Buyer
	Desk   *Desk
	Maps   *Maps
	Worker *Worker

	store *store
}

// New returns the parts over one store. notify and provider may be nil: changes then
// go unannounced, and Pay refuses anything but free orders.
func New(pool *pgxpool.Pool, cfg Config, notify Notifier, provider Provider, log *slog.Logger) *Services {
	st := newStore(pool, cfg, notify, provider, log)
	return &Services{Buyer: &Buyer{st}, Desk: &Desk{st}, Maps: &Maps{st}, Worker: &Worker{st}, store: st}
}

// SetCounters attaches the counters, once, while the program is built.
func (s *Services) SetCounters(c Counters) { s.store.counters = c }

// SetJobs attaches the job queue. It is set once, while the program is built, before
// any request: the queue's workers need the Worker, and booking the queue.
func (s *Services) SetJobs(j Jobs) { s.store.jobs = j }

// Config returns the rules the service runs with.
func (s *Buyer) Config() Config { return s.cfg }
