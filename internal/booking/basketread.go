package booking

import (
	"context"
	"sync"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
)

// A basket is read in one round trip: the hold with everything that prices it
// (HoldBasket: its GA tier, access code, voucher, GA types and its event's price
// configuration version) and its seats (HoldBasketSeats: the answer's seats and the
// priced lines, from one statement), queued together. The event's price configuration
// itself is kept in the process under its version (priceConfigs) and read again only
// when the version the basket's read saw is not the one kept.

// priceConfigs keeps each event's price configuration under its version
// (event_price_versions), as its last read found it. Every change to what
// priceConfig reads raises the version in the changing transaction (a trigger), so a
// basket read that sees the change sees the new version, misses and reads the
// configuration again: a change is priced by the very next quote and checkout. A kept
// configuration is shared and never changed once kept. The zero value is ready.
type priceConfigs struct {
	mu      sync.RWMutex
	byEvent map[int64]keptConfig
}

type keptConfig struct {
	version int64
	cfg     pricing.Config
}

// get returns the event's configuration at version, if it is the one kept.
func (c *priceConfigs) get(event, version int64) (pricing.Config, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k, ok := c.byEvent[event]
	if !ok || k.version != version {
		return pricing.Config{}, false
	}
	return k.cfg, true
}

// put keeps cfg as the event's configuration at version, unless a later one is kept.
// Version 0 (an event without a version row) is never kept.
func (c *priceConfigs) put(event, version int64, cfg pricing.Config) {
	if version == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byEvent == nil {
		c.byEvent = map[int64]keptConfig{}
	}
	if k, ok := c.byEvent[event]; !ok || k.version < version {
		c.byEvent[event] = keptConfig{version: version, cfg: cfg}
	}
}

// priceConfigAt is the event's price configuration at version (as a statement of the
// caller's saw it): the one kept, or else read through dbtx (the pool, or the
// caller's transaction) in one round trip and kept under the version that read saw,
// which is at least version.
func (s *store) priceConfigAt(ctx context.Context, dbtx db.DBTX, event, version int64) (pricing.Config, error) {
	if cfg, ok := s.prices.get(event, version); ok {
		return cfg, nil
	}
	return s.priceConfig(ctx, dbtx, event)
}

// basketRead is a basket's statements queued on a pipeline; their results are there
// once it is sent.
type basketRead struct {
	id    HoldID
	row   *db.Row[db.HoldBasketRow]
	seats *db.Rows[db.HoldBasketSeatsRow]
}

// queueBasket queues the read of hold id's basket on pl. In a transaction, queue it
// after the hold's lock: it then reads the basket as the lock left it.
func queueBasket(pl *db.Pipeline, id HoldID) basketRead {
	return basketRead{
		id:    id,
		row:   pl.HoldBasket(db.HoldBasketParams{EventID: id.Event, ID: id.Seq}),
		seats: pl.HoldBasketSeats(db.HoldBasketSeatsParams{EventID: id.Event, HoldID: id.Seq}),
	}
}

// readBasket reads the basket of buyer's live hold id on the pool, in one round trip:
// a hold that is not theirs is ErrHoldNotFound, one not live ErrHoldExpired.
func (s *store) readBasket(ctx context.Context, id HoldID, buyer string) (basketRead, error) {
	r, err := sendBasket(ctx, s.pool, id)
	if err != nil {
		return basketRead{}, translate(err)
	}
	return r, r.check(buyer)
}

// sendBasket reads hold id's basket through dbtx, in one round trip, unchecked.
func sendBasket(ctx context.Context, dbtx db.DBTX, id HoldID) (basketRead, error) {
	var pl db.Pipeline
	r := queueBasket(&pl, id)
	return r, pl.Send(ctx, dbtx)
}

// lockedBasket is hold id locked (HoldLock), its order if it has one, and its basket
// read as the lock left it, queued on a pipeline: a checkout and a change of the
// basket's price begin with them.
type lockedBasket struct {
	hold  *db.Row[db.HoldLockRow]
	order *db.Row[db.Order]
	basketRead
}

// queueLockedBasket queues the lock and the reads of lockedBasket on pl, in that order.
func queueLockedBasket(pl *db.Pipeline, id HoldID) lockedBasket {
	return lockedBasket{
		hold:       pl.HoldLock(db.HoldLockParams{EventID: id.Event, ID: id.Seq}),
		order:      pl.OrderByHold(db.OrderByHoldParams{EventID: id.Event, HoldID: id.Seq}),
		basketRead: queueBasket(pl, id),
	}
}

// check refuses a hold that is not buyer's (ErrHoldNotFound) or not live
// (ErrHoldExpired), as GetHold does.
func (r basketRead) check(buyer string) error {
	switch {
	case !r.row.Found || r.row.Val.Buyer != buyer:
		return ErrHoldNotFound
	case !r.row.Val.Live:
		return ErrHoldExpired
	}
	return nil
}

// held is the seats the hold still has (seat_is_held), as SeatsOfHold reads them.
func (r basketRead) held() []db.HoldBasketSeatsRow {
	out := make([]db.HoldBasketSeatsRow, 0, len(r.seats.Vals))
	for _, st := range r.seats.Vals {
		if st.Held {
			out = append(out, st)
		}
	}
	return out
}

// ga is the hold's GA places; nil when it has none.
func (r basketRead) ga() *GAPlaces {
	h := r.row.Val
	if h.GaTierID == nil {
		return nil
	}
	g := &GAPlaces{TierID: *h.GaTierID, Quantity: int(h.GaQuantity)}
	if h.GaTierName != nil && h.GaPriceCents != nil {
		g.TierName, g.PriceCents = *h.GaTierName, int(*h.GaPriceCents)
	}
	return g
}

// hold is the read hold as GetHold answers it.
func (r basketRead) hold() Hold {
	held := r.held()
	out := Hold{ID: r.id, ExpiresAt: r.row.Val.ExpiresAt, Seats: make([]Seat, len(held)), GA: r.ga()}
	for i, st := range held {
		out.Seats[i] = basketSeat(st)
	}
	return out
}

// basketSeat is a basket's seat row as a Seat (its type and price tier aside, which
// seatsOf's rows do not have).
func basketSeat(st db.HoldBasketSeatsRow) Seat {
	return Seat{ID: st.ID, Section: st.Section, Row: st.RowLabel, Number: int(st.Number), PriceCents: int(st.PriceCents)}
}

// basketOf is the basket r read, for buyer (the access code counts only when the hold
// is theirs), priced by its event's configuration at the version r saw: the one kept,
// or read through dbtx.
func (s *store) basketOf(ctx context.Context, dbtx db.DBTX, r basketRead, buyer string) (basket, error) {
	h := r.row.Val
	cfg, err := s.priceConfigAt(ctx, dbtx, r.id.Event, h.PriceVersion)
	if err != nil {
		return basket{}, err
	}
	b := basket{cfg: cfg}
	for _, st := range r.seats.Vals {
		b.lines = append(b.lines, pricing.Line{SeatID: st.ID, Level: pricing.Level{PriceTierID: st.PriceTierID},
			BasePrice: int64(st.PriceCents), TypeID: st.TypeID})
	}
	if h.GaTierID != nil && h.GaQuantity > 0 {
		if h.GaPriceCents == nil {
			return basket{}, ErrGATierNotFound
		}
		b.lines = gaLines(h, b.lines)
	}
	if h.CodeID != nil && h.Buyer == buyer {
		c := accessCodeOf(*h.CodeID, *h.Code, *h.PresaleStartsAt, *h.PresaleEndsAt, h.Quota, *h.PlacesUsed, h.RevealsTypeID, *h.CodePaused)
		b.code = &c
	}
	if h.VoucherID != nil {
		v := voucherOf(db.VoucherByCodeRow{ID: *h.VoucherID, Code: *h.VoucherCode, AmountOffCents: h.AmountOffCents,
			PercentOffBp: h.PercentOffBp, TypeIds: h.TypeIds, UsageLimit: h.UsageLimit, Used: *h.Used,
			ValidFrom: h.ValidFrom, ValidUntil: h.ValidUntil, Paused: *h.VoucherPaused})
		b.voucher = &v
	}
	return b, nil
}

// gaLines appends hold h's GA places to lines, one line a place: as many of each type
// as hold_ga_types says (never more than the hold's places in all), the rest without
// a chosen type.
func gaLines(h db.HoldBasketRow, lines []pricing.Line) []pricing.Line {
	tier, qty := *h.GaTierID, int(h.GaQuantity)
	place := pricing.Line{GATierID: tier, Level: pricing.Level{GATierID: tier}, BasePrice: int64(*h.GaPriceCents)}
	for i, typeID := range h.GaTypeIds {
		for n := 0; n < int(h.GaTypeQuantities[i]) && qty > 0 && h.GaTypeTiers[i] == tier; n++ {
			l := place
			l.TypeID = typeID
			lines, qty = append(lines, l), qty-1
		}
	}
	for ; qty > 0; qty-- {
		lines = append(lines, place)
	}
	return lines
}
