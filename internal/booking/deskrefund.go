package booking

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// The desk's side of staff refunds: what a refund or void will do, shown before it is
// confirmed (PreviewStaffRefund); the money of a box-office sale given back at the
// desk by its own method (refundAtDesk); and the confirmation's key, which makes a
// confirmation submitted twice end the tickets once.

// MethodCard is how the money of a payment through the provider goes back: to the
// card it came from, by the provider.
const MethodCard = "card"

// Errors of the desk's refunds.
var (
	// ErrInvalidStaffRefund: no tickets chosen and not the whole order, both, an
	// unknown kind or a bad key; the error says which.
	ErrInvalidStaffRefund = errors.New("invalid staff refund")
	// ErrRefundKeyUsed: the confirmation's key confirmed another refund or void.
	ErrRefundKeyUsed = errors.New("this confirmation was used for another refund or void")
)

// check refuses a request that does not say what to end.
func (r StaffRefundRequest) check() error {
	switch {
	case r.Kind != KindRefund && r.Kind != KindVoid:
		return invalid(ErrInvalidStaffRefund, "choose refund or void")
	case r.Whole && len(r.TicketIDs) > 0:
		return invalid(ErrInvalidStaffRefund, "choose tickets or the whole order, not both")
	case !r.Whole && len(r.TicketIDs) == 0:
		return &InvalidError{Kind: ErrInvalidStaffRefund, Code: "no_tickets",
			Reason: "no ticket was chosen: tick the tickets to " + string(r.Kind) + ", or use the whole-order button"}
	case r.Key != "" && (len(r.Key) < 16 || len(r.Key) > 64):
		return invalid(ErrInvalidStaffRefund, "the confirmation's key is missing; start again from the order")
	}
	return nil
}

// StaffRefundPreview is what a staff refund or void will do, for the member to
// confirm: the tickets it ends, the money that goes back and how.
type StaffRefundPreview struct {
	OrderID     int64
	Kind        RefundKind
	Tickets     []AdminTicket
	AmountCents int    // what goes back; 0 for a void
	Method      string // as StaffRefundResult.Method
	Whole       bool   // no valid ticket is left after it
}

// TicketIDs are the ids of the tickets the preview ends, for the confirmation.
func (p StaffRefundPreview) TicketIDs() []int64 {
	ids := make([]int64, len(p.Tickets))
	for i, t := range p.Tickets {
		ids[i] = t.ID
	}
	return ids
}

// PreviewStaffRefund says what StaffRefund would do with req now, changing nothing,
// with the errors StaffRefund would answer. The confirmation names the tickets it
// shows (not Whole), so that it ends what the member saw.
func (s *Desk) PreviewStaffRefund(ctx context.Context, req StaffRefundRequest) (StaffRefundPreview, error) {
	if err := req.check(); err != nil {
		return StaffRefundPreview{}, err
	}
	o, err := s.q.OrderGet(ctx, req.OrderID)
	if errors.Is(err, pgx.ErrNoRows) {
		return StaffRefundPreview{}, ErrOrderNotFound
	} else if err != nil {
		return StaffRefundPreview{}, translate(err)
	}
	if o.Status != db.OrderStatusConfirmed {
		return StaffRefundPreview{}, ErrOrderNotConfirmed
	}
	rows, err := s.q.TicketsOfOrderAdmin(ctx, db.TicketsOfOrderAdminParams{EventID: o.EventID, OrderID: o.ID})
	if err != nil {
		return StaffRefundPreview{}, translate(err)
	}
	byID := map[int64]AdminTicket{}
	var valid []int64
	for _, r := range rows {
		if t := adminTicket(r); t.Valid() {
			byID[t.ID], valid = t, append(valid, t.ID)
		}
	}
	p := StaffRefundPreview{OrderID: o.ID, Kind: req.Kind}
	var missing []int64
	for _, id := range ticketsToEnd(req, valid) {
		t, ok := byID[id]
		if !ok || t.CheckedInAt != nil {
			missing = append(missing, id)
			continue
		}
		p.Tickets = append(p.Tickets, t)
		p.AmountCents += t.PriceCents
	}
	if len(missing) > 0 || len(p.Tickets) == 0 {
		return StaffRefundPreview{}, &TicketsUnavailableError{TicketIDs: missing}
	}
	p.Whole = len(p.Tickets) == len(valid)
	if req.Kind == KindVoid {
		p.AmountCents = 0
		return p, nil
	}
	if p.AmountCents, err = withOrderFee(ctx, s.q, o.EventID, o.ID, p.AmountCents, p.Whole); err != nil {
		return StaffRefundPreview{}, translate(err)
	}
	p.Method, err = s.refundMethod(ctx, o, p.AmountCents)
	return p, err
}

// refundMethod is how amount of the order's money would go back, "" for none, with
// the errors recordStaffRefund would answer.
func (s *store) refundMethod(ctx context.Context, o db.Order, amount int) (string, error) {
	if amount <= 0 {
		return "", nil
	}
	if o.PaymentID == nil {
		return "", ErrNoPaymentToRefund
	}
	kept, err := s.q.PaymentKept(ctx, db.PaymentKeptParams{OrderID: o.ID, ProviderPaymentID: *o.PaymentID})
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !s.refundable(kept.Provider)) {
		return "", ErrNoPaymentToRefund
	} else if err != nil {
		return "", translate(err)
	}
	if int(kept.AmountCents-kept.RefundedCents) < amount {
		return "", ErrRefundTooLarge
	}
	if kept.Provider == BoxOfficeProvider {
		return kept.StateReason, nil
	}
	return MethodCard, nil
}

// refundAtDesk records the refund of amount of a box-office payment (cash, or a card
// present at the window) as given back at the desk by the member staffID, now: done
// as it is recorded, with no provider to ask and no job. The payment is marked
// refunded when its refunds add up to it.
func refundAtDesk(ctx context.Context, q *db.Queries, o db.Order, kept db.Payment, amount int, staffID *int64) (int64, error) {
	if staffID == nil {
		return 0, errors.New("a refund at the desk needs the member of staff who gives the money back")
	}
	id, err := q.RefundCreateForTickets(ctx, db.RefundCreateForTicketsParams{
		OrderID: o.ID, PaymentID: kept.ID, AmountCents: int32(amount), Reason: ReasonStaffRefund,
		IdempotencyKey: "desk_refund_" + rand.Text(), StaffID: staffID, State: db.RefundStateSucceeded,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrRefundTooLarge
	} else if err != nil {
		return 0, err
	}
	return id, q.PaymentMarkRefunded(ctx, kept.ID)
}

// confirmedBefore finds the confirmation of req's Key, if it was confirmed before:
// found, with that confirmation's result. A key of another order or kind is
// ErrRefundKeyUsed.
func confirmedBefore(ctx context.Context, q *db.Queries, req StaffRefundRequest) (StaffRefundResult, bool, error) {
	if req.Key == "" {
		return StaffRefundResult{}, false, nil
	}
	r, err := q.StaffRefundRequestGet(ctx, req.Key)
	if errors.Is(err, pgx.ErrNoRows) {
		return StaffRefundResult{}, false, nil
	} else if err != nil {
		return StaffRefundResult{}, false, err
	}
	if r.OrderID != req.OrderID || r.Kind != string(req.Kind) {
		return StaffRefundResult{}, true, ErrRefundKeyUsed
	}
	return StaffRefundResult{Tickets: slices.Clone(r.TicketIds), AmountCents: int(r.AmountCents), Method: r.Method,
		Status: r.Status, Whole: r.Status != string(db.OrderStatusConfirmed), Replayed: true}, true, nil
}

// recordConfirmation records what the confirmation under req's Key did, in its
// transaction (the key's primary key backstops the order's lock).
func recordConfirmation(ctx context.Context, q *db.Queries, req StaffRefundRequest, staffID *int64, res StaffRefundResult) error {
	if req.Key == "" {
		return nil
	}
	return q.StaffRefundRequestRecord(ctx, db.StaffRefundRequestRecordParams{Key: req.Key, OrderID: req.OrderID,
		Kind: string(req.Kind), StaffID: staffID, TicketIds: res.Tickets, AmountCents: int32(res.AmountCents),
		Method: res.Method, Status: res.Status})
}
