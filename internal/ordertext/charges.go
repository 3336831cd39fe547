package ordertext

import (
	"fmt"

	"boxoffice/internal/booking"
	"boxoffice/views"
)

// ChargeLines itemise what an order charges: each ticket with its type and price,
// the fees per ticket and per order, the voucher's discount, and the tax included,
// for the checkout page, the order page and the emails alike. Charges without lines
// (an order made before orders were itemised) are worded from the seats' own prices.
// The total is ch's, the sum charged.
func ChargeLines(seats []booking.Seat, ga *booking.GAPlaces, ch booking.Charges) ([]views.OrderLine, int) {
	q := ch.Quote
	if len(q.Lines) == 0 {
		return OrderLines(seats, ga)
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
		lines = append(lines, views.OrderLine{Label: label, Price: Euros(int(l.Price))})
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
		lines = append(lines, views.OrderLine{Label: fmt.Sprintf("%s (general admission) · %s × %d", tier, name, gaPlaces[name]), Price: Euros(int(price))})
	}
	if perTicket := q.Fees - q.OrderFee; perTicket > 0 {
		lines = append(lines, views.OrderLine{Label: "Fees per ticket", Price: Euros(int(perTicket))})
	}
	if q.OrderFee > 0 {
		lines = append(lines, views.OrderLine{Label: booking.OrderFeeLabel, Price: Euros(int(q.OrderFee))})
	}
	if q.Discount > 0 {
		lines = append(lines, views.OrderLine{Label: "Voucher " + ch.VoucherCode, Price: Euros(-int(q.Discount))})
	}
	if q.Tax > 0 {
		lines = append(lines, views.OrderLine{Label: q.TaxLabel + " included", Price: Euros(int(q.Tax))})
	}
	return lines, int(q.Total)
}
