package booking

import (
	"context"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
)

// Charges is what an order charged, line by line, as checkout fixed it (order_lines),
// with the voucher it redeemed: what the receipt, the email and the order page
// itemise. An order made before orders were itemised has no Lines.
type Charges struct {
	Quote pricing.Quote
	// VoucherCode is the voucher redeemed; empty: none.
	VoucherCode string
	// AccessCode is the presale code the order's places were counted against, and
	// CodePlaces how many; empty and 0: a public order (or one not confirmed yet).
	AccessCode string
	CodePlaces int
}

// ChargesOf is the itemisation of a basket's quote, before it is an order.
func ChargesOf(bq BasketQuote) Charges {
	code := bq.VoucherCode
	if bq.Quote.VoucherID == 0 {
		code = ""
	}
	return Charges{Quote: bq.Quote, VoucherCode: code}
}

// OrderCharges reads order o's charges. The caller has shown o is the asker's (the
// order's session, its access link, or staff).
func (s *Buyer) OrderCharges(ctx context.Context, o Order) (Charges, error) {
	return s.charges(ctx, o.EventID, o.ID)
}

// charges reads order orderID's charges in one round trip: its lines, the event's tax
// label, the voucher it redeemed and the access code it used, if any.
func (s *store) charges(ctx context.Context, eventID, orderID int64) (Charges, error) {
	var pl db.Pipeline
	lines := pl.OrderLineList(db.OrderLineListParams{EventID: eventID, OrderID: orderID})
	tax := pl.PricingGet(eventID)
	voucher := pl.VoucherRedemptionGet(db.VoucherRedemptionGetParams{EventID: eventID, OrderID: orderID})
	code := pl.AccessCodeUseGet(db.AccessCodeUseGetParams{EventID: eventID, OrderID: orderID})
	if err := pl.Send(ctx, s.pool); err != nil {
		return Charges{}, translate(err)
	}
	if len(lines.Vals) == 0 {
		return Charges{}, nil
	}
	if !tax.Found {
		return Charges{}, translate(pgx.ErrNoRows)
	}
	var out Charges
	q := &out.Quote
	q.TaxLabel = tax.Val.TaxLabel
	for _, r := range lines.Vals {
		q.Fees, q.Discount, q.Tax, q.Total = q.Fees+int64(r.FeeCents), q.Discount+int64(r.DiscountCents), q.Tax+int64(r.TaxCents), q.Total+int64(r.TotalCents)
		if r.Kind != "ticket" {
			q.OrderFee, q.OrderFeeTax = q.OrderFee+int64(r.FeeCents), q.OrderFeeTax+int64(r.TaxCents)
			continue
		}
		l := pricing.LineQuote{TypeName: r.Label, Price: int64(r.PriceCents), Fee: int64(r.FeeCents), Discount: int64(r.DiscountCents),
			Tax: int64(r.TaxCents), Total: int64(r.TotalCents)}
		l.SeatID, l.GATierID, l.TypeID = deref(r.SeatID), deref(r.GaTierID), deref(r.TypeID)
		q.Prices += l.Price
		q.Lines = append(q.Lines, l)
	}
	if voucher.Found {
		out.VoucherCode, q.VoucherID = voucher.Val.Code, voucher.Val.VoucherID
	}
	if code.Found {
		out.AccessCode, out.CodePlaces = code.Val.Code, int(code.Val.Places)
	}
	return out, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
