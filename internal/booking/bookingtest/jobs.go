package bookingtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Jobs is a job queue for tests of the money rules, standing in for River until the
// real one (internal/jobs) is wired: it implements booking.Jobs (structurally: this
// package does not import booking, whose own tests import it). Each job is a row
// written in the caller's transaction, so it exists if and only if that transaction
// commits, as River's jobs do; it runs after the commit, when Drain is called or by the
// worker Start runs, with retries. It counts what it queued and ran, for tests that a
// side effect happens exactly once.
type Jobs struct {
	pool *pgxpool.Pool
	w    Workers

	mu     sync.Mutex
	ran    map[jobKey]int // successful runs
	failed []string       // errors of runs, to be retried
}

// Workers are what the jobs call: booking's Worker methods.
type Workers struct {
	Refund func(ctx context.Context, refundID int64) error // booking.Worker.RunRefund
	// OrderConfirmed, OrderRefunded and PaymentRefunded (by refund id) stand for the
	// emails; nil does nothing.
	OrderConfirmed  func(ctx context.Context, orderID int64) error
	OrderRefunded   func(ctx context.Context, orderID int64) error
	PaymentRefunded func(ctx context.Context, refundID int64) error
}

// Job kinds.
const (
	JobOrderConfirmed = "order_confirmed"
	JobRefundDue      = "refund_due"
	JobOrderRefunded  = "order_refunded"
	// JobPaymentRefunded is queued with the refund's id as its argument.
	JobPaymentRefunded = "payment_refunded"
)

type jobKey struct {
	kind string
	arg  int64
}

// maxAttempts bounds the retries of a job that keeps failing; the test then sees it
// among Failures.
const maxAttempts = 50

// NewJobs returns a queue on the test's database; its table is made on first use.
func NewJobs(t testing.TB, pool *pgxpool.Pool, w Workers) *Jobs {
	t.Helper()
	_, err := pool.Exec(context.Background(), `
		CREATE TABLE IF NOT EXISTS bookingtest_jobs (
			id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			kind     text NOT NULL,
			arg      bigint NOT NULL,
			attempts int NOT NULL DEFAULT 0,
			done     boolean NOT NULL DEFAULT false
		)`)
	if err != nil {
		t.Fatalf("bookingtest: jobs table: %v", err)
	}
	return &Jobs{pool: pool, w: w, ran: map[jobKey]int{}}
}

// OrderConfirmed queues the order's confirmation (email).
func (j *Jobs) OrderConfirmed(ctx context.Context, tx pgx.Tx, orderID int64) error {
	return j.insert(ctx, tx, JobOrderConfirmed, orderID)
}

// RefundDue queues the refund (each attempt a job of its own, as River's are).
func (j *Jobs) RefundDue(ctx context.Context, tx pgx.Tx, refundID int64, _ int) error {
	return j.insert(ctx, tx, JobRefundDue, refundID)
}

// OrderRefunded queues the order's refund email.
func (j *Jobs) OrderRefunded(ctx context.Context, tx pgx.Tx, orderID int64) error {
	return j.insert(ctx, tx, JobOrderRefunded, orderID)
}

// PaymentRefunded queues the email about one refund of an order that stands.
func (j *Jobs) PaymentRefunded(ctx context.Context, tx pgx.Tx, _, refundID int64) error {
	return j.insert(ctx, tx, JobPaymentRefunded, refundID)
}

func (j *Jobs) insert(ctx context.Context, tx pgx.Tx, kind string, arg int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO bookingtest_jobs (kind, arg) VALUES ($1, $2)`, kind, arg)
	return err
}

// Drain runs the committed jobs not yet done, one at a time, until none is left
// that can run now; it returns how many ran successfully. Safe alongside Start's
// worker: each job is locked while it runs.
func (j *Jobs) Drain(ctx context.Context) (int, error) {
	n := 0
	for {
		ok, err := j.runOne(ctx)
		if err != nil || !ok {
			return n, err
		}
		n++
	}
}

// Start runs the jobs in the background, as River's workers do, every few
// milliseconds, until the test ends.
func (j *Jobs) Start(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			_, _ = j.Drain(ctx) // failures are retried on the next tick
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// runOne runs one due job. false: none could run.
func (j *Jobs) runOne(ctx context.Context) (bool, error) {
	tx, err := j.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	var id, arg int64
	var kind string
	err = tx.QueryRow(ctx, `
		SELECT id, kind, arg FROM bookingtest_jobs
		WHERE NOT done AND attempts < $1
		ORDER BY attempts, id LIMIT 1 FOR UPDATE SKIP LOCKED`, maxAttempts).Scan(&id, &kind, &arg)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	runErr := j.run(ctx, kind, arg)
	if runErr != nil {
		j.mu.Lock()
		j.failed = append(j.failed, fmt.Sprintf("%s %d: %v", kind, arg, runErr))
		j.mu.Unlock()
		if _, err := tx.Exec(ctx, `UPDATE bookingtest_jobs SET attempts = attempts + 1 WHERE id = $1`, id); err != nil {
			return false, err
		}
		return false, tx.Commit(ctx) // retried later, not in this Drain
	}
	if _, err := tx.Exec(ctx, `UPDATE bookingtest_jobs SET done = true, attempts = attempts + 1 WHERE id = $1`, id); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, err
	}
	j.mu.Lock()
	j.ran[jobKey{kind, arg}]++
	j.mu.Unlock()
	return true, nil
}

func (j *Jobs) run(ctx context.Context, kind string, arg int64) error {
	var fn func(context.Context, int64) error
	switch kind {
	case JobRefundDue:
		fn = j.w.Refund
	case JobOrderConfirmed:
		fn = j.w.OrderConfirmed
	case JobOrderRefunded:
		fn = j.w.OrderRefunded
	case JobPaymentRefunded:
		fn = j.w.PaymentRefunded
	}
	if fn == nil {
		return nil
	}
	return fn(ctx, arg)
}

// Ran counts the successful runs of a job.
func (j *Jobs) Ran(kind string, arg int64) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.ran[jobKey{kind, arg}]
}

// Queued counts the committed jobs of a kind, for one argument or (arg 0) all.
func (j *Jobs) Queued(t testing.TB, kind string, arg int64) int {
	t.Helper()
	var n int
	err := j.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM bookingtest_jobs WHERE kind = $1 AND ($2 = 0 OR arg = $2)`, kind, arg).Scan(&n)
	if err != nil {
		t.Fatalf("bookingtest: queued jobs: %v", err)
	}
	return n
}

// Failures are the errors of job runs so far (each retried until maxAttempts).
func (j *Jobs) Failures() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.failed...)
}
