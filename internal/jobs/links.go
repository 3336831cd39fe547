package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"boxoffice/internal/booking"
	"boxoffice/internal/mail"
)

// OrderLinkEmail sends an order's new access link after staff revoked the old ones:
// one job per order and link version.
type OrderLinkEmail struct {
	OrderID int64 `json:"order_id" river:"unique"`
	Version int   `json:"version" river:"unique"`
}

// Kind names the job in river_job.
func (OrderLinkEmail) Kind() string { return "order_link_email" }

// InsertOpts makes the email one job per link for good (see emailOnce).
func (OrderLinkEmail) InsertOpts() river.InsertOpts { return emailOpts() }

// OrderListEmail sends the links of an address's orders, which a buyer asked for on
// the "find my tickets" page. It carries order ids only: addresses stay out of
// river_job. Request is new for each ask.
type OrderListEmail struct {
	OrderIDs []int64 `json:"order_ids"`
	Request  string  `json:"request" river:"unique"`
}

// Kind names the job in river_job.
func (OrderListEmail) Kind() string { return "order_list_email" }

// InsertOpts makes the email one job per ask for good (see emailOnce).
func (OrderListEmail) InsertOpts() river.InsertOpts { return emailOpts() }

var (
	_ booking.LinkSender      = (*Queue)(nil)
	_ booking.OrderListSender = (*Queue)(nil)
)

// OrderLinkResend queues the email with the order's link of version, in tx.
func (q *Queue) OrderLinkResend(ctx context.Context, tx pgx.Tx, orderID int64, version int) error {
	return q.insert(ctx, tx, OrderLinkEmail{OrderID: orderID, Version: version})
}

// OrderLinks queues the email listing the orders' links, in tx.
func (q *Queue) OrderLinks(ctx context.Context, tx pgx.Tx, orderIDs []int64, request string) error {
	return q.insert(ctx, tx, OrderListEmail{OrderIDs: orderIDs, Request: request})
}

// orderLinkWorker sends an order's new link.
type orderLinkWorker struct {
	river.WorkerDefaults[OrderLinkEmail]
	deps
}

// Work sends the link of the version the job names, if it is still the order's: a
// link revoked again meanwhile has a job of its own, and sending this one would give
// the buyer a link that does not work.
func (w *orderLinkWorker) Work(ctx context.Context, job *river.Job[OrderLinkEmail]) error {
	r, err := w.receipt(ctx, job.Args.OrderID)
	if err != nil {
		return err
	}
	if r.LinkVersion != job.Args.Version {
		return river.JobCancel(fmt.Errorf("order %d: link version %d replaced by %d", r.Order.ID, job.Args.Version, r.LinkVersion))
	}
	return sendOnce(ctx, w.deps, job, mail.OrderLink(r, w.site))
}

// orderListWorker sends the links of an address's orders.
type orderListWorker struct {
	river.WorkerDefaults[OrderListEmail]
	deps
}

// Work lists the orders as they stand now, in one email, sent as the verification
// emails are (sendUnclaimed).
func (w *orderListWorker) Work(ctx context.Context, job *river.Job[OrderListEmail]) error {
	var rs []booking.Receipt
	for _, id := range job.Args.OrderIDs {
		r, err := w.booking.Receipt(ctx, id)
		if errors.Is(err, booking.ErrOrderNotFound) {
			continue
		} else if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	msg, err := mail.OrderList(rs, job.Args.Request, w.site)
	if errors.Is(err, mail.ErrNoOrders) {
		return river.JobCancel(err)
	} else if err != nil {
		return err
	}
	return w.sendUnclaimed(ctx, msg)
}
