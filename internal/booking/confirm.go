package booking

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dbgate"
)

// PaymentOutcome says what a payment event did.
type PaymentOutcome string

// Outcomes of ApplyPayment.
const (
	OutcomeDuplicate     PaymentOutcome = "duplicate"      // this provider event was acted on before
	OutcomeConfirmed     PaymentOutcome = "confirmed"      // the order is sold and has tickets
	OutcomeRefundPending PaymentOutcome = "refund_pending" // paid, but the order sold nothing: refund queued
	OutcomeRefundDue     PaymentOutcome = "refund_due"     // this payment sold nothing (the order stands): refund queued
	OutcomeRefunded      PaymentOutcome = "refunded"       // a refund is confirmed
	OutcomeIgnored       PaymentOutcome = "ignored"        // nothing to do: unknown order or payment, or it moved on
	OutcomeFailed        PaymentOutcome = "failed"         // the payment (or a refund) failed; a payment's claim is freed
)

// ApplyPayment acts on a verified provider event, exactly once per provider event id,
// and idempotently per order and per payment: the event id is recorded in the
// transaction that acts on it, and the order row is locked (first, always: the lock
// order of every money transaction) while its state and its payments' move, which only
// ever move forward.
//
// A success sells the order's seats if it is the order's payment and the order is
// pending: those still held by its hold, or free again after the hold lapsed, are sold
// in one statement. Any success that sells nothing (the seats gone, the buyer's limit,
// another amount, the order confirmed by another payment, refunded or expired, or a
// payment other than the one under way) is recorded and its refund queued in the same
// transaction, once per payment: no money is kept without tickets.
//
// A failure of the payment under way frees the order's claim, so the buyer can pay
// again while the hold lives. Refund events settle refunds, and an order whose refunds
// are all done ends refunded.
//
// The sales window does not apply here, on purpose: the payment was claimed while the
// sale was open (PaymentClaim carries the window), the money is taken, and selling
// what was held in time is right even if the webhook arrives after the close.
func (s *Buyer) ApplyPayment(ctx context.Context, provider string, ev PaymentEvent) (PaymentOutcome, error) {
	return s.applyPayment(ctx, provider, ev)
}

// applyPayment is ApplyPayment, for the webhook and for the workers: reconciliation
// and refunds apply what the provider says as if its webhook had come.
func (s *store) applyPayment(ctx context.Context, provider string, ev PaymentEvent) (PaymentOutcome, error) {
	// No buyer's request waits on a confirmation (the provider waits for its answer,
	// the buyer's order page polls): the requests buyers wait on go first for a
	// connection.
	ctx = dbgate.Later(ctx)
	var outcome PaymentOutcome
	var sold []int64
	var eventID int64
	var order db.Order // the event's order, for the counters
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		sold, outcome, eventID, order = nil, OutcomeIgnored, 0, db.Order{}
		// One round trip: the event recorded, its order locked and, for a payment's
		// event, the payment locked by the provider's id, in that order (the order
		// first: every money transaction's lock order).
		var pl db.Pipeline
		recorded := pl.PaymentEventRecord(db.PaymentEventRecordParams{
			Provider: provider, EventID: ev.ID, Type: string(ev.Kind), OrderID: &ev.OrderID,
		})
		locked := pl.OrderLock(ev.OrderID)
		var byID *db.Row[db.Payment]
		if ev.Kind == KindPaymentSucceeded || ev.Kind == KindPaymentFailed {
			byID = pl.PaymentLockByProviderID(db.PaymentLockByProviderIDParams{Provider: provider, ProviderPaymentID: &ev.PaymentID})
		}
		if err := pl.Send(ctx, tx); err != nil {
			return err
		}
		if recorded.N == 0 {
			outcome = OutcomeDuplicate
			return nil
		}
		if !locked.Found {
			s.log.WarnContext(ctx, "payment event for unknown order", "event", ev.ID, "order", ev.OrderID)
			return nil
		}
		o := locked.Val
		if o.EventID != ev.EventID {
			s.log.InfoContext(ctx, "payment event names another show than its order's", "event", ev.ID, "order", o.ID)
			return nil
		}
		eventID, order = o.EventID, o
		a := &applier{s: s, tx: tx, q: q, provider: provider, ev: ev, o: o, byID: byID}
		var err error
		switch ev.Kind {
		case KindPaymentSucceeded:
			outcome, sold, err = a.succeeded(ctx)
		case KindPaymentFailed:
			outcome, err = a.failed(ctx)
		case KindRefundSucceeded, KindRefundFailed:
			outcome, err = a.refundSettled(ctx)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	s.announce(ctx, eventID, sold)
	s.countPayment(outcome, order)
	return outcome, nil
}

// applier acts on one provider event inside ApplyPayment's transaction, with the
// event's order locked.
type applier struct {
	s        *store
	tx       pgx.Tx
	q        *db.Queries
	provider string
	ev       PaymentEvent
	o        db.Order
	byID     *db.Row[db.Payment] // the payment by the provider's id, locked with the order
}

// payment finds and locks the event's payment: by the provider's id (locked with the
// order), else by the charge's key (the id may never have been recorded: a crash
// between charge and record). Only a payment of the event's order counts.
func (a *applier) payment(ctx context.Context) (db.Payment, bool, error) {
	var p db.Payment
	found := false
	if a.byID != nil {
		p, found = a.byID.Val, a.byID.Found
	}
	if !found && a.ev.PaymentKey != "" {
		var err error
		p, err = a.q.PaymentLockByKey(ctx, a.ev.PaymentKey)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return db.Payment{}, false, err
		}
		found = err == nil
	}
	switch {
	case !found:
		return db.Payment{}, false, nil
	case p.OrderID != a.o.ID:
		a.s.log.WarnContext(ctx, "payment event names another order than its payment's", "event", a.ev.ID, "payment", p.ID)
		return db.Payment{}, false, errOtherOrder
	}
	return p, true, nil
}

// errOtherOrder: the event's payment belongs to another order than the event names.
// Signed events do not do that; it is ignored, never acted on.
var errOtherOrder = errors.New("payment of another order")

// succeeded acts on a payment's success.
func (a *applier) succeeded(ctx context.Context) (PaymentOutcome, []int64, error) {
	p, known, err := a.payment(ctx)
	if errors.Is(err, errOtherOrder) {
		return OutcomeIgnored, nil, nil
	} else if err != nil {
		return "", nil, err
	}
	underWay := false  // another payment of the order holds its claim
	var pl db.Pipeline // sent with the sale's first statements, or before a refund
	if known {
		if p.State == db.PaymentStateSucceeded || p.State == db.PaymentStateRefunded {
			return OutcomeIgnored, nil, nil // applied before, under another event id
		}
		pl.PaymentSucceed(db.PaymentSucceedParams{
			ID: p.ID, AmountCents: int32(a.ev.AmountCents), ProviderPaymentID: &a.ev.PaymentID,
		})
	} else {
		pays, err := a.q.PaymentsOfOrder(ctx, a.o.ID)
		if err != nil {
			return "", nil, err
		}
		for _, other := range pays {
			underWay = underWay || other.State == db.PaymentStatePending || other.State == db.PaymentStateUnknown
		}
		p, err = a.q.PaymentExternalCreate(ctx, db.PaymentExternalCreateParams{
			OrderID: a.o.ID, Provider: a.provider, IdempotencyKey: "ext_" + rand.Text(),
			ProviderPaymentID: &a.ev.PaymentID, AmountCents: int32(a.ev.AmountCents),
		})
		if err != nil {
			return "", nil, err
		}
	}
	refund := func(reason string, closeOrder bool) (PaymentOutcome, []int64, error) {
		if err := pl.Send(ctx, a.tx); err != nil {
			return "", nil, err
		}
		return a.refund(ctx, p, reason, closeOrder)
	}
	switch {
	case a.o.Status == db.OrderStatusConfirmed:
		return refund(ReasonAlreadyPaid, false)
	case a.o.Status == db.OrderStatusExpired:
		return refund(ReasonOrderExpired, true)
	case a.o.Status != db.OrderStatusPending:
		return refund(ReasonOrderClosed, false)
	case underWay:
		// A payment the order did not start, while its own is under way: that one is
		// the order's; this one is given back.
		return refund(ReasonOtherPayment, false)
	case a.ev.AmountCents != int64(a.o.AmountCents):
		return refund(ReasonAmountMismatch, true)
	}
	sold, reason, err := a.s.sell(ctx, a.tx, a.q, a.o, &a.ev.PaymentID, &pl)
	if err != nil {
		return "", nil, err
	}
	if reason != "" {
		return a.refund(ctx, p, reason, true)
	}
	if a.s.jobs != nil {
		if err := a.s.jobs.OrderConfirmed(ctx, a.tx, a.o.ID); err != nil {
			return "", nil, err
		}
	}
	return OutcomeConfirmed, sold, nil
}

// refund records the refund of a payment that sold nothing and queues it, once per
// payment. closeOrder sends the order itself to refund_pending with the reason: it
// sold nothing and never will.
func (a *applier) refund(ctx context.Context, p db.Payment, reason string, closeOrder bool) (PaymentOutcome, []int64, error) {
	outcome := OutcomeRefundDue
	if closeOrder {
		outcome = OutcomeRefundPending
		if err := a.q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: a.o.ID, Status: db.OrderStatusRefundPending, StatusReason: reason}); err != nil {
			return "", nil, err
		}
	}
	if a.ev.AmountCents <= 0 {
		// Nothing was taken, so nothing is owed: an order closed by it is done.
		if closeOrder {
			err := a.q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: a.o.ID, Status: db.OrderStatusRefunded, StatusReason: reason})
			return outcome, nil, err
		}
		return outcome, nil, nil
	}
	id, err := a.q.RefundCreate(ctx, db.RefundCreateParams{
		OrderID: a.o.ID, PaymentID: p.ID, AmountCents: int32(a.ev.AmountCents), Reason: reason,
		IdempotencyKey: "refund_" + rand.Text(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return outcome, nil, nil // its refund is recorded already
	} else if err != nil {
		return "", nil, err
	}
	if a.s.jobs != nil {
		if err := a.s.jobs.RefundDue(ctx, a.tx, id, 1); err != nil {
			return "", nil, err
		}
	}
	return outcome, nil, nil
}

// failed acts on a payment's failure: the payment under way gives up the order's
// claim. A failure never undoes a success.
func (a *applier) failed(ctx context.Context) (PaymentOutcome, error) {
	p, known, err := a.payment(ctx)
	if errors.Is(err, errOtherOrder) || (err == nil && !known) {
		return OutcomeIgnored, nil
	} else if err != nil {
		return "", err
	}
	var pid *string
	if a.ev.PaymentID != "" {
		pid = &a.ev.PaymentID
	}
	n, err := a.q.PaymentFail(ctx, db.PaymentFailParams{ID: p.ID, StateReason: "failed", ProviderPaymentID: pid})
	if err != nil || n == 0 {
		return OutcomeIgnored, err
	}
	if err := a.q.OrderSetReason(ctx, db.OrderSetReasonParams{ID: a.o.ID, StatusReason: ReasonPaymentFailed}); err != nil {
		return "", err
	}
	return OutcomeFailed, nil
}

// saleSavepoint is the savepoint a sale can be undone to.
const saleSavepoint = "sale"

// sell sells the order's seats and places, issues its tickets and confirms it (keeping
// paymentID, the provider's payment, if any), all or nothing: on any shortfall
// everything it did is undone and reason says why. Statements the caller queued on
// with (nil: none) go in the sale's first round trip and stand whatever its verdict.
func (s *store) sell(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order, paymentID *string, with *db.Pipeline) (sold []int64, reason string, err error) {
	return s.sellUpTo(ctx, tx, q, o, s.cfg.MaxPerBuyer, paymentID, with)
}

// sellUpTo is sell with the buyer's limit given: the box office sells a group more
// seats than one online buyer may have.
//
// A sale of seats is one round trip: its statements do not depend on one another's
// results, so they go together (db.Pipeline), and the verdicts are read after. The
// seats are sold by one conditional statement whose rows are the verdict, as ever; a
// verdict against the sale (the buyer's limit, a seat gone) rolls back to the savepoint
// taken before anything was sold, undoing the tickets, the hold's and the order's
// marks that went with it. Standing places follow after the verdicts: a hold whose
// places were given back must take them again first; then their tickets and the
// confirmation go in one round trip.
func (s *store) sellUpTo(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order, limit int, paymentID *string, with *db.Pipeline) (sold []int64, reason string, err error) {
	pl := with
	if pl == nil {
		pl = new(db.Pipeline)
	}
	h := pl.HoldLock(db.HoldLockParams{EventID: o.EventID, ID: o.HoldID})
	pl.BuyerLock(db.BuyerLockParams{Buyer: o.Buyer, EventID: o.EventID})
	pl.Savepoint(saleSavepoint)
	// The buyer's limit, the database's verdict (BuyerWithinLimit), in every case and
	// after the buyer's lock (a fresh count): not only when the hold lapsed, because
	// "lapsed" is judged by this transaction's now(), which may be earlier than that of
	// a hold the buyer made meanwhile, which counted this one as lapsed already.
	within := pl.BuyerWithinLimit(db.BuyerWithinLimitParams{EventID: o.EventID, Buyer: o.Buyer, ExceptHoldID: o.HoldID,
		Asked: int32(len(o.SeatIds)) + o.GaQuantity, BuyerLimit: int32(limit)})
	seats := &db.Rows[int64]{}
	if len(o.SeatIds) > 0 {
		seats = pl.SeatSell(db.SeatSellParams{EventID: o.EventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID})
		pl.TicketsIssueForSeats(db.TicketsIssueForSeatsParams{EventID: o.EventID, OrderID: o.ID})
	}
	standing := o.GaQuantity > 0 && o.GaTierID != nil
	confirm := db.OrderConfirmParams{ID: o.ID, PaymentID: paymentID, EventID: o.EventID, HoldID: o.HoldID}
	if !standing {
		pl.OrderConfirm(confirm)
	}
	if err := pl.Send(ctx, tx); err != nil {
		return nil, "", err
	}
	if !h.Found {
		return nil, "", pgx.ErrNoRows
	}
	undo := func(reason string) ([]int64, string, error) {
		if err := db.RollbackTo(ctx, tx, saleSavepoint); err != nil {
			return nil, "", err
		}
		return nil, reason, nil
	}
	if !within.Val.Within {
		return undo(ReasonBuyerLimit)
	}
	if len(seats.Vals) != len(o.SeatIds) {
		return undo(ReasonSeatsUnavailable)
	}
	if !standing {
		return s.countCode(ctx, q, o, h.Val.AccessCodeID, seats.Vals, undo)
	}
	if h.Val.ReleasedAt != nil {
		// The tidy-up gave the places back after the hold lapsed: take them again.
		tier, err := q.GATierGet(ctx, db.GATierGetParams{EventID: o.EventID, ID: *o.GaTierID})
		if err != nil {
			return nil, "", err
		}
		err = s.takeGA(ctx, tx, q, o.EventID, o.HoldID, tier.ID, int(tier.Stripes), int(o.GaQuantity))
		if errors.Is(err, ErrSoldOut) {
			return undo(ReasonSoldOut)
		} else if err != nil {
			return nil, "", err
		}
	}
	var tail db.Pipeline
	tail.TicketsIssueForGA(db.TicketsIssueForGAParams{EventID: o.EventID, OrderID: o.ID, GaTierID: *o.GaTierID, Quantity: o.GaQuantity})
	tail.OrderConfirm(confirm)
	if err := tail.Send(ctx, tx); err != nil {
		return nil, "", err
	}
	return s.countCode(ctx, q, o, h.Val.AccessCodeID, seats.Vals, undo)
}

// countCode counts a presale order's places against its access code (codeID, the
// hold's; nil: a public order) once everything else of the sale stands, by one
// conditional statement (useAccessCode), and undoes the sale when they do not fit or
// the code was paused meanwhile. hold_presale let the places be held only within the
// quota, so this is the backstop, as the seats' unique index is for the seats, and the
// record the order shows.
func (s *store) countCode(ctx context.Context, q *db.Queries, o db.Order, codeID *int64, sold []int64,
	undo func(string) ([]int64, string, error)) ([]int64, string, error) {
	if codeID == nil {
		return sold, "", nil
	}
	ok, err := useAccessCode(ctx, q, o.EventID, *codeID, o.ID, len(o.SeatIds)+int(o.GaQuantity))
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return undo(ReasonPresaleQuota)
	}
	return sold, "", nil
}
