package booking

import (
	"context"

	"boxoffice/internal/db"
)

// BuyerHolds returns the buyer's live holds on one event, oldest first: what the seat
// page shows as "your hold", with its countdown and the way to checkout. It reads
// fresh rows (two small indexed queries), never the shared map cache, because a
// buyer who just held seats must see them at once.
func (s *Buyer) BuyerHolds(ctx context.Context, eventID int64, buyer string) ([]Hold, error) {
	if buyer == "" {
		return nil, nil
	}
	rows, err := s.q.HoldsOfBuyer(ctx, db.HoldsOfBuyerParams{EventID: eventID, Buyer: buyer})
	if err != nil {
		return nil, translate(err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	holds := make([]Hold, len(rows))
	ids := make([]int64, len(rows))
	at := make(map[int64]int, len(rows))
	for i, r := range rows {
		holds[i] = Hold{ID: HoldID{Event: eventID, Seq: r.ID}, ExpiresAt: r.ExpiresAt, CheckoutBegun: r.CheckoutBegun}
		if r.GaTierID != nil && r.GaQuantity > 0 {
			holds[i].GA = &GAPlaces{TierID: *r.GaTierID, TierName: r.GaTierName, Quantity: int(r.GaQuantity), PriceCents: int(r.GaPriceCents)}
		}
		ids[i] = r.ID
		at[r.ID] = i
	}
	seats, err := s.q.SeatsOfHolds(ctx, db.SeatsOfHoldsParams{EventID: eventID, HoldIds: ids})
	if err != nil {
		return nil, translate(err)
	}
	for _, st := range seats {
		h := &holds[at[st.HoldID]]
		h.Seats = append(h.Seats, Seat{ID: st.ID, Section: st.Section, Row: st.RowLabel, Number: int(st.Number), PriceCents: int(st.PriceCents)})
	}
	// A seat hold whose seats all lapsed between the two reads has nothing left to show.
	out := holds[:0]
	for _, h := range holds {
		if len(h.Seats) > 0 || h.GA != nil {
			out = append(out, h)
		}
	}
	return out, nil
}
