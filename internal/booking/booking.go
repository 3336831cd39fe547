// Package booking sells seats and general-admission places without ever selling one
// twice. It owns the transactions: every hold, release, checkout and confirm is a short
// transaction of conditional statements whose affected rows are the verdict, and it
// translates database failures into the errors of errors.go. Redis is told about
// changes only after they commit.
//
// It owns the sale's rules and the statements that apply them (through the generated
// queries of internal/db), and knows nothing of HTTP or pages: it never imports web,
// views, Echo or the composition root (internal/app). Its callers (web, jobs, checkin,
// the payment adapters) depend on it, never the other way round.
package booking

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
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

// store is the booking domain's shared state over one PostgreSQL database: the pool
// and its queries, the rules, the publisher, the payment provider, the job queue, the
// counters and the caches.
type store struct {
	pool   *pgxpool.Pool
	q      *db.Queries
	cfg    Config
	notify Notifier
	pay    Provider // nil: only free orders can be bought
	jobs   Jobs     // nil: no side effects queued (refunds wait for Reconcile)
	log    *slog.Logger

	maps mapCache // seat maps, kept current by the live feed: mapcache.go

	owners orderOwners // each order's event and buyer, for OrderEvent: owners.go

	// counters hear of holds, sales and refunds after commit (counters.go); nil: none.
	counters Counters

	// bestTurns: the best-available searches of one event take turns in this process
	// before they take a database connection (best.go: bestTurn).
	bestTurns sync.Map // event id → chan int, the free turns
	// bestWaiting counts the best-available holds waiting for a turn now.
	bestWaiting atomic.Int64
	// soldOut: the searches that found no seats for a party lately, shared with the
	// holds that waited for a turn meanwhile (best.go); soldOutShared counts those.
	soldOut       soldOutVerdicts
	soldOutShared atomic.Int64
	// bestFromMap counts best-available holds whose seats came from the seat map, and
	// bestMapMisses the choices from it that someone else had taken (bestmap.go).
	bestFromMap, bestMapMisses atomic.Int64

	exactQ  chan *exactCall // exact holds waiting to run; see batch.go
	workers atomic.Int32
	batches atomic.Int64 // batches of several holds committed together
}

// orDefault sets a setting left at zero (or below) to its default.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Service is the booking domain over one store.
type Service struct{ *store }

// New returns a Service. notify and provider may be nil: changes then go unannounced,
// and Pay refuses anything but free orders.
func New(pool *pgxpool.Pool, cfg Config, notify Notifier, provider Provider, log *slog.Logger) *Service {
	def := DefaultConfig()
	orDefault(&cfg.HoldTTL, def.HoldTTL)
	orDefault(&cfg.MaxPerBuyer, def.MaxPerBuyer)
	orDefault(&cfg.MapMaxAge, def.MapMaxAge)
	orDefault(&cfg.ReconcileAfter, def.ReconcileAfter)
	orDefault(&cfg.ReconcileBatch, def.ReconcileBatch)
	orDefault(&cfg.IdempotencyTTL, def.IdempotencyTTL)
	if log == nil {
		log = slog.Default()
	}
	return &Service{&store{
		pool: pool, q: db.New(pool), cfg: cfg, notify: notify, pay: provider, log: log,
		maps:   newMapCache(),
		exactQ: make(chan *exactCall, 4096),
	}}
}

// Config returns the rules the service runs with.
func (s *store) Config() Config { return s.cfg }

// inTx runs fn in a transaction and commits it. A deadlock or serialization failure,
// which the lock order of the queries should rule out, is retried a few times rather
// than shown to a buyer.
func (s *store) inTx(ctx context.Context, fn func(tx pgx.Tx, q *db.Queries) error) error {
	for attempt := 1; ; attempt++ {
		err := s.tryTx(ctx, fn)
		if err == nil || attempt == 3 || !isRetryable(err) {
			return translate(err)
		}
		s.log.WarnContext(ctx, "transaction retried", "attempt", attempt, "err", err)
	}
}

// tryTx runs fn in one transaction, whose begin goes with its first statements
// (db.LazyTx): a round trip fewer for every step of a sale, each of which holds a
// pooled connection for all of its round trips.
func (s *store) tryTx(ctx context.Context, fn func(tx pgx.Tx, q *db.Queries) error) error {
	tx, err := db.Begin(ctx, s.pool)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if err := fn(tx, s.q.WithTx(tx)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func isRetryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

func (s *store) announce(ctx context.Context, eventID int64, seatIDs []int64) {
	if len(seatIDs) > 0 {
		s.noteSeatChanges(eventID, seatIDs)
	}
	if s.notify != nil && len(seatIDs) > 0 {
		s.notify.SeatsChanged(context.WithoutCancel(ctx), eventID, seatIDs)
	}
}

// announceGA tells live maps that the event's general-admission places changed, so
// that the places left on their maps move too.
func (s *store) announceGA(ctx context.Context, eventID int64) {
	if s.notify != nil {
		s.notify.SeatsChanged(context.WithoutCancel(ctx), eventID, nil)
	}
}
