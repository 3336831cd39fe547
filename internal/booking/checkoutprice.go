package booking

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
)

// OrderFeeLabel labels an order's per-order fee line.
const OrderFeeLabel = "Order fee"

// checkoutQuote prices live hold h for its order from r, its basket read in
// checkout's transaction after its lock: the amount an online buyer is charged is this
// Quote's Total. A basket that breaks a rule (a cap, a type that needs an adult, a
// desk-only type) or whose voucher no longer applies is refused with the pricing
// error, and no order is made. A line whose seat the hold no longer holds (it lapsed,
// and the seat may have gone to another buyer) is the lapse it is (ErrHoldExpired),
// never an order priced without it.
func (s *store) checkoutQuote(ctx context.Context, tx pgx.Tx, r basketRead, h db.HoldLockRow) (pricing.Quote, error) {
	for _, st := range r.seats.Vals {
		if !st.Held {
			return pricing.Quote{}, ErrHoldExpired
		}
	}
	b, err := s.basketOf(ctx, tx, r, h.Buyer)
	if err != nil {
		return pricing.Quote{}, err
	}
	return b.cfg.Quote(pricing.Basket{Lines: b.lines, Method: pricing.MethodOnline, Voucher: b.voucher, Code: b.code, Now: time.Now()})
}

// chargeLines writes order o's lines (one a ticket, then the order fee) and redeems
// its voucher, in the transaction that creates o. The amount to charge is fixed when
// the order is made, so that is where a voucher's use is counted: by VoucherRedeem's
// one conditional statement, so a limited voucher is never used more often than its
// limit. A voucher used up meanwhile refuses the checkout, and the whole transaction
// (the order too) rolls back. An order that lapses unpaid gives the use back
// (releaseVoucher).
func chargeLines(ctx context.Context, q *db.Queries, o db.Order, quote pricing.Quote) error {
	rows := make([]db.OrderLinesAddParams, 0, len(quote.Lines)+1)
	for i, l := range quote.Lines {
		r := db.OrderLinesAddParams{EventID: o.EventID, OrderID: o.ID, Line: int32(i + 1), Kind: "ticket", Label: l.TypeName,
			PriceCents: int32(l.Price), FeeCents: int32(l.Fee), DiscountCents: int32(l.Discount), TaxCents: int32(l.Tax), TotalCents: int32(l.Total)}
		if l.SeatID != 0 {
			r.SeatID = &l.SeatID
		}
		if l.GATierID != 0 {
			r.GaTierID = &l.GATierID
		}
		if l.TypeID != 0 {
			r.TypeID = &l.TypeID
		}
		rows = append(rows, r)
	}
	if quote.OrderFee > 0 {
		rows = append(rows, db.OrderLinesAddParams{EventID: o.EventID, OrderID: o.ID, Line: int32(len(rows) + 1), Kind: "order_fee",
			Label: OrderFeeLabel, FeeCents: int32(quote.OrderFee), TaxCents: int32(quote.OrderFeeTax), TotalCents: int32(quote.OrderFee)})
	}
	if _, err := q.OrderLinesAdd(ctx, rows); err != nil {
		return err
	}
	if quote.VoucherID == 0 {
		return nil
	}
	ok, err := redeemVoucher(ctx, q, o.EventID, quote.VoucherID, o.ID, quote.Discount)
	if err != nil {
		return err
	}
	if !ok {
		return &pricing.VoucherError{Code: voucherCodeOf(ctx, q, o.EventID, quote.VoucherID), Reason: pricing.VoucherUsedUp}
	}
	return nil
}

// voucherCodeOf names a voucher for a message; its id when it cannot be read.
func voucherCodeOf(ctx context.Context, q *db.Queries, eventID, voucherID int64) string {
	vs, err := q.VoucherList(ctx, eventID)
	if err == nil {
		for _, v := range vs {
			if v.ID == voucherID {
				return v.Code
			}
		}
	}
	return "entered"
}

// releaseVoucher gives back the voucher use of order orderID, which sold nothing and
// charged nothing, in the caller's transaction; an order without one changes nothing.
func releaseVoucher(ctx context.Context, q *db.Queries, eventID, orderID int64) error {
	_, err := q.VoucherRedemptionRelease(ctx, db.VoucherRedemptionReleaseParams{EventID: eventID, OrderID: orderID})
	return err
}
