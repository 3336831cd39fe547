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
// error, and no order is made. Every seat of r is still held (Checkout checks it).
func (s *store) checkoutQuote(ctx context.Context, tx pgx.Tx, r basketRead, h db.HoldLockRow) (pricing.Quote, error) {
	b, err := s.basketOf(ctx, tx, r, h.Buyer)
	if err != nil {
		return pricing.Quote{}, err
	}
	return b.cfg.Quote(pricing.Basket{Lines: b.lines, Method: pricing.MethodOnline, Voucher: b.voucher, Code: b.code, Now: time.Now()})
}

// withLines puts quote's lines into p, for OrderCreate to write with the order: one
// a ticket, then the order fee. The amount to charge is fixed when the order is made,
// so that is where its lines are written.
func withLines(p *db.OrderCreateParams, quote pricing.Quote) {
	n := len(quote.Lines) + 1
	p.LinesKind, p.LinesLabel = make([]string, 0, n), make([]string, 0, n)
	p.LinesSeatID, p.LinesGaTierID, p.LinesTypeID = make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	p.LinesPriceCents, p.LinesFeeCents, p.LinesDiscountCents = make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n)
	p.LinesTaxCents, p.LinesTotalCents = make([]int32, 0, n), make([]int32, 0, n)
	add := func(kind, label string, seat, tier, typ, price, fee, discount, tax, total int64) {
		p.LinesKind, p.LinesLabel = append(p.LinesKind, kind), append(p.LinesLabel, label)
		p.LinesSeatID, p.LinesGaTierID, p.LinesTypeID = append(p.LinesSeatID, seat), append(p.LinesGaTierID, tier), append(p.LinesTypeID, typ)
		p.LinesPriceCents, p.LinesFeeCents = append(p.LinesPriceCents, int32(price)), append(p.LinesFeeCents, int32(fee))
		p.LinesDiscountCents, p.LinesTaxCents = append(p.LinesDiscountCents, int32(discount)), append(p.LinesTaxCents, int32(tax))
		p.LinesTotalCents = append(p.LinesTotalCents, int32(total))
	}
	for _, l := range quote.Lines {
		add("ticket", l.TypeName, l.SeatID, l.GATierID, l.TypeID, l.Price, l.Fee, l.Discount, l.Tax, l.Total)
	}
	if quote.OrderFee > 0 {
		add("order_fee", OrderFeeLabel, 0, 0, 0, 0, quote.OrderFee, 0, quote.OrderFeeTax, quote.OrderFee)
	}
}

// chargeVoucher redeems order o's voucher (quote's, if any), in the transaction that
// creates o: a voucher's use is counted where the amount is fixed, by VoucherRedeem's
// one conditional statement, so a limited voucher is never used more often than its
// limit. A voucher used up meanwhile refuses the checkout, and the whole transaction
// (the order too) rolls back. An order that lapses unpaid gives the use back
// (releaseVoucher).
func chargeVoucher(ctx context.Context, q *db.Queries, o db.Order, quote pricing.Quote) error {
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
