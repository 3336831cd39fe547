// Package pricedemo gives an event the price list of a real onsale, as staff set it
// on the event's pricing and codes pages: ticket types priced at every level, fees,
// tax and two vouchers. The onsale simulation's events get it (boxoffice seed-stadium,
// and the bench kit's events), so that the crowd buys as buyers of a priced event do.
//
// It goes through booking's Desk, with the Desk's checks and audit entries; booking's
// own tests import internal/demo, so this is a package of its own rather than part of
// demo.
package pricedemo

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/pricing"
)

// The ticket types, by name. Adult is the default (first, and needs nobody); a
// Child needs an Adult in the same order.
const (
	Adult      = "Adult"
	Child      = "Child"
	Concession = "Concession"
)

// The vouchers: Percent takes PercentOffBP off every ticket, as often as it is
// entered; Limited takes LimitedOffCents off the order's tickets, LimitedUses times
// in all, so that buyers race for it.
const (
	PercentCode     = "ONSALE-10"
	PercentOffBP    = 1000
	LimitedCode     = "FIRST-FIVE"
	LimitedOffCents = 1500
	LimitedUses     = 5
)

// The fees and tax: per ticket and per order, for every payment method; the tax is
// included in the prices.
const (
	FeePerTicketCents = 150
	FeePerOrderCents  = 250
	TaxRateBP         = 1900
	TaxLabel          = "VAT"
)

// shares are each type's price as a share of the level's own price, in basis points.
var shares = []struct {
	name                  string
	bp                    int64
	countsAsAdult, needsA bool
}{
	{Adult, 10_000, true, false},
	{Child, 5_000, false, true},
	{Concession, 7_500, false, false},
}

// Apply gives event eventID the price list: its types priced at every level the event
// has (seats' price tiers and standing tiers), the fees, the tax and the vouchers. It
// returns the types' ids by name.
func Apply(ctx context.Context, pool *pgxpool.Pool, eventID int64) (map[string]int64, error) {
	desk := booking.New(pool, booking.Config{}, nil, nil, slog.New(slog.DiscardHandler)).Desk
	by := booking.Actor{}
	setup, err := desk.PriceSetup(ctx, eventID)
	if err != nil {
		return nil, fmt.Errorf("price levels of event %d: %w", eventID, err)
	}
	err = desk.SetPricing(ctx, eventID, booking.PricingInput{TaxRateBP: TaxRateBP, TaxLabel: TaxLabel,
		Fees: map[string]pricing.Fees{booking.FeesAll: {PerTicket: FeePerTicketCents, PerOrder: FeePerOrderCents}}}, by)
	if err != nil {
		return nil, fmt.Errorf("fees and tax: %w", err)
	}
	ids := map[string]int64{}
	for i, s := range shares {
		in := booking.TypeInput{Name: s.name, Position: i, CountsAsAdult: s.countsAsAdult, NeedsAdult: s.needsA,
			Prices: map[pricing.Level]int64{}}
		for _, l := range setup.Levels {
			in.Prices[l.Level] = l.BasePrice * s.bp / 10_000
		}
		if ids[s.name], err = desk.SaveType(ctx, eventID, in, by); err != nil {
			return nil, fmt.Errorf("ticket type %s: %w", s.name, err)
		}
	}
	for _, v := range []booking.VoucherInput{
		{Code: PercentCode, PercentOffBP: PercentOffBP},
		{Code: LimitedCode, AmountOff: LimitedOffCents, Limit: LimitedUses},
	} {
		if _, err := desk.CreateVoucher(ctx, eventID, v, by); err != nil {
			return nil, fmt.Errorf("voucher %s: %w", v.Code, err)
		}
	}
	return ids, nil
}
