package ordertext

import (
	"fmt"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/views"
)

// ChargeLines itemise what an order charges: each ticket with its type and price,
// the fees per ticket and per order, the voucher's discount, and the tax included,
// for the checkout page, the order page and the emails alike. Charges without lines
// (an order made before orders were itemised) are worded from the seats' own prices.
// Amounts are written as m writes them; the total is ch's, the sum charged.
func ChargeLines(m money.Shop, seats []booking.Seat, ga *booking.GAPlaces, ch booking.Charges) ([]views.OrderLine, int) {
	q := ch.Quote
	if len(q.Lines) == 0 {
		return OrderLines(m, seats, ga)
	}
	var lines []views.OrderLine
	gaPlaces := map[string]int{}
	var gaTypes []string
	for _, l := range q.Lines {
		if l.SeatID == 0 {
			if gaPlaces[l.TypeName] == 0 {
				gaTypes = append(gaTypes, l.TypeName)
			}
			gaPlaces[l.TypeName]++
			continue
		}
		label := l.TypeName
		for _, st := range seats {
			if st.ID == l.SeatID {
				label = SeatLabel(st) + " · " + l.TypeName
			}
		}
		lines = append(lines, views.OrderLine{Label: label, Price: m.Format(int(l.Price))})
	}
	for _, name := range gaTypes {
		price := int64(0)
		for _, l := range q.Lines {
			if l.SeatID == 0 && l.TypeName == name {
				price += l.Price
			}
		}
		tier := "Standing"
		if ga != nil {
			tier = ga.TierName
		}
		lines = append(lines, views.OrderLine{Label: fmt.Sprintf("%s (general admission) · %s × %d", tier, name, gaPlaces[name]), Price: m.Format(int(price))})
	}
	if perTicket := q.Fees - q.OrderFee; perTicket > 0 {
		lines = append(lines, views.OrderLine{Label: "Fees per ticket", Price: m.Format(int(perTicket))})
	}
	if q.OrderFee > 0 {
		lines = append(lines, views.OrderLine{Label: booking.OrderFeeLabel, Price: m.Format(int(q.OrderFee))})
	}
	if q.Discount > 0 {
		lines = append(lines, views.OrderLine{Label: "Voucher " + ch.VoucherCode, Price: m.Format(-int(q.Discount))})
	}
	if q.Tax > 0 {
		lines = append(lines, views.OrderLine{Label: q.TaxLabel + " included", Price: m.Format(int(q.Tax))})
	}
	return lines, int(q.Total)
}
