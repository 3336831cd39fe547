package booking

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
	"boxoffice/internal/staff"
)

// codePattern is what a voucher or access code may be, upper-cased (the tables'
// CHECK says the same).
var codePattern = regexp.MustCompile(`^[A-Z0-9][A-Z0-9-]{2,39}$`)

// NormalCode is a code as stored and looked up: trimmed and upper-cased.
func NormalCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// ErrCodeNotFound is a voucher or access code id the event does not have.
var ErrCodeNotFound = errors.New("code not found")

// VoucherInput is a new voucher as staff set it: AmountOff or PercentOffBP; Limit 0
// and zero times mean unlimited.
type VoucherInput struct {
	Code                  string
	AmountOff             int64
	PercentOffBP          int
	TypeIDs               []int64
	Limit                 int
	ValidFrom, ValidUntil time.Time
}

func (in VoucherInput) validate() error {
	switch {
	case !codePattern.MatchString(in.Code):
		return InvalidPricing("a code is 3 to 40 letters, digits or dashes")
	case (in.AmountOff > 0) == (in.PercentOffBP > 0):
		return InvalidPricing("a voucher takes either an amount or a percentage off")
	case in.AmountOff < 0 || in.AmountOff > MaxPrice || in.PercentOffBP < 0 || in.PercentOffBP > 10_000:
		return InvalidPricing("an amount off is up to 1,000,000.00 and a percentage up to 100")
	case in.Limit < 0 || in.Limit > 1_000_000:
		return InvalidPricing("the usage limit is a whole number from 0 (none) to 1,000,000")
	case !in.ValidFrom.IsZero() && !in.ValidUntil.IsZero() && !in.ValidUntil.After(in.ValidFrom):
		return InvalidPricing("a voucher must end after it starts")
	}
	return nil
}

func nonZero[T int | int64](v T) *int32 {
	if v == 0 {
		return nil
	}
	n := int32(v)
	return &n
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// CreateVoucher makes a voucher for an event, with its audit entry.
func (s *Desk) CreateVoucher(ctx context.Context, eventID int64, in VoucherInput, by Actor) (int64, error) {
	in.Code = NormalCode(in.Code)
	if err := in.validate(); err != nil {
		return 0, err
	}
	var id int64
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if err := typesOfEvent(ctx, q, eventID, in.TypeIDs...); err != nil {
			return err
		}
		var err error
		id, err = q.VoucherCreate(ctx, db.VoucherCreateParams{EventID: eventID, Code: in.Code, AmountOffCents: nonZero(in.AmountOff),
			PercentOffBp: nonZero(in.PercentOffBP), TypeIds: append([]int64{}, in.TypeIDs...), UsageLimit: nonZero(in.Limit),
			ValidFrom: optTime(in.ValidFrom), ValidUntil: optTime(in.ValidUntil)})
		if errors.Is(err, pgx.ErrNoRows) {
			return InvalidPricing("this event already has a voucher %s", in.Code)
		} else if err != nil {
			return err
		}
		return staff.Audit(ctx, tx, by.StaffID, "voucher.create", PricingSubject(eventID), nil, in, by.Address)
	})
	return id, err
}

// typesOfEvent checks that ids are ticket types of the event (which must exist).
func typesOfEvent(ctx context.Context, q *db.Queries, eventID int64, ids ...int64) error {
	if _, err := q.PricingGet(ctx, eventID); errors.Is(err, pgx.ErrNoRows) {
		return ErrEventNotFound
	} else if err != nil {
		return err
	}
	types, err := q.TicketTypeList(ctx, eventID)
	if err != nil {
		return err
	}
next:
	for _, id := range ids {
		for _, t := range types {
			if t.ID == id {
				continue next
			}
		}
		return InvalidPricing("ticket type %d is not a type of this event", id)
	}
	return nil
}

// VoucherRow is a voucher as the staff's list shows it.
type VoucherRow struct {
	pricing.Voucher
	Created time.Time
}

// Vouchers lists an event's vouchers by code, with their use counts.
func (s *Desk) Vouchers(ctx context.Context, eventID int64) ([]VoucherRow, error) {
	rows, err := s.q.VoucherList(ctx, eventID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]VoucherRow, len(rows))
	for i, r := range rows {
		out[i] = VoucherRow{Voucher: voucherOf(db.VoucherByCodeRow(r)), Created: r.CreatedAt}
	}
	return out, nil
}

func voucherOf(r db.VoucherByCodeRow) pricing.Voucher {
	v := pricing.Voucher{ID: r.ID, Code: r.Code, TypeIDs: r.TypeIds, Used: int(r.Used), Paused: r.Paused}
	if r.AmountOffCents != nil {
		v.AmountOff = int64(*r.AmountOffCents)
	}
	if r.PercentOffBp != nil {
		v.PercentOffBP = int(*r.PercentOffBp)
	}
	if r.UsageLimit != nil {
		v.Limit = int(*r.UsageLimit)
	}
	if r.ValidFrom != nil {
		v.ValidFrom = *r.ValidFrom
	}
	if r.ValidUntil != nil {
		v.ValidUntil = *r.ValidUntil
	}
	return v
}

// SetVoucherPaused pauses a voucher (no basket may use it, and its redemption at
// confirmation fails) or resumes it.
func (s *Desk) SetVoucherPaused(ctx context.Context, eventID, id int64, paused bool, by Actor) error {
	return s.setPaused(ctx, "voucher.pause", eventID, id, paused, by, func(q *db.Queries) (int64, error) {
		return q.VoucherSetPaused(ctx, db.VoucherSetPausedParams{EventID: eventID, ID: id, Paused: paused})
	})
}

// setPaused runs a pause statement and its audit entry in one transaction.
func (s *Desk) setPaused(ctx context.Context, action string, eventID, id int64, paused bool, by Actor, set func(*db.Queries) (int64, error)) error {
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		n, err := set(q)
		if err != nil {
			return err
		} else if n == 0 {
			return ErrCodeNotFound
		}
		return staff.Audit(ctx, tx, by.StaffID, action, PricingSubject(eventID), nil, map[string]any{"id": id, "paused": paused}, by.Address)
	})
}

// redeemVoucher counts voucher voucherID's use by order orderID, in the caller's
// transaction at confirmation: true if the voucher was not paused, valid by the
// database clock and below its limit, and is now counted. false: the order may not
// have the discount (and the caller refuses or re-prices it). Many buyers racing for
// the last use get exactly one true between them (VoucherRedeem).
func redeemVoucher(ctx context.Context, q *db.Queries, eventID, voucherID, orderID, discount int64) (bool, error) {
	n, err := q.VoucherRedeem(ctx, db.VoucherRedeemParams{EventID: eventID, VoucherID: voucherID, OrderID: orderID, DiscountCents: int32(discount)})
	return n == 1, translate(err)
}
