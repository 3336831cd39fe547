package booking

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/pricing"
)

// A box-office sale is priced as an online basket is, by pricing.Config.Quote, for the
// window's payment method: its fees are the method's, and desk-only types (companion
// seats) are offered. Staff say how many tickets of each type the buyer wants
// (Sale.Types); the sale's lines take them in line order, each line the first type
// asked for that is offered at its level, and the lines left over take the level's
// default type.

// DeskTypes are the types the window may sell for an event, in order: every type not
// paused, desk-only ones too; code-only ones stay with their codes' holders.
func (s *Desk) DeskTypes(ctx context.Context, eventID int64) ([]pricing.Type, error) {
	cfg, err := s.priceConfig(ctx, s.pool, eventID)
	if err != nil {
		return nil, err
	}
	var out []pricing.Type
	for _, t := range cfg.Types {
		if !t.Paused && !t.CodeOnly {
			out = append(out, t)
		}
	}
	return out, nil
}

// saleQuote prices hold h of the sale in its transaction tx: the amount the window takes.
func (s *store) saleQuote(ctx context.Context, tx pgx.Tx, sl Sale, buyer string, h Hold) (pricing.Quote, error) {
	r, err := sendBasket(ctx, tx, h.ID)
	if err != nil {
		return pricing.Quote{}, err
	}
	if !r.row.Found {
		return pricing.Quote{}, ErrHoldNotFound
	}
	b, err := s.basketOf(ctx, tx, r, buyer)
	if err != nil {
		return pricing.Quote{}, err
	}
	m := pricing.Method(sl.Method)
	if len(sl.Types) > 0 {
		if !b.cfg.Typed() {
			return pricing.Quote{}, invalid(ErrInvalidSale, "this event sells each seat at one price, without ticket types")
		}
		if err := assignTypes(b.cfg, b.lines, sl.Types, m); err != nil {
			return pricing.Quote{}, err
		}
	}
	return b.cfg.Quote(pricing.Basket{Lines: b.lines, Method: m, Now: time.Now()})
}

// assignTypes gives lines the types asked for (counts by type id), in line order:
// each line the first type with tickets left to give that is offered at its level by
// method m. Tickets that find no line are an input error: more than the sale has, or
// a type not offered at the window for these seats.
func assignTypes(cfg pricing.Config, lines []pricing.Line, counts map[int64]int, m pricing.Method) error {
	left := map[int64]int{}
	var order []int64
	for _, t := range cfg.Types {
		if n := counts[t.ID]; n > 0 {
			left[t.ID] = n
			order = append(order, t.ID)
		}
	}
	for id, n := range counts {
		if n < 0 || (n > 0 && !slices.Contains(order, id)) {
			return invalid(ErrInvalidSale, "a ticket type asked for is not one of this event's, or its count is below zero")
		}
	}
	for i := range lines {
		for _, t := range cfg.Offered(lines[i].Level, m, nil) {
			if left[t.ID] > 0 {
				lines[i].TypeID = t.ID
				left[t.ID]--
				break
			}
		}
	}
	for _, n := range left {
		if n > 0 {
			return invalid(ErrInvalidSale, "the ticket types add up to more tickets than the sale has, or one is not sold for these seats")
		}
	}
	return nil
}
