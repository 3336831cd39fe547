package booking

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
)

// A basket's price: each line's ticket type, chosen beside the hold (hold_seat_types,
// hold_ga_types) and the voucher entered (hold_vouchers). None of these touches the
// seat row: choosing a type or a voucher never changes who holds a seat. They are
// refused once checkout has begun, since the order's amount is fixed from them.

// ErrInvalidBasket is the kind of an InvalidError about a basket's types or voucher.
var ErrInvalidBasket = errors.New("invalid basket")

func invalidBasket(code, format string, args ...any) error {
	e := invalid(ErrInvalidBasket, format, args...).(*InvalidError)
	e.Code = code
	return e
}

// ErrVoucherNotFound is a voucher code the event does not have.
var ErrVoucherNotFound = errors.New("no such voucher for this event")

// BasketQuote is what a basket costs the online buyer, with what the basket page
// offers beside it.
type BasketQuote struct {
	pricing.Quote
	// Offered are the types a line at each level may choose (none on an event
	// without types): not paused, not desk-only, and code-only ones only when the
	// hold's access code reveals them.
	Offered map[pricing.Level][]pricing.Type
	// VoucherCode is the voucher entered, if any; VoucherProblem says why it does not
	// apply now (it is then left out of the quote).
	VoucherCode    string
	VoucherProblem error
	// Problem names the rules the basket breaks (pricing.Violations); the Quote is
	// then zero and checkout is refused until the buyer changes the basket.
	Problem error
	// Chosen are the basket's lines with the type each has, chosen or by default
	// (0 on an event without types): known even when Problem leaves the Quote zero.
	Chosen []pricing.Line
}

// Quote prices the buyer's live hold id as checkout would charge it online.
func (s *Buyer) Quote(ctx context.Context, id HoldID, buyer string) (BasketQuote, error) {
	_, bq, err := s.priced(ctx, id, buyer)
	return bq, err
}

// PricedHold is the buyer's live hold id as GetHold answers it, priced as Quote
// prices it: one round trip, and a second only when the event's price configuration
// changed since this process last read it.
func (s *Buyer) PricedHold(ctx context.Context, id HoldID, buyer string) (Hold, BasketQuote, error) {
	r, bq, err := s.priced(ctx, id, buyer)
	if err != nil {
		return Hold{}, BasketQuote{}, err
	}
	return r.hold(), bq, nil
}

// priced reads the buyer's live hold id and prices it.
func (s *Buyer) priced(ctx context.Context, id HoldID, buyer string) (basketRead, BasketQuote, error) {
	r, err := s.readBasket(ctx, id, buyer)
	if err != nil {
		return r, BasketQuote{}, err
	}
	b, err := s.basketOf(ctx, s.pool, r, buyer)
	if err != nil {
		return r, BasketQuote{}, err
	}
	return r, b.quote(time.Now()), nil
}

// basket is a hold's lines, its event's price configuration, its voucher and the
// access code the hold was made with (which may reveal a code-only type).
type basket struct {
	cfg     pricing.Config
	lines   []pricing.Line
	voucher *pricing.Voucher
	code    *pricing.AccessCode
}

// quote prices b for an online buyer at now. A voucher that no longer applies is left
// out and named in VoucherProblem; a broken rule leaves the Quote zero and is named in
// Problem.
func (b basket) quote(now time.Time) BasketQuote {
	out := BasketQuote{Offered: map[pricing.Level][]pricing.Type{}}
	for _, l := range b.lines {
		if _, ok := out.Offered[l.Level]; !ok {
			out.Offered[l.Level] = b.cfg.Offered(l.Level, pricing.MethodOnline, b.code)
		}
		if l.TypeID == 0 {
			l.TypeID = b.cfg.Default(l.Level, pricing.MethodOnline, b.code)
		}
		out.Chosen = append(out.Chosen, l)
	}
	in := pricing.Basket{Lines: b.lines, Method: pricing.MethodOnline, Voucher: b.voucher, Code: b.code, Now: now}
	if b.voucher != nil {
		out.VoucherCode = b.voucher.Code
	}
	q, err := b.cfg.Quote(in)
	var verr *pricing.VoucherError
	if errors.As(err, &verr) {
		out.VoucherProblem = verr
		in.Voucher = nil
		q, err = b.cfg.Quote(in)
	}
	out.Quote, out.Problem = q, err
	return out
}

// lockBasket locks hold id of buyer for a change of its price (a type, a voucher) and
// reads it back, in one round trip: refused if it is not theirs, not live, or its
// checkout has begun. also, if not nil, queues more reads in that round trip, after
// the lock.
func (s *store) lockBasket(ctx context.Context, tx pgx.Tx, id HoldID, buyer string, also func(*db.Pipeline)) (basket, error) {
	var pl db.Pipeline
	lb := queueLockedBasket(&pl, id)
	if also != nil {
		also(&pl)
	}
	if err := pl.Send(ctx, tx); err != nil {
		return basket{}, err
	}
	switch {
	case !lb.hold.Found || lb.hold.Val.Buyer != buyer:
		return basket{}, ErrHoldNotFound
	case !lb.hold.Val.Live:
		return basket{}, ErrHoldExpired
	case lb.order.Found:
		return basket{}, ErrCheckoutBegun
	}
	return s.basketOf(ctx, tx, lb.basketRead, buyer)
}

// offers reports whether type typeID is offered online at level, to the holder of the
// basket's access code if it has one.
func (b basket) offers(level pricing.Level, typeID int64) bool {
	for _, t := range b.cfg.Offered(level, pricing.MethodOnline, b.code) {
		if t.ID == typeID {
			return true
		}
	}
	return false
}

// SetSeatType sets the ticket type of one seat of the buyer's basket id. The seat
// stays held as it was: only the line's type changes.
func (s *Buyer) SetSeatType(ctx context.Context, id HoldID, buyer string, seatID, typeID int64) error {
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		b, err := s.lockBasket(ctx, tx, id, buyer, nil)
		if err != nil {
			return err
		}
		var level *pricing.Level
		for _, l := range b.lines {
			if l.SeatID == seatID {
				level = &l.Level
			}
		}
		switch {
		case level == nil:
			return ErrSeatNotInHold
		case !b.cfg.Typed():
			return invalidBasket("no_ticket_types", "this event sells each seat at one price, without ticket types")
		case !b.offers(*level, typeID):
			return invalidBasket("type_not_offered", "that ticket type is not offered for this seat")
		}
		n, err := q.HoldSeatTypeSet(ctx, db.HoldSeatTypeSetParams{EventID: id.Event, HoldID: &id.Seq, SeatID: seatID, TypeID: typeID})
		if err == nil && n == 0 {
			return ErrSeatNotInHold
		}
		return err
	})
}

// SetGATypes sets how many of the basket's standing places are of each type (by type
// id); places left over take the level's default type.
func (s *Buyer) SetGATypes(ctx context.Context, id HoldID, buyer string, counts map[int64]int) error {
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		b, err := s.lockBasket(ctx, tx, id, buyer, nil)
		if err != nil {
			return err
		}
		var tier int64
		places := 0
		for _, l := range b.lines {
			if l.GATierID != 0 {
				tier, places = l.GATierID, places+1
			}
		}
		if tier == 0 {
			return invalidBasket("no_standing_places", "this basket has no standing places")
		}
		if !b.cfg.Typed() {
			return invalidBasket("no_ticket_types", "this event sells each place at one price, without ticket types")
		}
		total := 0
		for typeID, n := range counts {
			if n < 0 || !b.offers(pricing.Level{GATierID: tier}, typeID) {
				return invalidBasket("type_not_offered", "a ticket type asked for is not offered for these places, or its count is below zero")
			}
			total += n
		}
		if total > places {
			return invalidBasket("too_many_places", "the basket has %d standing places; the types ask for %d", places, total)
		}
		if err := q.HoldGATypesClear(ctx, db.HoldGATypesClearParams{EventID: id.Event, HoldID: id.Seq, GaTierID: tier}); err != nil {
			return err
		}
		for typeID, n := range counts {
			if n == 0 {
				continue
			}
			err := q.HoldGATypeAdd(ctx, db.HoldGATypeAddParams{EventID: id.Event, HoldID: id.Seq, GaTierID: tier, TypeID: typeID, Quantity: int32(n)})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// SetVoucher enters a voucher in the buyer's basket id, or clears it (code ""). It is
// judged at once against the basket: a code the event does not have is
// ErrVoucherNotFound, and one that cannot be used (paused, out of its dates, used up,
// for no ticket here) is its *pricing.VoucherError; neither is kept.
func (s *Buyer) SetVoucher(ctx context.Context, id HoldID, buyer, code string) error {
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		var typed *db.Row[db.VoucherByCodeRow] // the voucher the buyer typed, read with the basket
		b, err := s.lockBasket(ctx, tx, id, buyer, func(pl *db.Pipeline) {
			if code != "" {
				typed = pl.VoucherByCode(db.VoucherByCodeParams{EventID: id.Event, Code: NormalCode(code)})
			}
		})
		if err != nil {
			return err
		}
		if code == "" {
			return q.HoldVoucherClear(ctx, db.HoldVoucherClearParams{EventID: id.Event, HoldID: id.Seq})
		}
		if !typed.Found {
			return ErrVoucherNotFound
		}
		v := voucherOf(typed.Val)
		b.voucher = &v
		bq := b.quote(time.Now())
		if bq.VoucherProblem != nil {
			return bq.VoucherProblem
		}
		return q.HoldVoucherSet(ctx, db.HoldVoucherSetParams{EventID: id.Event, HoldID: id.Seq, VoucherID: v.ID})
	})
}
