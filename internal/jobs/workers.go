package jobs

import (
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
	"golang.org/x/time/rate"

	"boxoffice/internal/booking"
	"boxoffice/internal/db"
	"boxoffice/internal/mail"
)

// deps is what the workers share.
type deps struct {
	booking Booking
	mailer  *mail.Mailer
	site    mail.Site
	pool    *pgxpool.Pool
	log     *slog.Logger
	// busy and emailWait: Config.Busy and Config.EmailWait.
	busy      func() bool
	emailWait time.Duration
	// lastBusy is when a waiting confirmation last heard that the sale is busy
	// (UnixNano; 0: never), shared by the workers (easeOff).
	lastBusy *atomic.Int64
	// onSale and salePace: Config.OnSale, and Config.SaleRate's limiter (pace); nil
	// when the confirmations are not paced.
	onSale    func() bool
	salePace  *rate.Limiter
	paceClock func() time.Time
	// verifications reads the link emails of verified buyers (verify.go).
	verifications Verifications
}

// confirmationWorker sends an order's confirmation with its tickets.
type confirmationWorker struct {
	river.WorkerDefaults[OrderConfirmedEmail]
	deps
}

// Work sends the confirmation of a confirmed order, once the sale lets it (easeOff).
// An order that is not confirmed (any more) has no tickets to send: the job is
// cancelled, visibly, not retried.
//
// The confirmations wait for the sale because an onsale confirms tens of orders a
// second and each email draws a QR image per ticket: sent at once, they take a
// quarter of the server's CPU during make onsale's sale, in the minutes when the
// waiting room cuts its rate if the sale's steps slow down.
func (w *confirmationWorker) Work(ctx context.Context, job *river.Job[OrderConfirmedEmail]) error {
	if err := w.easeOff(ctx, job.CreatedAt); err != nil {
		return err
	}
	if err := w.pace(ctx); err != nil {
		return err
	}
	msg, err := w.confirmation(ctx, job.Args.OrderID)
	if err != nil {
		return err
	}
	return sendOnce(ctx, w.deps, job, msg)
}

// Timeout gives a confirmation its wait for the sale (Config.EmailWait) on top of
// River's default minute for the work itself.
func (w *confirmationWorker) Timeout(*river.Job[OrderConfirmedEmail]) time.Duration {
	return w.emailWait + time.Minute
}

// easePoll is how often a waiting email asks whether the sale has eased: the load
// meter's level moves over seconds (latency.Window).
const easePoll = 250 * time.Millisecond

// easeCalm is how long the sale must have been calm (no waiting confirmation told it
// is busy) before the confirmations go: the load meter's window. The meter's level
// dips under the mark now and then in a sale; answering each dip would send every
// waiting worker's email, QR images and all, into the next second of the sale, and the
// emails would still run beside half of it.
const easeCalm = 5 * time.Second

// easeOff waits while the sale is busy or has been within easeCalm, until emailWait
// after queued at the latest. It waits in the worker, holding no connection and
// writing nothing; River's snooze would instead write the job back and fetch it
// again, work for the database at the moment it has least to spare. On a quiet day
// no one has heard "busy" and a confirmation goes at once.
func (d deps) easeOff(ctx context.Context, queued time.Time) error {
	if d.busy == nil || d.emailWait <= 0 {
		return nil
	}
	deadline := queued.Add(d.emailWait)
	for {
		now := time.Now()
		if d.busy() {
			d.lastBusy.Store(now.UnixNano())
		} else if now.Sub(time.Unix(0, d.lastBusy.Load())) >= easeCalm {
			return nil
		}
		wait := min(easePoll, time.Until(deadline))
		if wait <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// pacePoll is how often a confirmation waiting for its turn in a sale asks again.
const pacePoll = 20 * time.Millisecond

// pace lets a confirmation start at once when no sale is on, and otherwise when the
// sale's pace (Config.SaleRate a second, one at a time) gives it its turn. Without it
// the workers fetched by River together draw their QR images together: in make
// onsale, 16 workers at once take both cores and the pool's connections for a few
// milliseconds at a time, and the slowest 1 % of holds wait 28 ms for a connection;
// with the emails at an even 20 a second the hold p99 is 35 ms against 67, for the
// same emails sent during the sale. The turns are asked for every
// pacePoll: a sale that ends lets every waiting confirmation go within it.
func (d deps) pace(ctx context.Context) error {
	if d.salePace == nil {
		return nil
	}
	for d.onSale() && !d.salePace.AllowN(d.paceClock(), 1) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pacePoll):
		}
	}
	return nil
}

// confirmation is the confirmation email of a confirmed order, with its tickets as
// they stand now. An order that is not confirmed (any more) has no tickets to send:
// the job is cancelled, visibly, not retried.
func (d deps) confirmation(ctx context.Context, orderID int64) (mail.Message, error) {
	r, err := d.receipt(ctx, orderID)
	if err != nil {
		return mail.Message{}, err
	}
	if r.Order.Status != booking.StatusConfirmed {
		return mail.Message{}, river.JobCancel(fmt.Errorf("order %d is %s, not confirmed: no tickets to send", r.Order.ID, r.Order.Status))
	}
	return mail.Confirmation(r, d.site)
}

// refundEmailWorker sends an order's refund email.
type refundEmailWorker struct {
	river.WorkerDefaults[OrderRefundedEmail]
	deps
}

// Work sends the refund email, worded for where the order stands now.
func (w *refundEmailWorker) Work(ctx context.Context, job *river.Job[OrderRefundedEmail]) error {
	r, err := w.receipt(ctx, job.Args.OrderID)
	if err != nil {
		return err
	}
	msg, err := mail.Refund(r, w.site)
	if err != nil {
		return err
	}
	return sendOnce(ctx, w.deps, job, msg)
}

// paymentRefundEmailWorker sends the email about one refund of an order that stands.
type paymentRefundEmailWorker struct {
	river.WorkerDefaults[PaymentRefundedEmail]
	deps
}

// Work sends the email about the refund. Booking queues it once the provider has
// confirmed the refund, so the refund is done; one the order does not have will not
// appear by retrying.
func (w *paymentRefundEmailWorker) Work(ctx context.Context, job *river.Job[PaymentRefundedEmail]) error {
	r, err := w.receipt(ctx, job.Args.OrderID)
	if err != nil {
		return err
	}
	msg, err := mail.PaymentRefund(r, job.Args.RefundID, w.site)
	if errors.Is(err, mail.ErrNoSuchRefund) {
		return river.JobCancel(err)
	} else if err != nil {
		return err
	}
	return sendOnce(ctx, w.deps, job, msg)
}

// receipt reads an order for an email; an order that does not exist will not come
// to exist by retrying, so its job is cancelled.
func (d deps) receipt(ctx context.Context, orderID int64) (booking.Receipt, error) {
	r, err := d.booking.Receipt(ctx, orderID)
	if errors.Is(err, booking.ErrOrderNotFound) {
		return r, river.JobCancel(fmt.Errorf("order %d: %w", orderID, err))
	}
	return r, err
}

// sendOnce sends msg at most once per Message-ID, as far as that can be done with a
// mail server that cannot be asked to forget what it accepted, and completes job.
//
// The email is claimed in sent_mail (a statement of its own, committed before
// sending), then sent, then marked sent in the transaction that completes the job,
// rather than returning and letting River's completer record the completion a moment
// later. A job run again after that commit (a retry, a replay, a rescued job) finds
// the email sent and completes without sending. A job run again after a crash between
// the server's acceptance and the commit finds a claim without "sent" and sends again,
// with the same Message-ID: the one duplicate left is recognisably the same message,
// which receiving mail systems and mail programs can (and commonly do) show as one.
//
// A server that refuses the address for good cancels the job: retrying cannot help.
func sendOnce[T river.JobArgs](ctx context.Context, d deps, job *river.Job[T], msg mail.Message) error {
	attempts, err := db.New(d.pool).SentMailClaim(ctx, db.SentMailClaimParams{MessageID: msg.ID, OrderID: msg.OrderID, Kind: job.Kind})
	if errors.Is(err, pgx.ErrNoRows) {
		d.log.InfoContext(ctx, "email sent before, not sent again", "job_id", job.ID, "kind", job.Kind, "message_id", msg.ID)
		return nil
	} else if err != nil {
		return fmt.Errorf("claim email %s: %w", msg.ID, err)
	}
	if attempts > 1 {
		d.log.WarnContext(ctx, "email claimed before without a record of its sending: sending it again, with the same Message-ID",
			"job_id", job.ID, "kind", job.Kind, "message_id", msg.ID, "claims", attempts)
	}
	if err := d.mailer.Send(ctx, msg); errors.Is(err, mail.ErrPermanent) {
		return river.JobCancel(err)
	} else if err != nil {
		return err
	}
	// The job's own context may be over by now (its timeout): the email is out, and
	// recording that must not be cut short with it.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = pgx.BeginFunc(cctx, d.pool, func(tx pgx.Tx) error {
		if err := db.New(tx).SentMailMarkSent(cctx, msg.ID); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](cctx, tx, job)
		return err
	})
	if err != nil {
		// The job could not be completed here (River's completer does it on nil);
		// the email's record matters more, and goes alone.
		err = errors.Join(err, db.New(d.pool).SentMailMarkSent(cctx, msg.ID))
		// Returning an error would have River retry the job and send the email
		// again; returning nil has River's completer record it, with retries of its
		// own.
		d.log.WarnContext(ctx, "email sent, recording it now failed; River completes its job later",
			"job_id", job.ID, "kind", job.Kind, "message_id", msg.ID, "err", err)
	}
	return nil
}

// refundWorker refunds a recorded refund through the payment provider.
type refundWorker struct {
	river.WorkerDefaults[RefundDue]
	deps
}

// Work calls RunRefund, which refunds with the refund's own idempotency key and does
// nothing more when run again: a retry after a lost answer never pays back twice.
func (w *refundWorker) Work(ctx context.Context, job *river.Job[RefundDue]) error {
	return w.booking.RunRefund(ctx, job.Args.RefundID)
}

// reconcileWorker runs one reconciliation pass.
type reconcileWorker struct {
	river.WorkerDefaults[Reconcile]
	deps
	every time.Duration
}

// Work runs one pass and logs what it settled, when it settled anything.
func (w *reconcileWorker) Work(ctx context.Context, job *river.Job[Reconcile]) error {
	res, err := w.booking.Reconcile(ctx)
	if err != nil {
		return err
	}
	if res.Looked > 0 || res.Expired > 0 {
		w.log.InfoContext(ctx, "reconciled payments", "looked_up", res.Looked, "applied", res.Applied, "expired", res.Expired)
	}
	return nil
}

// Timeout lets a pass run for up to one period: the provider may be slow to answer
// many look-ups, and the next pass starts a period later anyway.
func (w *reconcileWorker) Timeout(*river.Job[Reconcile]) time.Duration { return w.every }
