package booking

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/staff"
)

// Order access links. An order's emails carry a signed link (internal/orderlink)
// naming the order and a version of its links; the link opens the order from any
// device for as long as that version is the order's current one. Booking keeps the
// version and moves it on when staff revoke; signing is the caller's.

// LinkSender is what a job queue does to send an order's new access link, once per
// version, after staff revoked the old ones (internal/jobs implements it).
type LinkSender interface {
	OrderLinkResend(ctx context.Context, tx pgx.Tx, orderID int64, version int) error
}

// OrderListSender is what a job queue does to send a buyer the links of their orders,
// all in one email; request makes each ask a job of its own (internal/jobs implements
// it).
type OrderListSender interface {
	OrderLinks(ctx context.Context, tx pgx.Tx, orderIDs []int64, request string) error
}

// MaxOrdersListed is the most orders one "find my tickets" email lists, newest first.
const MaxOrdersListed = 20

// OrderLinkVersion is the version an access link to the order must carry to open it.
func (s *Buyer) OrderLinkVersion(ctx context.Context, orderID int64) (int, error) {
	return s.linkVersion(ctx, orderID)
}

// OrderLinkVersion is the version an access link to the order must carry to open it,
// for the order's admin page.
func (s *Desk) OrderLinkVersion(ctx context.Context, orderID int64) (int, error) {
	return s.linkVersion(ctx, orderID)
}

// linkVersion is OrderLinkVersion, for the buyer's pages, the desk and the emails'
// receipt.
func (s *store) linkVersion(ctx context.Context, orderID int64) (int, error) {
	v, err := s.q.OrderLinkVersion(ctx, orderID)
	return int(v), translate(err)
}

// OrderByLink returns the order an access link names, if the link's version is the
// order's current one: a revoked link, like a link to no order, is ErrOrderNotFound.
// It binds nothing to the caller's session.
func (s *Buyer) OrderByLink(ctx context.Context, orderID int64, version int) (Order, error) {
	current, err := s.linkVersion(ctx, orderID)
	if err != nil {
		return Order{}, err
	}
	if version != current {
		return Order{}, ErrOrderNotFound
	}
	_, view, err := s.orderView(ctx, orderID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, ErrOrderNotFound
	} else if err != nil {
		return Order{}, translate(err)
	}
	return view, nil
}

// ErrNoLinkToSend: the order has nothing a link would show a buyer (it was never
// paid), so no new link is sent.
var ErrNoLinkToSend = errors.New("order has no tickets or refund to show")

// RevokeOrderLinks moves the order's links on by one version, so that every link sent
// before stops working, and records who did it in the audit log, in one transaction.
// With resend, the buyer is sent a link of the new version (a paid order's only). It
// returns the new version.
func (s *Desk) RevokeOrderLinks(ctx context.Context, orderID int64, resend bool, by Actor) (int, error) {
	sender, ok := s.jobs.(LinkSender)
	if resend && !ok {
		return 0, ErrNoJobs
	}
	var version int
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		o, err := q.OrderLock(ctx, orderID)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrOrderNotFound
		} else if err != nil {
			return err
		}
		if resend && !listable(o.Status) {
			return ErrNoLinkToSend
		}
		v, err := q.OrderLinkRevoke(ctx, o.ID)
		if err != nil {
			return err
		}
		version = int(v)
		action := "order.link_revoke"
		if resend {
			action = "order.link_resend"
			if err := sender.OrderLinkResend(ctx, tx, o.ID, version); err != nil {
				return err
			}
		}
		return staff.Audit(ctx, tx, by.StaffID, action, OrderSubject(o.ID),
			map[string]any{"link_version": version - 1}, map[string]any{"link_version": version, "email": o.Email}, by.Address)
	})
	return version, err
}

// listable says whether an order of this status is one a buyer may want to open
// again: paid, or refunded (the page says why).
func listable(st db.OrderStatus) bool {
	return st == db.OrderStatusConfirmed || st == db.OrderStatusRefundPending || st == db.OrderStatusRefunded
}

// SendOrderLinks sends the address one email listing the links of its orders (paid
// or refunded, the newest MaxOrdersListed), and nothing when it has none. It says
// nothing of which happened: the caller's answer must be the same for every address.
// The job carries order ids only, never the address.
func (s *Buyer) SendOrderLinks(ctx context.Context, email string) error {
	sender, ok := s.jobs.(OrderListSender)
	if !ok {
		return ErrNoJobs
	}
	email = strings.ToLower(strings.TrimSpace(email))
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		ids, err := q.OrdersOfEmail(ctx, db.OrdersOfEmailParams{Email: email, MaxRows: MaxOrdersListed})
		if err != nil || len(ids) == 0 {
			return err
		}
		return sender.OrderLinks(ctx, tx, ids, rand.Text())
	})
}
