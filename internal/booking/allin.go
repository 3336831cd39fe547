package booking

import (
	"context"

	"boxoffice/internal/pricing"
)

// AllInPrices are an event's first prices for an online buyer: each level's lowest
// all-in price (pricing.Config.From) and the per-order fee shown beside it.
type AllInPrices struct {
	// bySeatPrice maps a seat's own price to the lowest all-in price of the price
	// tiers at that price: the map and its summary group seats by their own price.
	bySeatPrice map[int]int
	byGATier    map[int64]int
	// choice marks the seat prices, and gaChoice the GA tiers, at which a buyer
	// chooses among several types: the figure is then the lowest, a "from" price.
	choice   map[int]bool
	gaChoice map[int64]bool
	// OrderFee is charged once per order on top (see package pricing's doc).
	OrderFee int
	// Fees says whether any fee is folded into the prices.
	Fees bool
}

// Seat is the all-in "from" price of a seat whose own price is base.
func (p AllInPrices) Seat(base int) int {
	if v, ok := p.bySeatPrice[base]; ok {
		return v
	}
	return base
}

// SeatChoice reports whether a seat whose own price is base offers several ticket
// types, so that Seat is the lowest of their prices.
func (p AllInPrices) SeatChoice(base int) bool { return p.choice[base] }

// GAChoice reports whether places of GA tier id offer several ticket types, so that
// GA is the lowest of their prices.
func (p AllInPrices) GAChoice(id int64) bool { return p.gaChoice[id] }

// GA is the all-in "from" price of a place of GA tier id, whose own price is base.
func (p AllInPrices) GA(id int64, base int) int {
	if v, ok := p.byGATier[id]; ok {
		return v
	}
	return base
}

// AllInPrices reads an event's first prices for the event page and the map.
func (s *Buyer) AllInPrices(ctx context.Context, eventID int64) (AllInPrices, error) {
	cfg, err := s.priceConfig(ctx, s.pool, eventID)
	if err != nil {
		return AllInPrices{}, err
	}
	levels, err := priceLevels(ctx, s.q, eventID)
	if err != nil {
		return AllInPrices{}, err
	}
	out := AllInPrices{bySeatPrice: map[int]int{}, byGATier: map[int64]int{}, choice: map[int]bool{}, gaChoice: map[int64]bool{}, OrderFee: int(cfg.OrderFee(pricing.MethodOnline))}
	for _, l := range levels {
		from, ok := cfg.From(l.Level, l.BasePrice, pricing.MethodOnline)
		if !ok {
			continue
		}
		several := len(cfg.Offered(l.Level, pricing.MethodOnline, nil)) > 1
		if l.Level.GATierID != 0 {
			out.byGATier[l.Level.GATierID], out.gaChoice[l.Level.GATierID] = int(from), several
			continue
		}
		if cur, seen := out.bySeatPrice[int(l.BasePrice)]; !seen || int(from) < cur {
			out.bySeatPrice[int(l.BasePrice)] = int(from)
		}
		if several {
			out.choice[int(l.BasePrice)] = true
		}
	}
	out.Fees = cfg.Fees.PerTicket+cfg.MethodFees[pricing.MethodOnline].PerTicket > 0
	return out, nil
}
