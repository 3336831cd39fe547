package booking

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/staff"
)

// Staff refunds and voids. The box office ends some or all of a confirmed
// order's tickets in one transaction, under the order's lock (the first lock of every
// money transaction): the tickets are voided by a conditional statement (only valid
// ones not used at the door), their seats return to sale by another (only seats still
// sold to this order), GA places go back to the stripes they came from, the refund is
// recorded against the payment the order keeps by that payment's own method — through
// the provider, its job queued (RunRefund, then the provider's word), or for a
// box-office sale at the desk, done at once (deskrefund.go) — and the audit entry is
// written. The live map hears of the seats after commit.
//
// A partial refund leaves the order confirmed, owning the seats and places left (its
// seat_ids and ga_quantity shrink with it); its payment stays the kept charge, refunded
// in part. Either way the buyer's sold hold counts the places given up no more, so the
// per-buyer limit counts only what the buyer still owns. Ending every ticket ends the order: refund_pending until its refunds are
// done, then refunded (with the refund email), or refunded at once when no money goes
// back. A void gives no money back (comps, cash handled outside): the order's
// status_reason says "voided".

// Reasons of staff refunds and voids, on the order and on its refunds.
const (
	ReasonStaffRefund = "staff_refund" // staff refunded the tickets
	ReasonVoided      = "voided"       // staff voided the tickets, no money back
)

// RefundKind says whether money goes back with the tickets.
type RefundKind string

// The kinds of a staff refund.
const (
	KindRefund RefundKind = "refund" // what the tickets cost goes back by the payment's method
	KindVoid   RefundKind = "void"   // the tickets end, no money moves
)

// Actor is the member of staff doing something, for the audit log.
type Actor struct {
	StaffID int64
	Address string
}

// StaffRefundRequest asks to end tickets of an order.
type StaffRefundRequest struct {
	OrderID int64
	// TicketIDs are the tickets to end. Whole asks for every valid ticket of the order
	// instead; neither is ErrNoTicketsChosen, never the whole order by default.
	TicketIDs []int64
	Whole     bool
	Kind      RefundKind
	By        Actor
	// Key is the confirmation's own key (optional): a request confirmed under a key
	// before ends nothing more, and its answer is the first one's (Replayed).
	Key string
}

// StaffRefundResult says what a staff refund did.
type StaffRefundResult struct {
	Tickets     []int64 // the tickets ended
	SeatIDs     []int64 // the seats returned to sale
	GAPlaces    int     // the general-admission places returned
	AmountCents int     // the money going back (0 for a void)
	Whole       bool    // the order has no valid ticket left
	Status      string  // the order's status after it
	// Method is how the money goes back: PayCash or PayCardPresent (at the desk),
	// MethodCard (through the payment provider); "" when none does.
	Method string
	// Replayed says the request's Key was confirmed before: nothing more was done, and
	// the rest is that first confirmation's.
	Replayed bool
}

// Errors of staff refunds.
var (
	// ErrOrderNotConfirmed: only a confirmed order has tickets to refund or a
	// confirmation to send.
	ErrOrderNotConfirmed = errors.New("order is not confirmed")
	// ErrNoPaymentToRefund: the order kept no payment booking can give back (a free
	// order, or one paid outside the provider and the box office): its tickets can be
	// voided, not refunded.
	ErrNoPaymentToRefund = errors.New("order has no payment to refund")
	// ErrRefundTooLarge: the refund would give back more than the payment took.
	ErrRefundTooLarge = errors.New("refund larger than what is left of the payment")
	// ErrNoJobs: no job queue can send the email.
	ErrNoJobs = errors.New("no job queue configured")
)

// TicketsUnavailableError names asked-for tickets that are not valid, unused tickets of
// the order (voided already, used at the door, or another order's).
type TicketsUnavailableError struct{ TicketIDs []int64 }

func (e *TicketsUnavailableError) Error() string {
	return fmt.Sprintf("%d ticket(s) not valid and unused in this order", len(e.TicketIDs))
}

// StaffRefund ends the tickets of a confirmed order that staff chose, all or nothing:
// see the comment at the top of this file.
func (s *Desk) StaffRefund(ctx context.Context, req StaffRefundRequest) (StaffRefundResult, error) {
	if err := req.check(); err != nil {
		return StaffRefundResult{}, err
	}
	var res StaffRefundResult
	var eventID int64
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		var err error
		res, eventID, err = s.endTickets(ctx, tx, q, req)
		return err
	})
	if err != nil {
		return StaffRefundResult{}, err
	}
	s.announce(ctx, eventID, res.SeatIDs)
	if res.GAPlaces > 0 {
		s.announceGA(ctx, eventID)
	}
	return res, nil
}

// endTickets is StaffRefund's transaction, under the order's lock: the tickets voided,
// their seats and places given back, the refund recorded, the order's status and the
// audit entry. It returns what it did and the order's event.
func (s *store) endTickets(ctx context.Context, tx pgx.Tx, q *db.Queries, req StaffRefundRequest) (StaffRefundResult, int64, error) {
	o, err := q.OrderLock(ctx, req.OrderID)
	if errors.Is(err, pgx.ErrNoRows) {
		return StaffRefundResult{}, 0, ErrOrderNotFound
	} else if err != nil {
		return StaffRefundResult{}, 0, err
	}
	// Under the order's lock, so that a confirmation submitted twice at once finds
	// the first one's record here.
	if res, found, err := confirmedBefore(ctx, q, req); err != nil || found {
		return res, o.EventID, err
	}
	if o.Status != db.OrderStatusConfirmed {
		return StaffRefundResult{}, 0, ErrOrderNotConfirmed
	}
	valid, err := q.TicketsValidOfOrder(ctx, db.TicketsValidOfOrderParams{EventID: o.EventID, OrderID: o.ID})
	if err != nil {
		return StaffRefundResult{}, 0, err
	}
	ids := ticketsToEnd(req, valid)
	var staffID *int64
	if req.By.StaffID != 0 {
		staffID = &req.By.StaffID
	}
	voided, err := voidTickets(ctx, q, o, ids, req.Kind, staffID)
	if err != nil {
		return StaffRefundResult{}, 0, err
	}
	res := StaffRefundResult{Tickets: ids, Whole: len(voided) == len(valid)}
	ga := res.count(voided)
	if err := giveBackPlaces(ctx, q, o, res.SeatIDs, ga, res.GAPlaces); err != nil {
		return StaffRefundResult{}, 0, err
	}
	var refundID int64
	if req.Kind == KindRefund {
		if res.AmountCents, err = withOrderFee(ctx, q, o.EventID, o.ID, res.AmountCents, res.Whole); err != nil {
			return StaffRefundResult{}, 0, err
		}
		if refundID, res.Method, err = s.refundTickets(ctx, tx, q, o, ids, res.AmountCents, staffID); err != nil {
			return StaffRefundResult{}, 0, err
		}
	} else {
		res.AmountCents = 0
	}
	if res.Status, err = s.orderAfterEnding(ctx, tx, q, o, req.Kind, res); err != nil {
		return StaffRefundResult{}, 0, err
	}
	before := map[string]any{"status": o.Status, "valid_tickets": valid}
	after := map[string]any{"status": res.Status, "kind": req.Kind, "tickets": ids, "seats": res.SeatIDs,
		"ga_places": res.GAPlaces, "amount_cents": res.AmountCents, "refund_id": refundID, "method": res.Method}
	if err := recordConfirmation(ctx, q, req, staffID, res); err != nil {
		return StaffRefundResult{}, 0, err
	}
	err = staff.Audit(ctx, tx, req.By.StaffID, "order."+string(req.Kind), OrderSubject(o.ID), before, after, req.By.Address)
	return res, o.EventID, err
}

// withOrderFee adds the order's per-order fee to amount when the refund ends the whole
// order: each ticket gives back what it cost (its order line), and the last one the
// fee too, so an order refunded in parts gives back exactly what it charged.
func withOrderFee(ctx context.Context, q *db.Queries, eventID, orderID int64, amount int, whole bool) (int, error) {
	if !whole {
		return amount, nil
	}
	fee, err := q.OrderFeeCents(ctx, db.OrderFeeCentsParams{EventID: eventID, OrderID: orderID})
	return amount + int(fee), err
}

// ticketsToEnd is the tickets asked for, sorted and each once; with Whole, every
// valid ticket of the order.
func ticketsToEnd(req StaffRefundRequest, valid []int64) []int64 {
	ids := slices.Clone(req.TicketIDs)
	if req.Whole {
		ids = slices.Clone(valid)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// voidTickets voids ids, all or nothing: if any is not a valid, unused ticket of the
// order the error (*TicketsUnavailableError) names those, and the caller rolls back.
func voidTickets(ctx context.Context, q *db.Queries, o db.Order, ids []int64, kind RefundKind, staffID *int64) ([]db.TicketsVoidRow, error) {
	voided, err := q.TicketsVoid(ctx, db.TicketsVoidParams{
		EventID: o.EventID, OrderID: o.ID, TicketIds: ids, VoidReason: string(kind), StaffID: staffID,
	})
	if err != nil {
		return nil, err
	}
	if len(voided) != len(ids) || len(ids) == 0 {
		got := map[int64]bool{}
		for _, v := range voided {
			got[v.ID] = true
		}
		missing := []int64{}
		for _, id := range ids {
			if !got[id] {
				missing = append(missing, id)
			}
		}
		return nil, &TicketsUnavailableError{TicketIDs: missing}
	}
	return voided, nil
}

// count adds what the voided tickets cost (their order lines), their seats and places
// to res, and returns the places per general-admission tier.
func (res *StaffRefundResult) count(voided []db.TicketsVoidRow) map[int64]int {
	ga := map[int64]int{}
	for _, v := range voided {
		res.AmountCents += int(v.PriceCents)
		switch {
		case v.SeatID != nil:
			res.SeatIDs = append(res.SeatIDs, *v.SeatID)
		case v.GaTierID != nil:
			ga[*v.GaTierID]++
			res.GAPlaces++
		}
	}
	return ga
}

// giveBackPlaces returns the voided tickets' seats to sale (only seats still sold to
// the order), their places per tier (ga) to the stripes they came from, and drops
// them from the order's hold, so that the buyer's limit counts them no more.
func giveBackPlaces(ctx context.Context, q *db.Queries, o db.Order, seatIDs []int64, ga map[int64]int, gaPlaces int) error {
	if len(seatIDs) > 0 {
		freed, err := q.SeatUnsell(ctx, db.SeatUnsellParams{EventID: o.EventID, SeatIds: seatIDs, OrderID: &o.ID})
		if err != nil {
			return err
		}
		if len(freed) != len(seatIDs) {
			// A valid ticket whose seat is not sold to its order breaks an invariant
			// that the unique index and confirm keep; refuse rather than guess.
			return fmt.Errorf("order %d: %d of %d seats of its valid tickets are not sold to it", o.ID, len(seatIDs)-len(freed), len(seatIDs))
		}
	}
	for tier, n := range ga {
		if err := giveBackGA(ctx, q, o, tier, n); err != nil {
			return err
		}
	}
	return q.HoldDropPlaces(ctx, db.HoldDropPlacesParams{
		EventID: o.EventID, ID: o.HoldID, SeatCount: int32(len(seatIDs)), GaQuantity: int32(gaPlaces),
	})
}

// refundTickets records the refund of amount for the tickets ids and marks them with
// it; it returns the refund's id, 0 when nothing is owed, and how the money goes back.
func (s *store) refundTickets(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order, ids []int64, amount int, staffID *int64) (int64, string, error) {
	refundID, method, err := s.recordStaffRefund(ctx, tx, q, o, amount, staffID)
	if err != nil || refundID == 0 {
		return 0, "", err
	}
	err = q.TicketsSetRefund(ctx, db.TicketsSetRefundParams{EventID: o.EventID, RefundID: &refundID, TicketIds: ids})
	return refundID, method, err
}

// orderAfterEnding ends the order when no valid ticket is left (endOrder), or else
// drops the ended seats and places from it; it returns the order's status.
func (s *store) orderAfterEnding(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order, kind RefundKind, res StaffRefundResult) (string, error) {
	if res.Whole {
		return s.endOrder(ctx, tx, q, o, kind)
	}
	err := q.OrderDropPlaces(ctx, db.OrderDropPlacesParams{ID: o.ID, SeatIds: res.SeatIDs, GaQuantity: int32(res.GAPlaces)})
	return string(db.OrderStatusConfirmed), err
}

// OrderSubject names an order in the audit log.
func OrderSubject(id int64) string { return "order " + strconv.FormatInt(id, 10) }

// recordStaffRefund records the refund of amount against the payment the order keeps,
// by the payment's own method: a box-office payment's at the desk (refundAtDesk), a
// provider's through the provider, its job queued. It returns 0 when nothing is owed
// (free tickets), and the method.
func (s *store) recordStaffRefund(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order, amount int, staffID *int64) (int64, string, error) {
	if amount <= 0 {
		return 0, "", nil
	}
	kept, err := s.keptPayment(ctx, q, o)
	if err != nil {
		return 0, "", err
	}
	if kept.Provider == BoxOfficeProvider {
		id, err := refundAtDesk(ctx, q, o, kept, amount, staffID)
		return id, kept.StateReason, err
	}
	id, err := q.RefundCreateForTickets(ctx, db.RefundCreateForTicketsParams{
		OrderID: o.ID, PaymentID: kept.ID, AmountCents: int32(amount), Reason: ReasonStaffRefund,
		IdempotencyKey: "refund_" + rand.Text(), StaffID: staffID, State: db.RefundStateDue,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", ErrRefundTooLarge
	} else if err != nil {
		return 0, "", err
	}
	if s.jobs != nil {
		if err := s.jobs.RefundDue(ctx, tx, id, 1); err != nil {
			return 0, "", err
		}
	}
	return id, MethodCard, nil
}

// keptPayment is the payment a confirmed order keeps, locked: the succeeded one it
// names, taken through the provider booking refunds with, or at the box office (cash
// or a card present, given back at the desk). Any other is ErrNoPaymentToRefund: its
// tickets can be voided.
func (s *store) keptPayment(ctx context.Context, q *db.Queries, o db.Order) (db.Payment, error) {
	if o.PaymentID == nil {
		return db.Payment{}, ErrNoPaymentToRefund
	}
	p, err := q.PaymentKeptLock(ctx, db.PaymentKeptLockParams{OrderID: o.ID, ProviderPaymentID: *o.PaymentID})
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !s.refundable(p.Provider)) {
		return db.Payment{}, ErrNoPaymentToRefund
	}
	return p, err
}

// refundable reports whether booking can give back a payment of provider.
func (s *store) refundable(provider string) bool {
	return provider == BoxOfficeProvider || (s.pay != nil && provider == s.pay.Name())
}

// endOrder ends an order with no valid ticket left: refund_pending while any refund
// of it is under way (the last refund's word ends it refunded, with the refund
// email), refunded at once otherwise. The voucher use it counted goes back in the
// same transaction (releaseVoucher): an order that keeps no ticket has not used it.
func (s *store) endOrder(ctx context.Context, tx pgx.Tx, q *db.Queries, o db.Order, kind RefundKind) (string, error) {
	reason := ReasonStaffRefund
	if kind == KindVoid {
		reason = ReasonVoided
	}
	if err := releaseVoucher(ctx, q, o.EventID, o.ID); err != nil {
		return "", err
	}
	left, err := q.RefundsUnsettledCount(ctx, o.ID)
	if err != nil {
		return "", err
	}
	status := db.OrderStatusRefunded
	if left > 0 {
		status = db.OrderStatusRefundPending
	}
	if err := q.OrderSetStatus(ctx, db.OrderSetStatusParams{ID: o.ID, Status: status, StatusReason: reason}); err != nil {
		return "", err
	}
	// A box-office buyer may have left no email: there is no one to write to.
	if status == db.OrderStatusRefunded && kind == KindRefund && s.jobs != nil && o.Email != "" {
		if err := s.jobs.OrderRefunded(ctx, tx, o.ID); err != nil {
			return "", err
		}
	}
	return string(status), nil
}

// giveBackGA returns n places of tier that the order's hold took to the stripes they
// came from, each step a conditional statement: the places the hold has and the
// stripes' counts move together, so that they still add up to the tier's capacity.
func giveBackGA(ctx context.Context, q *db.Queries, o db.Order, tier int64, n int) error {
	places, err := q.HoldGAPlaces(ctx, db.HoldGAPlacesParams{EventID: o.EventID, HoldID: o.HoldID})
	if err != nil {
		return err
	}
	for _, p := range places {
		if n == 0 {
			break
		}
		if p.TierID != tier {
			continue
		}
		take := min(n, int(p.Quantity))
		var moved int64
		if take == int(p.Quantity) {
			moved, err = q.HoldGAPlaceRemove(ctx, db.HoldGAPlaceRemoveParams{
				EventID: o.EventID, HoldID: o.HoldID, TierID: tier, Stripe: p.Stripe, Quantity: int32(take)})
		} else {
			moved, err = q.HoldGAPlaceReduce(ctx, db.HoldGAPlaceReduceParams{
				EventID: o.EventID, HoldID: o.HoldID, TierID: tier, Stripe: p.Stripe, Quantity: int32(take)})
		}
		if err != nil {
			return err
		}
		if moved != 1 {
			return fmt.Errorf("order %d: the places of its hold moved under the order's lock", o.ID)
		}
		if err := q.GAStripeGive(ctx, db.GAStripeGiveParams{EventID: o.EventID, TierID: tier, Stripe: p.Stripe, Quantity: int32(take)}); err != nil {
			return err
		}
		n -= take
	}
	if n > 0 {
		return fmt.Errorf("order %d: its hold took %d places fewer of tier %d than it has tickets for", o.ID, n, tier)
	}
	return nil
}

// ConfirmationResender is what a job queue does to send an order's confirmation
// again: a new job per request, never turned away by the once-per-order uniqueness of
// the first (internal/jobs implements it).
type ConfirmationResender interface {
	ResendConfirmation(ctx context.Context, tx pgx.Tx, orderID int64, request string) error
}

// ResendConfirmation queues the confirmation email of a confirmed order again, to its
// buyer's address, and records who asked in the audit log, in one transaction.
func (s *Desk) ResendConfirmation(ctx context.Context, orderID int64, by Actor) error {
	r, ok := s.jobs.(ConfirmationResender)
	if !ok {
		return ErrNoJobs
	}
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		o, err := q.OrderLock(ctx, orderID)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrOrderNotFound
		} else if err != nil {
			return err
		}
		if o.Status != db.OrderStatusConfirmed {
			return ErrOrderNotConfirmed
		}
		request := rand.Text()
		if err := r.ResendConfirmation(ctx, tx, o.ID, request); err != nil {
			return err
		}
		return staff.Audit(ctx, tx, by.StaffID, "order.resend", OrderSubject(o.ID), nil,
			map[string]any{"email": o.Email, "request": request}, by.Address)
	})
}
