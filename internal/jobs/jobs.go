// Package jobs is boxoffice's job queue: the side effects that follow a committed
// change (refunds, emails) and the periodic reconciliation of payments, on River
// (riverqueue/river) in our own PostgreSQL.
//
// A side effect is queued in the same transaction as the change that causes it
// (Queue implements booking.Jobs with River's InsertTx on booking's transaction), so a
// committed change always has its effects queued and a rolled-back one never does.
// River then works each job at least once, retrying failures with exponential backoff
// (attempt⁴ seconds, 25 attempts by default), and keeps every job visible in its
// river_job table with its attempts and errors. It is safe on several instances at
// once: a job is locked by one worker (SELECT … FOR UPDATE SKIP LOCKED), periodic jobs
// are queued only by the elected leader, and unique jobs are enforced by a unique
// index, not by a check in Go. The emails are worked in a queue of their own
// (QueueEmail), so that a refund or a reconciliation pass never waits behind an
// onsale's thousands of confirmations.
//
// It imports booking (whose Jobs it implements and whose effects it runs), mail,
// verification and the generated queries (the sent_mail claims), never web.
package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"golang.org/x/time/rate"

	"boxoffice/internal/booking"
	"boxoffice/internal/dbgate"
	"boxoffice/internal/mail"
)

// Booking is what the workers need of booking (*booking.Worker).
type Booking interface {
	RunRefund(ctx context.Context, refundID int64) error
	Reconcile(ctx context.Context) (booking.ReconcileResult, error)
	Receipt(ctx context.Context, orderID int64) (booking.Receipt, error)
}

// Config tunes the queue.
type Config struct {
	// Workers is how many of the money's jobs (refunds, reconciliation) one instance
	// works at once (JOB_WORKERS). Each may hold a database connection, on top of
	// River's own few (one listens for new jobs, the leader runs maintenance).
	Workers int
	// EmailWorkers is how many emails (QueueEmail) one instance sends at once
	// (EMAIL_WORKERS; 0: Workers). An email spends most of its time waiting: for the
	// sale to ease, or for the mail server. After an onsale the confirmations queued
	// during it go out as fast as the workers fetch them: River fetches a queue at
	// most every 100 ms, so 4 workers send about 40 a second (make onsale).
	EmailWorkers int
	// ReconcileInterval is how often reconciliation runs (RECONCILE_INTERVAL); River's
	// periodic jobs are meant for a minute or more.
	ReconcileInterval time.Duration
	// Site words the emails' links and reasons.
	Site mail.Site
	// StopTimeout is how long a stop lets running jobs finish before cancelling them
	// (they are then retried); zero waits for them however long they take.
	StopTimeout time.Duration
	// TestOnly is River's test mode: its maintenance starts at once rather than after
	// a random delay, so that a test sees the periodic job promptly.
	TestOnly bool
	// PollOnly fetches jobs by polling instead of LISTEN/NOTIFY: through a pooler in
	// transaction mode a listening connection is not kept, so notices would be lost.
	PollOnly bool
	// Busy, when set, says whether the sale presses the application now. A
	// confirmation email waits while it does and until it has not for a few seconds
	// (the sale has eased, not just dipped), for up to EmailWait after it was queued:
	// the buyer has the tickets on the order page already, and the email's QR images
	// are the heaviest work the server does besides the sale (see confirmationWorker).
	// A waiting confirmation keeps its worker: the other emails (refunds, resends)
	// queued behind them wait too, for EmailWait at most; the money's jobs, in their
	// own queue, never do.
	Busy func() bool
	// EmailWait is the longest a confirmation waits for the sale to ease (EMAIL_WAIT);
	// zero, it never waits.
	EmailWait time.Duration
	// OnSale, when set, says whether a sale is on, busy or not. While it is, the
	// confirmations start one at a time, SaleRate a second at most (see pace).
	OnSale func() bool
	// SaleRate is the confirmations started a second while OnSale (EMAIL_SALE_RATE);
	// zero, they are not paced.
	SaleRate int
	// PaceClock is the pace's clock (tests); nil: time.Now.
	PaceClock func() time.Time
	// Verifications, when set, reads the link emails of verified buyers' registrations.
	Verifications Verifications
}

// completedRetention is how long River keeps a completed job's row, which is also how
// long a unique email job turns away a second one for the same order: a week, longer
// than payment providers replay webhooks (Stripe: three days).
const completedRetention = 7 * 24 * time.Hour

// Queue is the River client with boxoffice's workers. It implements booking.Jobs.
type Queue struct {
	client *river.Client[pgx.Tx]
	log    *slog.Logger
}

var _ booking.Jobs = (*Queue)(nil)

// New builds the queue on pool, whose database River's migrations have been applied
// to (migrations.Up). It neither connects nor works jobs until Run; it can queue them
// at once.
func New(pool *pgxpool.Pool, b Booking, m *mail.Mailer, cfg Config, log *slog.Logger) (*Queue, error) {
	if cfg.Workers <= 0 {
		return nil, errors.New("jobs: want at least one worker")
	}
	if cfg.ReconcileInterval <= 0 {
		return nil, errors.New("jobs: want a reconcile interval")
	}
	if cfg.Busy == nil {
		cfg.EmailWait = 0
	}
	d := deps{booking: b, mailer: m, site: cfg.Site, pool: pool, log: log, busy: cfg.Busy, emailWait: cfg.EmailWait, lastBusy: new(atomic.Int64),
		verifications: cfg.Verifications}
	if cfg.OnSale != nil && cfg.SaleRate > 0 {
		d.onSale, d.salePace, d.paceClock = cfg.OnSale, rate.NewLimiter(rate.Limit(cfg.SaleRate), 1), cfg.PaceClock
		if d.paceClock == nil {
			d.paceClock = time.Now
		}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &confirmationWorker{deps: d})
	river.AddWorker(workers, &refundEmailWorker{deps: d})
	river.AddWorker(workers, &paymentRefundEmailWorker{deps: d})
	river.AddWorker(workers, &resendWorker{deps: d})
	river.AddWorker(workers, &verificationWorker{deps: d})
	river.AddWorker(workers, &orderLinkWorker{deps: d})
	river.AddWorker(workers, &orderListWorker{deps: d})
	river.AddWorker(workers, &refundWorker{deps: d})
	river.AddWorker(workers, &reconcileWorker{deps: d, every: cfg.ReconcileInterval})

	every := cfg.ReconcileInterval
	reconcile := river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			// One pass per period, even if leadership moves to another instance
			// within it and the new leader queues its own first pass.
			return Reconcile{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		},
		&river.PeriodicJobOpts{ID: "reconcile", RunOnStart: true})

	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: cfg.Workers}, // refunds and reconciliation
			QueueEmail:         {MaxWorkers: cmp.Or(cfg.EmailWorkers, cfg.Workers)},
		},
		Workers:                     workers,
		PeriodicJobs:                []*river.PeriodicJob{reconcile},
		CompletedJobRetentionPeriod: completedRetention,
		Logger:                      log.With("component", "jobs"),
		SoftStopTimeout:             cfg.StopTimeout,
		TestOnly:                    cfg.TestOnly,
		PollOnly:                    cfg.PollOnly,
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return &Queue{client: client, log: log}, nil
}

// OrderConfirmed queues the order's confirmation email, in tx.
func (q *Queue) OrderConfirmed(ctx context.Context, tx pgx.Tx, orderID int64) error {
	return q.insert(ctx, tx, OrderConfirmedEmail{OrderID: orderID})
}

// RefundDue queues the refund recorded as refundID, at attempt, in tx.
func (q *Queue) RefundDue(ctx context.Context, tx pgx.Tx, refundID int64, attempt int) error {
	return q.insert(ctx, tx, RefundDue{RefundID: refundID, Attempt: attempt})
}

// OrderRefunded queues the order's refund email, in tx.
func (q *Queue) OrderRefunded(ctx context.Context, tx pgx.Tx, orderID int64) error {
	return q.insert(ctx, tx, OrderRefundedEmail{OrderID: orderID})
}

// PaymentRefunded queues the email about one refund of an order that stands, in tx.
func (q *Queue) PaymentRefunded(ctx context.Context, tx pgx.Tx, orderID, refundID int64) error {
	return q.insert(ctx, tx, PaymentRefundedEmail{OrderID: orderID, RefundID: refundID})
}

// insert queues args in tx. A job that already exists for the same unique key is
// left as it is and is no error: asking twice for one email is what uniqueness is
// for.
func (q *Queue) insert(ctx context.Context, tx pgx.Tx, args river.JobArgs) error {
	if _, err := q.client.InsertTx(ctx, tx, args, nil); err != nil {
		return fmt.Errorf("queue %s: %w", args.Kind(), err)
	}
	return nil
}

// Run works jobs until ctx ends, then stops: it stops fetching, lets running jobs
// finish for up to Config.StopTimeout, cancels the rest (they run again later), and
// returns once River has stopped. One instance among those running is elected to
// queue the periodic jobs and tidy River's tables.
//
// River's start checks the database first. A start that fails (PostgreSQL restarting
// as the instance starts, or a connection broken under it) is tried again, every
// startRetryMax at the longest, until it succeeds or ctx ends: once, a failed start
// left the instance without refunds, emails or reconciliation until it restarted.
// River's loops ride out the database going away once they run.
func (q *Queue) Run(ctx context.Context) {
	wait := startRetryMin
	for {
		// The jobs (emails, refunds, reconciliation) and River's own upkeep come after
		// the buyers' steps in the queue for a connection.
		err := q.client.Start(dbgate.Later(ctx))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		q.log.Warn("the job queue did not start; trying again", "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, startRetryMax)
	}
	<-q.client.Stopped()
}

// The waits between tries to start River: doubling from startRetryMin.
const (
	startRetryMin = 100 * time.Millisecond
	startRetryMax = 5 * time.Second
)

// Stop stops a running queue, waiting within ctx; it does nothing to a queue that is
// not running. Run's caller normally ends Run's context instead.
func (q *Queue) Stop(ctx context.Context) error {
	return q.client.Stop(ctx)
}

// Client is the River client, for looking at jobs (tests, an admin page).
func (q *Queue) Client() *river.Client[pgx.Tx] { return q.client }

// WaitIdle waits until no side effect is queued or running: every refund and email
// job has completed, been cancelled or given up. Reconciliation, which never ends, is
// not waited for. It is for tests and tools; it asks again every 50 ms.
func (q *Queue) WaitIdle(ctx context.Context) error {
	params := river.NewJobListParams().
		Kinds(OrderConfirmedEmail{}.Kind(), OrderRefundedEmail{}.Kind(), PaymentRefundedEmail{}.Kind(), RefundDue{}.Kind(), OrderConfirmationResend{}.Kind(),
			VerificationEmail{}.Kind(), OrderLinkEmail{}.Kind(), OrderListEmail{}.Kind()).
		States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled).First(1)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := q.client.JobList(ctx, params)
		if err == nil && len(res.Jobs) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				j := res.Jobs[0]
				err = fmt.Errorf("job %d (%s) still %s after %d attempts, errors %v", j.ID, j.Kind, j.State, j.Attempt, j.Errors)
			}
			return fmt.Errorf("jobs: not idle: %w (%w)", err, ctx.Err())
		case <-tick.C:
		}
	}
}
