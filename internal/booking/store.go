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

// store is the booking domain's shared state over one PostgreSQL database: the pool
// and its queries, the rules, the publisher, the payment provider, the job queue, the
// counters and the caches.
type store struct {
	pool   *pgxpool.Pool
	q      *db.Queries
	reads  func() db.DBTX // nil: the primary; see Services.SetReads
	cfg    Config
	notify Notifier
	pay    Provider // nil: only free orders can be bought
	jobs   Jobs     // nil: no side effects queued (refunds wait for Reconcile)
	log    *slog.Logger

	maps mapCache // seat maps, kept current by the live feed: mapcache.go

	prices priceConfigs // events' price configurations by version: basketread.go

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

	idem idempotencyWriters // the API's Idempotency-Keys: idempotency.go

	exactQ  chan *exactCall // exact holds waiting to run; see batch.go
	workers atomic.Int32
	batches atomic.Int64 // batches of several holds committed together
}

// stale is the queries for a read that may be a second stale: on the pool the
// chooser hands out now.
func (s *store) stale() *db.Queries {
	if s.reads == nil {
		return s.q
	}
	return db.New(s.reads())
}

// orDefault sets a setting left at zero (or below) to its default.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// newStore returns the shared state, with settings left at zero set to their defaults.
func newStore(pool *pgxpool.Pool, cfg Config, notify Notifier, provider Provider, log *slog.Logger) *store {
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
	s := &store{
		pool: pool, q: db.New(pool), cfg: cfg, notify: notify, pay: provider, log: log,
		maps:   newMapCache(),
		exactQ: make(chan *exactCall, 4096),
	}
	s.initIdempotency()
	return s
}

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
