package web

import (
	"context"

	"boxoffice/internal/booking"
	"boxoffice/internal/ordertext"
	"boxoffice/views"
)

// adminCharges itemises what order o charged (its order_lines, as the receipt does)
// and names the voucher it redeemed with its discount. An order whose voucher use was
// given back (ended whole) keeps its discount in its lines, without the code.
func (s *server) adminCharges(ctx context.Context, o booking.Order) ([]views.OrderLine, string, error) {
	ch, err := s.Buyer.OrderCharges(ctx, o)
	if err != nil {
		return nil, "", err
	}
	lines, _ := ordertext.ChargeLines(s.Money, o.Seats, o.GA, ch)
	off := "−" + s.Money.Format(int(ch.Quote.Discount))
	switch {
	case ch.VoucherCode != "":
		return lines, ch.VoucherCode + ", " + off, nil
	case ch.Quote.Discount > 0:
		return lines, off + " (the voucher's use was given back)", nil
	}
	return lines, "", nil
}
