package booking

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
)

// Checkout turns a live hold into a pending order. Checking out the same hold again
// returns the same order. Outside the event's sales window no order is made: a
// *NotOnSaleError or ErrSalesClosed. A free order (amount 0) is confirmed at once, in
// the same transaction: there is nothing to charge.
func (s *Buyer) Checkout(ctx context.Context, id HoldID, buyer, email string) (Order, error) {
	var o db.Order
	var sold []int64
	var fresh *Order   // the view of an order this call created, unpaid: known without a read
	confirmed := false // a free order, sold by this call
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		sold, confirmed, fresh = nil, false, nil
		// One round trip: the hold locked, its order if it has one, and its basket (read
		// for nothing when the order exists or the hold lapsed, which is rare).
		var pl db.Pipeline
		lb := queueLockedBasket(&pl, id)
		if err := pl.Send(ctx, tx); err != nil {
			return err
		}
		h, r := lb.hold.Val, lb.basketRead
		if !lb.hold.Found || h.Buyer != buyer {
			return ErrHoldNotFound
		}
		if lb.order.Found {
			o = lb.order.Val
			return nil
		}
		if !h.Live {
			return ErrHoldExpired
		}
		// Every seat of the basket still held, and as many as the hold counts: a seat
		// whose hold lapsed (and may have gone to another buyer) is the lapse it is,
		// never an order priced without it.
		seats := r.held()
		if len(seats) != len(r.seats.Vals) || len(seats) != int(h.SeatCount) {
			return ErrHoldExpired
		}
		quote, err := s.checkoutQuote(ctx, tx, r, h)
		if err != nil {
			return err
		}
		// An order to pay with no voucher to count is the transaction's last word:
		// nothing it answers can roll the transaction back, so the commit goes with it.
		last := quote.Total > 0 && quote.VoucherID == 0
		var view Order
		if o, view, err = createOrder(ctx, tx, id, h, seats, r.ga(), buyer, email, quote, last); err != nil {
			return err
		}
		if err := chargeVoucher(ctx, q, o, quote); err != nil {
			return err
		}
		if o.AmountCents > 0 {
			fresh = &view
			return nil
		}
		sold, err = s.confirmFree(ctx, tx, q, o)
		if err != nil {
			return err
		}
		o, err = q.OrderGet(ctx, o.ID)
		confirmed = err == nil && o.Status == db.OrderStatusConfirmed
		return err
	})
	if errors.Is(err, errNoOrderMade) {
		// Not a second checkout (the hold row's lock rules that out): the window.
		if werr := saleWindowError(ctx, s.q, id.Event); werr != nil {
			return Order{}, translate(werr)
		}
		return Order{}, translate(pgx.ErrNoRows)
	}
	if err != nil {
		return Order{}, err
	}
	s.owners.put(o.ID, orderOwner{event: o.EventID, buyer: o.Buyer})
	if confirmed {
		s.countConfirmed(o)
	}
	s.announce(ctx, o.EventID, sold)
	if fresh != nil {
		// Just made and unpaid: what its view would read back (TestCheckoutAnswersAsTheOrderView).
		return *fresh, nil
	}
	_, view, err := s.orderView(ctx, o.ID)
	return view, translate(err)
}

// createOrder makes the pending order of the live hold h, whose seats are seats and
// GA places ga, for the amount quote totals, with its lines, and returns it with the
// view that reading it back would give. One round trip, and with last the
// transaction's commit goes with it. Outside the event's sales window it makes none
// (OrderCreate's conditions are the verdict): errNoOrderMade, for the caller to read
// why once the transaction has ended (committed with last, or rolled back).
func createOrder(ctx context.Context, tx pgx.Tx, id HoldID, h db.HoldLockRow, seats []db.HoldBasketSeatsRow, ga *GAPlaces, buyer, email string, quote pricing.Quote, last bool) (db.Order, Order, error) {
	ids := make([]int64, len(seats))
	view := Order{HoldID: id, Email: email, Status: StatusPending, GA: ga}
	for i, st := range seats {
		ids[i] = st.ID
		view.Seats = append(view.Seats, basketSeat(st))
	}
	var pl db.Pipeline
	p := db.OrderCreateParams{
		EventID: id.Event, HoldID: id.Seq, Buyer: buyer, Email: email, SeatIds: ids,
		GaTierID: h.GaTierID, GaQuantity: h.GaQuantity, AmountCents: int32(quote.Total),
	}
	withLines(&p, quote)
	created := pl.OrderCreate(p)
	var err error
	if last {
		err = pl.SendAndCommit(ctx, tx)
	} else {
		err = pl.Send(ctx, tx)
	}
	switch {
	case err != nil:
		return db.Order{}, Order{}, err
	case !created.Found:
		return db.Order{}, Order{}, errNoOrderMade
	}
	o := db.Order(created.Val)
	view.ID, view.EventID, view.AmountCents = o.ID, o.EventID, int(o.AmountCents)
	return o, view, nil
}

// errNoOrderMade: OrderCreate made no order, which outside a second checkout (ruled
// out by the hold's lock) is the sales window's verdict.
var errNoOrderMade = errors.New("no order made")

// confirmFree sells a free order, with no charge, in the caller's transaction. If it
// cannot sell (the buyer's limit), the order stays pending and nothing is owed.
func (s *store) confirmFree(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order) ([]int64, error) {
	sold, reason, err := s.sell(ctx, tx, q, o, nil, nil)
	if err != nil || reason != "" {
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
func (s *Buyer) Order(ctx context.Context, orderID int64, buyer string) (Order, error) {
	o, view, err := s.orderView(ctx, orderID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && o.Buyer != buyer) {
		return Order{}, ErrOrderNotFound
	} else if err != nil {
		return Order{}, translate(err)
	}
	return view, nil
}

// OrderEvent is the event of the buyer's order: what a check in front of the order's
// calls needs, without the order's whole view (its seats, payments and refunds). An
// order this process checked out or looked up before is answered from memory (an
// order's event and buyer never change: owners.go); any other in one read. Another
// buyer's order is not found.
func (s *Buyer) OrderEvent(ctx context.Context, orderID int64, buyer string) (int64, error) {
	own, ok := s.owners.get(orderID)
	if !ok {
		o, err := s.q.OrderGet(ctx, orderID)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, ErrOrderNotFound
		} else if err != nil {
			return 0, translate(err)
		}
		own = orderOwner{event: o.EventID, buyer: o.Buyer}
		s.owners.put(orderID, own)
	}
	if own.buyer != buyer {
		return 0, ErrOrderNotFound
	}
	return own.event, nil
}

// orderView reads the order id with what its buyer's view shows (seats, places,
// valid tickets, the payment under way, refunds) in one statement: an order view is
// the checkout and pay answers, each order-page poll and each confirmation email, and
// the pool's connections are what an onsale's steps wait for (docs/BENCHMARKS.md). The
// order's row comes with it, for the caller's checks. No order: pgx.ErrNoRows.
func (s *store) orderView(ctx context.Context, id int64) (db.Order, Order, error) {
	row, err := s.q.OrderWithView(ctx, id)
	if err != nil {
		return db.Order{}, Order{}, err
	}
	o := row.Order
	out := Order{
		ID: o.ID, EventID: o.EventID, HoldID: HoldID{Event: o.EventID, Seq: o.HoldID}, Email: o.Email,
		Status: string(o.Status), StatusReason: o.StatusReason, AmountCents: int(o.AmountCents),
	}
	if o.PaymentID != nil {
		out.PaymentID = *o.PaymentID
	}
	var parts struct {
		pays    []viewPayment
		seats   []viewSeat
		tickets []viewTicket
	}
	for _, p := range []struct {
		name, json string
		into       any
	}{{"payments", row.Payments, &parts.pays}, {"seats", row.Seats, &parts.seats}, {"tickets", row.Tickets, &parts.tickets}} {
		if err := json.Unmarshal([]byte(p.json), p.into); err != nil {
			return db.Order{}, Order{}, fmt.Errorf("order %d's %s: %w", o.ID, p.name, err)
		}
	}
	paymentsView(o, parts.pays, &out)
	for _, st := range parts.seats {
		out.Seats = append(out.Seats, Seat(st))
	}
	if o.GaTierID != nil {
		out.GA = &GAPlaces{TierID: *o.GaTierID, TierName: row.GaTierName, Quantity: int(o.GaQuantity), PriceCents: int(row.GaPriceCents)}
	}
	for _, t := range parts.tickets {
		out.Tickets = append(out.Tickets, Ticket(t))
	}
	return o, out, nil
}

// The parts of an order's view as OrderWithView gives them, in JSON.
type (
	viewPayment struct {
		State        db.PaymentState `json:"state"`
		ProviderID   *string         `json:"provider_id"`
		RefundID     *int64          `json:"refund_id"`
		RefundCents  int             `json:"refund_cents"`
		RefundReason string          `json:"refund_reason"`
		RefundState  db.RefundState  `json:"refund_state"`
	}
	viewSeat struct {
		ID         int64  `json:"id"`
		Section    string `json:"section"`
		Row        string `json:"row"`
		Number     int    `json:"number"`
		PriceCents int    `json:"price"`
	}
	viewTicket struct {
		ID       int64  `json:"id"`
		SeatID   int64  `json:"seat"` // null for a standing place: 0
		GATierID int64  `json:"tier"` // null for a seat: 0
		Code     string `json:"code"`
	}
)

// paymentsView adds what the buyer should know of the order's payments: the one under
// way, if any, and the refunds.
func paymentsView(o db.Order, pays []viewPayment, out *Order) {
	for _, p := range pays {
		refunded := p.RefundID != nil
		if refunded {
			out.Refunds = append(out.Refunds, OrderRefund{
				ID: *p.RefundID, AmountCents: p.RefundCents, Reason: p.RefundReason,
				Done: p.RefundState == db.RefundStateSucceeded,
			})
		}
		// A success without a refund beside a pending order is one whose order is
		// still to be confirmed (the payment's outcome is recorded first): still under
		// way as far as this view of the order goes.
		succeeded := p.State == db.PaymentStateSucceeded && o.Status == db.OrderStatusPending && !refunded
		if p.State != db.PaymentStatePending && p.State != db.PaymentStateUnknown && !succeeded {
			continue
		}
		out.PaymentUnderWay = true
		if p.ProviderID != nil && out.PaymentID == "" {
			out.PaymentID = *p.ProviderID
		}
		if o.Status == db.OrderStatusPending {
			out.StatusReason = ReasonPaymentProcessing
			if p.State == db.PaymentStateUnknown {
				out.StatusReason = ReasonPaymentUnknown
			}
		}
	}
	// In the order they were made.
	slices.SortFunc(out.Refunds, func(a, b OrderRefund) int { return cmp.Compare(a.ID, b.ID) })
}
