package booking

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/groupcommit"
)

// Booking is cut by who calls it, over one store (store.go) that every part shares:
// the pool, the rules, the publisher, the provider, the job queue, the counters and
// the caches. A part holds no state of its own, so that a hold the buyer makes, a
// sale at the window and the seat map all read and decide over the same rows. The
// store has no exported method: one would be every part's (TestStoreExportsNothing).

// Buyer is the buyer's flow, for web's buyer pages and JSON API: the events and their
// pages' reads, holds (Hold, Release, GetHold, BuyerHolds), checkout, payment and the
// provider's webhooks, orders as their buyer sees them or their access link opens
// them, the list of an address's orders, and the API's Idempotency-Key answers.
type Buyer struct{ *store }

// Desk is the box office's staff, for web's admin pages: the events they choose from,
// sales at the window, staff holds, refunds, the orders' search, detail and export,
// resent confirmations, revoked access links, and the control room's figures and
// queue settings.
type Desk struct{ *store }

// Maps is the seat maps, for the pages, the live hub and the waiting room: the cache
// the live feed keeps current, the stock it counts, and how best available used it.
type Maps struct{ *store }

// Worker is what runs without a request, for the job queue's workers and the
// program's background loop: refunds, reconciliation, the emails' receipts and the
// tidy-up of lapsed holds. The money's jobs are not the Desk's: no one at the window
// asks for them, and a refund the desk orders is run by them like any other.
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

// SetReads attaches the chooser of the pool for reads that may be a second stale
// (the public event list and pages, unwatched seat maps, the control room's counts):
// a streaming replica while its lag allows, else the primary. Unset, they read the
// primary. Whatever decides (holds, checkouts, confirmations, the map patches the
// live feed stamps with a version) always reads the primary. conn runs such a read
// (replica.Reads.Stale, which chooses at each read and runs it again on the primary
// when the replica went away).
func (s *Services) SetReads(conn db.DBTX) { s.store.reads = func() db.DBTX { return conn } }

// SetWrites attaches the pool the API's Idempotency-Keys are written on, once, while
// the program is built: a connection of their own, apart from the sale's pool and
// its gate (idempotency.go says why). Unset, they are written on the store's pool.
func (s *Services) SetWrites(pool *pgxpool.Pool) { s.store.idem.q = db.New(pool) }

// KeyWrites are the counts of the Idempotency-Keys' claims and answers written in
// batches (idempotency.go), for the metrics.
func (s *Services) KeyWrites() (claims, answers groupcommit.Stats) {
	return s.store.idem.claims.Stats(), s.store.idem.saves.Stats()
}

// SetCounters attaches the counters, once, while the program is built.
func (s *Services) SetCounters(c Counters) { s.store.counters = c }

// SetJobs attaches the job queue. It is set once, while the program is built, before
// any request: the queue's workers need the Worker, and booking the queue.
func (s *Services) SetJobs(j Jobs) { s.store.jobs = j }

// Config returns the rules of the sale: the pages word the buyer limit from it.
func (s *Buyer) Config() Config { return s.cfg }
