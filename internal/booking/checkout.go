package booking

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/payment"
)

// Checkout turns a live hold into a pending order. Checking out the same hold again
// returns the same order. Outside the event's sales window no order is made: a
// *NotOnSaleError or ErrSalesClosed.
func (s *Service) Checkout(ctx context.Context, id HoldID, buyer, email string) (Order, error) {
	var o db.Order
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
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
		return err
	})
	if err != nil {
		return Order{}, err
	}
	return s.orderView(ctx, o)
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

func (s *Service) orderView(ctx context.Context, o db.Order) (Order, error) {
	out := Order{
		ID: o.ID, EventID: o.EventID, HoldID: HoldID{Event: o.EventID, Seq: o.HoldID}, Email: o.Email,
		Status: string(o.Status), StatusReason: o.StatusReason, AmountCents: int(o.AmountCents),
	}
	if o.PaymentID != nil {
		out.PaymentID = *o.PaymentID
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
	if o.Status == db.OrderStatusConfirmed || o.Status == db.OrderStatusRefundPending || o.Status == db.OrderStatusRefunded {
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

// Pay charges a pending order through the payment provider. A successful charge does
// not confirm the order: the provider's webhook does (see ApplyPayment). Outside the
// event's sales window nothing is charged: a *NotOnSaleError or ErrSalesClosed,
// decided by the database clock in the payment claim.
func (s *Service) Pay(ctx context.Context, orderID int64, buyer, card string, delivery payment.Delivery) (payment.Charge, error) {
	if s.charger == nil {
		return payment.Charge{}, ErrNoPayments
	}
	o, err := s.q.OrderGet(ctx, orderID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && o.Buyer != buyer) {
		return payment.Charge{}, ErrOrderNotFound
	} else if err != nil {
		return payment.Charge{}, translate(err)
	}
	if o.Status != db.OrderStatusPending {
		return payment.Charge{}, ErrOrderNotPending
	}
	// Do not take money for seats whose hold has run out: they may be someone else's by
	// now. (A payment already under way when the hold lapses is settled by confirm.)
	h, err := s.q.HoldGet(ctx, db.HoldGetParams{EventID: o.EventID, ID: o.HoldID})
	if err != nil {
		return payment.Charge{}, translate(err)
	}
	if !h.Live || h.ReleasedAt != nil {
		return payment.Charge{}, ErrHoldExpired
	}
	claim := "claim:" + rand.Text()
	n, err := s.q.OrderClaimPayment(ctx, db.OrderClaimPaymentParams{ID: o.ID, Claim: &claim})
	if err != nil {
		return payment.Charge{}, translate(err)
	}
	if n == 0 {
		if werr := saleWindowError(ctx, s.q, o.EventID); werr != nil {
			return payment.Charge{}, translate(werr)
		}
		return payment.Charge{}, ErrPaymentInProgress
	}
	ch, err := s.charger.Charge(ctx, payment.ChargeRequest{
		OrderID: o.ID, EventID: o.EventID, AmountCents: int64(o.AmountCents), Card: card, Delivery: delivery,
	})
	var paid *string
	if err == nil {
		paid = &ch.PaymentID
	}
	if serr := s.q.OrderSetPayment(context.WithoutCancel(ctx), db.OrderSetPaymentParams{ID: o.ID, Claim: &claim, PaymentID: paid}); serr != nil && err == nil {
		// The charge went through; its webhook confirms the order whatever happens here.
		s.log.WarnContext(ctx, "payment id not recorded", "order", o.ID, "payment", ch.PaymentID, "err", serr)
	}
	if err != nil {
		return payment.Charge{}, err
	}
	return ch, nil
}
