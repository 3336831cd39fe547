package web

import (
	"context"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
)

// allInTTL is how long an event's first prices are kept in memory. Every page with
// the map and every batch of the live stream reads them (the seats' labels say the
// price all in), so they are read from the database once per event and instance in
// this time, not once per rendering; a price staff change shows within it.
const allInTTL = 5 * time.Second

// allInPrices are an event's first prices for an online buyer (booking.AllInPrices),
// at most allInTTL old.
func (s *server) allInPrices(ctx context.Context, eventID int64) (booking.AllInPrices, error) {
	return s.allIn.get(ctx, eventID, func(ctx context.Context) (booking.AllInPrices, error) {
		return s.Buyer.AllInPrices(ctx, eventID)
	})
}

// seatPriceText is a seat's price as its label reads it: the all-in figure the map's
// key gives its price ("€21.75 incl. fees"), "from" when the buyer chooses among
// several types. The zero AllInPrices (the staff map) reads the seat's own price.
func seatPriceText(shop money.Shop, base int, prices booking.AllInPrices) string {
	return allInFigure(shop, prices.Seat(base), prices.SeatChoice(base), prices.Fees)
}

// gaPriceText is a standing place's price as the seat page's standing form says it:
// the figure the event page gives its tier, "from" and "incl. fees" as for seats.
func gaPriceText(shop money.Shop, t booking.GATier, prices booking.AllInPrices) string {
	return allInFigure(shop, prices.GA(t.ID, t.PriceCents), prices.GAChoice(t.ID), prices.Fees) + " each"
}

func allInFigure(shop money.Shop, cents int, choice, fees bool) string {
	t := shop.Short(cents)
	if choice {
		t = "from " + t
	}
	if fees {
		t += " incl. fees"
	}
	return t
}
