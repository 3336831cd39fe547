package jobs

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"boxoffice/internal/booking"
)

// OrderConfirmationResend sends an order's confirmation again, on a request from the
// box office. Request is new for each request, so the job is unique per request
// (a retried transaction queues it once) and never turned away by the
// once-per-order uniqueness of the first confirmation (OrderConfirmedEmail).
type OrderConfirmationResend struct {
	OrderID int64  `json:"order_id" river:"unique"`
	Request string `json:"request" river:"unique"`
}

// Kind names the job in river_job.
func (OrderConfirmationResend) Kind() string { return "order_confirmation_resend" }

// InsertOpts makes the email one job per request for good (see emailOnce).
func (OrderConfirmationResend) InsertOpts() river.InsertOpts {
	return emailOpts()
}

var _ booking.ConfirmationResender = (*Queue)(nil)

// ResendConfirmation queues the order's confirmation again, in tx, once per request.
func (q *Queue) ResendConfirmation(ctx context.Context, tx pgx.Tx, orderID int64, request string) error {
	return q.insert(ctx, tx, OrderConfirmationResend{OrderID: orderID, Request: request})
}

// resendWorker sends a confirmation again.
type resendWorker struct {
	river.WorkerDefaults[OrderConfirmationResend]
	deps
}

// Work sends the confirmation as it stands now (the tickets still valid), under a
// Message-ID of its own: mail programs would show a copy with the first one's id as
// the same message, and the buyer asked for it again because they do not have it.
func (w *resendWorker) Work(ctx context.Context, job *river.Job[OrderConfirmationResend]) error {
	msg, err := w.confirmation(ctx, job.Args.OrderID)
	if err != nil {
		return err
	}
	msg.ID = "resend-" + job.Args.Request + "." + msg.ID
	return sendOnce(ctx, w.deps, job, msg)
}
