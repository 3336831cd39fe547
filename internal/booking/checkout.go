package booking

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// Checkout turns a live hold into a pending order. Checking out the same hold again
// returns the same order. Outside the event's sales window no order is made: a
// *NotOnSaleError or ErrSalesClosed. A free order (amount 0) is confirmed at once, in
// the same transaction: there is nothing to charge.
func (s *Service) Checkout(ctx context.Context, id HoldID, buyer, email string) (Order, error) {
	var o db.Order
	var sold []int64
	confirmed := false // a free order, sold by this call
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		sold, confirmed = nil, false
		h, err := q.HoldLock(ctx, db.HoldLockParams{EventID: id.Event, ID: id.Seq})
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && h.Buyer != buyer) {
			return ErrHoldNotFound
		} else if err != nil {
			return err
		}
		o, err = q.OrderByHold(ctx, db.OrderByHoldParams{EventID: id.Event, HoldID: id.Seq})
		if err == nil {
			return nil
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if !h.Live || h.ReleasedAt != nil || h.SoldAt != nil {
			return ErrHoldExpired
		}
		seats, err := q.SeatsOfHold(ctx, db.SeatsOfHoldParams{EventID: id.Event, HoldID: &id.Seq})
		if err != nil {
			return err
		}
		if len(seats) != int(h.SeatCount) {
			return ErrHoldExpired
		}
		amount := 0
		ids := make([]int64, len(seats))
		for i, st := range seats {
			ids[i] = st.ID
			amount += int(st.PriceCents)
		}
		if h.GaTierID != nil {
			t, err := q.GATierGet(ctx, db.GATierGetParams{EventID: id.Event, ID: *h.GaTierID})
			if err != nil {
				return err
			}
			amount += int(t.PriceCents) * int(h.GaQuantity)
		}
		o, err = q.OrderCreate(ctx, db.OrderCreateParams{
			EventID: id.Event, HoldID: id.Seq, Buyer: buyer, Email: email, SeatIds: ids,
			GaTierID: h.GaTierID, GaQuantity: h.GaQuantity, AmountCents: int32(amount),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			// Not a second checkout (the hold row's lock rules that out): the window.
			if werr := saleWindowError(ctx, q, id.Event); werr != nil {
				return werr
			}
		}
		if err != nil || o.AmountCents > 0 {
			return err
		}
		sold, err = s.confirmFree(ctx, tx, q, o)
		if err != nil {
			return err
		}
		o, err = q.OrderGet(ctx, o.ID)
		confirmed = err == nil && o.Status == db.OrderStatusConfirmed
		return err
	})
	if err != nil {
		return Order{}, err
	}
	if confirmed {
		s.countConfirmed(o)
	}
	s.announce(ctx, o.EventID, sold)
	return s.orderView(ctx, o)
}

// confirmFree sells a free order, with no charge, in the caller's transaction. If it
// cannot sell (the buyer's limit), the order stays pending and nothing is owed.
func (s *Service) confirmFree(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order) ([]int64, error) {
	sold, reason, err := s.sell(ctx, tx, q, o)
	if err != nil || reason != "" {
		return nil, err
	}
	if err := q.OrderConfirm(ctx, db.OrderConfirmParams{ID: o.ID}); err != nil {
		return nil, err
	}
	if s.jobs != nil {
		if err := s.jobs.OrderConfirmed(ctx, tx, o.ID); err != nil {
			return nil, err
		}
	}
	return sold, nil
}

// Order returns an order of the buyer, with its seats and tickets.
func (s *Service) Order(ctx context.Context, orderID int64, buyer string) (Order, error) {
	o, err := s.q.OrderGet(ctx, orderID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && o.Buyer != buyer) {
		return Order{}, ErrOrderNotFound
	} else if err != nil {
		return Order{}, translate(err)
	}
	return s.orderView(ctx, o)
}

// OrderEvent is the event of the buyer's order, in one read: what a check in front of
// the order's calls needs, without the order's whole view (its seats, payments and
// refunds). Another buyer's order is not found.
func (s *Service) OrderEvent(ctx context.Context, orderID int64, buyer string) (int64, error) {
	o, err := s.q.OrderGet(ctx, orderID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && o.Buyer != buyer) {
		return 0, ErrOrderNotFound
	} else if err != nil {
		return 0, translate(err)
	}
	return o.EventID, nil
}

func (s *Service) orderView(ctx context.Context, o db.Order) (Order, error) {
	out := Order{
		ID: o.ID, EventID: o.EventID, HoldID: HoldID{Event: o.EventID, Seq: o.HoldID}, Email: o.Email,
		Status: string(o.Status), StatusReason: o.StatusReason, AmountCents: int(o.AmountCents),
	}
	if o.PaymentID != nil {
		out.PaymentID = *o.PaymentID
	}
	if err := s.paymentsView(ctx, o, &out); err != nil {
		return Order{}, err
	}
	if len(o.SeatIds) > 0 {
		rows, err := s.q.SeatsByIDs(ctx, db.SeatsByIDsParams{EventID: o.EventID, SeatIds: o.SeatIds})
		if err != nil {
			return Order{}, translate(err)
		}
		out.Seats = seatsOf(rows)
	}
	if o.GaTierID != nil {
		t, err := s.q.GATierGet(ctx, db.GATierGetParams{EventID: o.EventID, ID: *o.GaTierID})
		if err != nil {
			return Order{}, translate(err)
		}
		out.GA = &GAPlaces{TierID: t.ID, TierName: t.Name, Quantity: int(o.GaQuantity), PriceCents: int(t.PriceCents)}
	}
	if o.Status != db.OrderStatusPending && o.Status != db.OrderStatusExpired {
		tickets, err := s.q.TicketsOfOrder(ctx, db.TicketsOfOrderParams{EventID: o.EventID, OrderID: o.ID})
		if err != nil {
			return Order{}, translate(err)
		}
		for _, t := range tickets {
			if t.VoidedAt != nil {
				continue
			}
			tk := Ticket{ID: t.ID, Code: t.Code}
			if t.SeatID != nil {
				tk.SeatID = *t.SeatID
			}
			if t.GaTierID != nil {
				tk.GATierID = *t.GaTierID
			}
			out.Tickets = append(out.Tickets, tk)
		}
	}
	return out, nil
}

// paymentsView adds what the buyer should know of the order's payments: the one under
// way, if any, and the refunds. One statement reads both (an order view is a third of
// an onsale's statements; docs/ONSALE.md).
func (s *Service) paymentsView(ctx context.Context, o db.Order, out *Order) error {
	pays, err := s.q.PaymentsOfOrderWithRefunds(ctx, o.ID)
	if err != nil {
		return translate(err)
	}
	for _, p := range pays {
		refunded := p.RefundID != nil
		if refunded {
			out.Refunds = append(out.Refunds, OrderRefund{
				ID: *p.RefundID, AmountCents: int(*p.RefundAmountCents), Reason: *p.RefundReason,
				Done: *p.RefundState == db.RefundStateSucceeded,
			})
		}
		// A success without a refund, read after a pending order (the order is read by
		// a statement of its own, before), is one whose confirm just committed: still
		// under way as far as this view of the order goes.
		succeeded := p.State == db.PaymentStateSucceeded && o.Status == db.OrderStatusPending && !refunded
		if p.State != db.PaymentStatePending && p.State != db.PaymentStateUnknown && !succeeded {
			continue
		}
		out.PaymentUnderWay = true
		if p.ProviderPaymentID != nil && out.PaymentID == "" {
			out.PaymentID = *p.ProviderPaymentID
		}
		if o.Status == db.OrderStatusPending {
			out.StatusReason = ReasonPaymentProcessing
			if p.State == db.PaymentStateUnknown {
				out.StatusReason = ReasonPaymentUnknown
			}
		}
	}
	// In the order they were made, as before.
	slices.SortFunc(out.Refunds, func(a, b OrderRefund) int { return cmp.Compare(a.ID, b.ID) })
	return nil
}
