package jobs

import (
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The jobs' arguments, one type per kind, stored as JSON in River's river_job table
// (where an operator sees them, with their attempts and errors). Each carries only the
// id its worker starts from: the worker reads everything else fresh, so a job that
// waited through retries acts on the state of now, not of when it was queued.

// OrderConfirmedEmail sends an order's confirmation email with its tickets.
type OrderConfirmedEmail struct {
	OrderID int64 `json:"order_id" river:"unique"`
}

// Kind names the job in river_job.
func (OrderConfirmedEmail) Kind() string { return "order_confirmed_email" }

// InsertOpts makes the email one job per order for good (see emailOnce).
func (OrderConfirmedEmail) InsertOpts() river.InsertOpts {
	return emailOpts()
}

// OrderRefundedEmail sends an order's refund email.
type OrderRefundedEmail struct {
	OrderID int64 `json:"order_id" river:"unique"`
}

// Kind names the job in river_job.
func (OrderRefundedEmail) Kind() string { return "order_refunded_email" }

// InsertOpts makes the email one job per order for good (see emailOnce).
func (OrderRefundedEmail) InsertOpts() river.InsertOpts {
	return emailOpts()
}

// PaymentRefundedEmail tells the buyer that one payment of an order that stands (a
// second payment of a confirmed order, say) was given back.
type PaymentRefundedEmail struct {
	OrderID  int64 `json:"order_id"`
	RefundID int64 `json:"refund_id" river:"unique"`
}

// Kind names the job in river_job.
func (PaymentRefundedEmail) Kind() string { return "payment_refunded_email" }

// InsertOpts makes the email one job per refund for good (see emailOnce).
func (PaymentRefundedEmail) InsertOpts() river.InsertOpts {
	return emailOpts()
}

// RefundDue refunds one recorded refund through the payment provider. A refund the
// provider failed is made again as its next attempt, with a job of its own: the job
// of the attempt before may still be running, or be kept as completed.
type RefundDue struct {
	RefundID int64 `json:"refund_id" river:"unique"`
	Attempt  int   `json:"attempt" river:"unique"`
}

// Kind names the job in river_job.
func (RefundDue) Kind() string { return "refund_due" }

// InsertOpts makes one job per refund and attempt. River's default states leave out
// cancelled and discarded jobs, so a refund whose job gave up (a provider down for
// weeks) can be queued again: money must go back, and RunRefund never pays twice.
func (RefundDue) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Reconcile settles what payment webhooks did not; the periodic job queues it.
type Reconcile struct{}

// Kind names the job in river_job.
func (Reconcile) Kind() string { return "reconcile" }

// InsertOpts: a failed pass is tried twice more soon (1 s, then 16 s later: River's
// backoff), after which the next period's pass takes over.
func (Reconcile) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// QueueEmail is the queue of the email jobs, apart from the money's (refunds,
// reconciliation) in River's default queue, each with its own workers. An onsale
// confirms tens of orders a second and each confirmation mails QR images; in one
// queue the emails would fill every worker for minutes and the money would wait behind
// them (in make onsale: confirmations 136 s from queued to sent at the median,
// reconciliation passes 75–173 s late).
const QueueEmail = "email"

// emailOpts is how every email job is queued: in QueueEmail, once (emailOnce).
func emailOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueEmail, UniqueOpts: emailOnce()}
}

// emailOnce is the uniqueness of an email job: one per kind and order (or refund), in every state
// a job can be in, including completed (the email went out), cancelled (the order
// had nothing to send) and discarded (it gave up). A replayed webhook, a retried
// transaction or a second instance asking again for the same email is skipped at
// insert by River's unique index, for as long as the first job's row is kept
// (completedRetention, a week); booking asks when the order changes status, which it
// does once, or again when a refund that had ended it failed and is then paid.
func emailOnce() river.UniqueOpts {
	return river.UniqueOpts{ByArgs: true, ByState: rivertype.JobStates()}
}
