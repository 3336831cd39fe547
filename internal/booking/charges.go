package booking

import (
	"context"
	"errors"

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

func (s *store) charges(ctx context.Context, eventID, orderID int64) (Charges, error) {
	rows, err := s.q.OrderLineList(ctx, db.OrderLineListParams{EventID: eventID, OrderID: orderID})
	if err != nil || len(rows) == 0 {
		return Charges{}, translate(err)
	}
	p, err := s.q.PricingGet(ctx, eventID)
	if err != nil {
		return Charges{}, translate(err)
	}
	var out Charges
	q := &out.Quote
	q.TaxLabel = p.TaxLabel
	for _, r := range rows {
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
	v, err := s.q.VoucherRedemptionGet(ctx, db.VoucherRedemptionGetParams{EventID: eventID, OrderID: orderID})
	if err == nil {
		out.VoucherCode, q.VoucherID = v.Code, v.VoucherID
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return Charges{}, translate(err)
	}
	c, err := s.q.AccessCodeUseGet(ctx, db.AccessCodeUseGetParams{EventID: eventID, OrderID: orderID})
	if err == nil {
		out.AccessCode, out.CodePlaces = c.Code, int(c.Places)
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return Charges{}, translate(err)
	}
	return out, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
