package web

import (
	"context"
	"fmt"

	"boxoffice/internal/booking"
	"boxoffice/internal/ordertext"
	"boxoffice/views"
)

// adminCharges puts on m what order o charged (its order_lines, as the receipt does),
// the voucher it redeemed with its discount, and the presale code its places were
// counted against. An order whose voucher use was given back (ended whole) keeps its
// discount in its lines, without the code.
func (s *server) adminCharges(ctx context.Context, o booking.Order, m *views.AdminOrder) error {
	ch, err := s.Buyer.OrderCharges(ctx, o)
	if err != nil {
		return err
	}
	m.Lines, _ = ordertext.ChargeLines(s.Money, o.Seats, o.GA, ch)
	off := "−" + s.Money.Format(int(ch.Quote.Discount))
	switch {
	case ch.VoucherCode != "":
		m.Voucher = ch.VoucherCode + ", " + off
	case ch.Quote.Discount > 0:
		m.Voucher = off + " (the voucher's use was given back)"
	}
	if ch.AccessCode != "" {
		m.AccessCode = fmt.Sprintf("%s, %d of its places", ch.AccessCode, ch.CodePlaces)
	}
	return nil
}
