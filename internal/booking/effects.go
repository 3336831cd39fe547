package booking

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// The contract with the job queue: what booking asks of it, and what its workers call
// back. An implementation may add to it; a signature changes on both sides at once
// (internal/jobs implements Jobs and calls the methods below).

// Jobs enqueues the side effects of a state change in the same transaction as the
// change, so that a committed change always has its effects queued and a rolled-back
// one never does. River implements it in production (internal/jobs); with none set
// (Services.SetJobs) no effects are queued (tests of the seat rules alone).
type Jobs interface {
	// OrderConfirmed queues the order's confirmation email with its tickets.
	OrderConfirmed(ctx context.Context, tx pgx.Tx, orderID int64) error
	// RefundDue queues the refund recorded as refundID: the worker calls
	// Worker.RunRefund, which refunds through the provider exactly once. attempt is
	// the refund's (1, then one more each time the provider failed it and it is made
	// again): one job per refund and attempt.
	RefundDue(ctx context.Context, tx pgx.Tx, refundID int64, attempt int) error
	// OrderRefunded queues the order's refund email.
	OrderRefunded(ctx context.Context, tx pgx.Tx, orderID int64) error
	// PaymentRefunded queues the email about one refund that did not end its order
	// (a second payment of a confirmed order, given back): the order stands, and the
	// buyer is told that the extra charge was returned. One per refund.
	PaymentRefunded(ctx context.Context, tx pgx.Tx, orderID, refundID int64) error
}

// RunRefund refunds the payment behind refundID through the provider, with the refund's
// own idempotency key, and records the provider's refund id; run again, it does
// nothing more. Called by the refund worker.
//
// An error means the refund is still due (the provider could not be reached, or
// refused): the worker retries with backoff, and the same idempotency key.
func (s *Worker) RunRefund(ctx context.Context, refundID int64) error {
	return s.runRefund(ctx, refundID) // refund.go
}

// ReconcileResult counts what one reconciliation pass settled.
type ReconcileResult struct {
	Looked  int // payments looked up at the provider
	Applied int // of them, outcomes applied as if their webhook had come
	Expired int // orders whose hold lapsed with no payment under way, now expired
	Refunds int // refunds run (no job had) or settled by a lookup (no webhook came)
	Keys    int // expired Idempotency-Key answers deleted
}

// Reconcile settles what webhooks did not: pending payments with no webhook after a few
// minutes are looked up at the provider and applied as if the webhook had come, and
// orders whose hold lapsed with no payment under way end expired. Safe on several
// instances at once. Called by a periodic job.
//
// "A few minutes" is Config.ReconcileAfter. It also runs refunds that no job ran
// (older than that; with no Jobs set this is how refunds happen), settles refunds
// whose webhook never came, and deletes expired Idempotency-Key answers. A pass does a
// bounded amount of work; what is left waits for the next.
func (s *Worker) Reconcile(ctx context.Context) (ReconcileResult, error) {
	return s.reconcile(ctx) // reconcile.go
}

// Receipt is what the confirmation and refund emails say about an order.
type Receipt struct {
	Order Order
	Event Event
	// LinkVersion is the version of the order's access links that opens it now: the
	// emails' links carry it (OrderByLink).
	LinkVersion int
	// Charges itemise what the order charged.
	Charges Charges
}

// Receipt returns an order with its event, for the emails: not bound to a session,
// so only the job workers call it.
// Its Order has the seats, places and valid tickets (a confirmed order's), the status
// and reason, and the refunds.
func (s *Worker) Receipt(ctx context.Context, orderID int64) (Receipt, error) {
	o, order, err := s.orderView(ctx, orderID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Receipt{}, ErrOrderNotFound
	} else if err != nil {
		return Receipt{}, translate(err)
	}
	ev, err := s.event(ctx, o.EventID)
	if err != nil {
		return Receipt{}, err
	}
	version, err := s.linkVersion(ctx, o.ID)
	if err != nil {
		return Receipt{}, err
	}
	charges, err := s.charges(ctx, o.EventID, o.ID)
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{Order: order, Event: ev, LinkVersion: version, Charges: charges}, nil
}
