package booking

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
	"boxoffice/internal/pricing"
	"boxoffice/internal/staff"
)

// ErrInvalidPricing is the kind of an InvalidError about ticket types, fees, tax,
// vouchers or access codes as staff set them.
var ErrInvalidPricing = errors.New("invalid price setting")

// InvalidPricing is an *InvalidError of kind ErrInvalidPricing (code invalid_pricing):
// a price setting staff typed that cannot be kept, worded by format and args.
func InvalidPricing(format string, args ...any) error {
	e := invalid(ErrInvalidPricing, format, args...).(*InvalidError)
	e.Code = "invalid_pricing"
	return e
}

// TypeLevel is a level a type is priced at: a seats' price tier or a GA tier, with
// its name and its own price (what the event sells at without types).
type TypeLevel struct {
	Level     pricing.Level
	Name      string
	BasePrice int64
}

// PriceSetup is an event's price configuration and the levels it prices.
type PriceSetup struct {
	Config pricing.Config
	Levels []TypeLevel
}

// PriceSetup reads an event's price configuration, for the admin pages.
func (s *Desk) PriceSetup(ctx context.Context, eventID int64) (PriceSetup, error) {
	cfg, err := s.priceConfig(ctx, s.pool, eventID)
	if err != nil {
		return PriceSetup{}, err
	}
	levels, err := priceLevels(ctx, s.q, eventID)
	return PriceSetup{Config: cfg, Levels: levels}, err
}

func priceLevels(ctx context.Context, q *db.Queries, eventID int64) ([]TypeLevel, error) {
	rows, err := q.PriceLevelList(ctx, eventID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]TypeLevel, len(rows))
	for i, r := range rows {
		out[i] = TypeLevel{Level: pricing.Level{PriceTierID: r.PriceTierID, GATierID: r.GaTierID}, Name: r.Name, BasePrice: int64(r.PriceCents)}
	}
	return out, nil
}

// priceConfig reads an event's price configuration through dbtx (the pool, or a
// transaction) in one round trip: what checkout hands to pricing.Config.Quote. It
// keeps it under the version its first statement saw (priceConfigs): the other
// statements, run after it, see that version's configuration or a later one.
func (s *store) priceConfig(ctx context.Context, dbtx db.DBTX, eventID int64) (pricing.Config, error) {
	var pl db.Pipeline
	p := pl.PricingGet(eventID)
	fees := pl.FeeList(eventID)
	types := pl.TicketTypeList(eventID)
	prices := pl.TicketTypePriceList(eventID)
	if err := pl.Send(ctx, dbtx); err != nil {
		return pricing.Config{}, translate(err)
	}
	if !p.Found {
		return pricing.Config{}, ErrEventNotFound
	}
	cfg := pricing.Config{TaxRateBP: int(p.Val.TaxRateBp), TaxLabel: p.Val.TaxLabel, MethodFees: map[pricing.Method]pricing.Fees{}}
	for _, f := range fees.Vals {
		fee := pricing.Fees{PerTicket: int64(f.PerTicketCents), PerOrder: int64(f.PerOrderCents)}
		if f.Method == FeesAll {
			cfg.Fees = fee
		} else {
			cfg.MethodFees[pricing.Method(f.Method)] = fee
		}
	}
	for _, t := range types.Vals {
		pt := pricing.Type{ID: t.ID, Name: t.Name, Position: int(t.Position), CountsAsAdult: t.CountsAsAdult,
			NeedsAdult: t.NeedsAdult, DeskOnly: t.DeskOnly, CodeOnly: t.CodeOnly, Paused: t.Paused, Prices: map[pricing.Level]int64{}}
		if t.MaxPerOrder != nil {
			pt.MaxPerOrder = int(*t.MaxPerOrder)
		}
		for _, p := range prices.Vals {
			if p.TypeID == t.ID {
				pt.Prices[pricing.Level{PriceTierID: p.PriceTierID, GATierID: p.GaTierID}] = int64(p.PriceCents)
			}
		}
		cfg.Types = append(cfg.Types, pt)
	}
	s.prices.put(eventID, p.Val.Version, cfg)
	return cfg, nil
}

// PricingSubject names an event's price settings in the audit log.
func PricingSubject(eventID int64) string { return "event:" + strconv.FormatInt(eventID, 10) }

// FeesAll is the fee row that applies to every payment method.
const FeesAll = "all"

// MaxPrice bounds a price, a fee or a voucher's amount: a million in major units.
const MaxPrice = 100_000_000

// PricingInput is an event's tax and fees as staff set them.
type PricingInput struct {
	TaxRateBP int
	TaxLabel  string
	// Fees by FeesAll or a pricing.Method.
	Fees map[string]pricing.Fees
}

// SetPricing sets an event's tax and fees, with its audit entry.
func (s *Desk) SetPricing(ctx context.Context, eventID int64, in PricingInput, by Actor) error {
	in.TaxLabel = strings.TrimSpace(in.TaxLabel)
	if in.TaxRateBP < 0 || in.TaxRateBP > 10_000 {
		return InvalidPricing("the tax rate must be from 0 to 100 %%")
	}
	if n := utf8.RuneCountInString(in.TaxLabel); n < 1 || n > 40 {
		return InvalidPricing("the tax needs a name of 1 to 40 characters, such as VAT")
	}
	for m, f := range in.Fees {
		if m != FeesAll && !pricing.Method(m).Valid() {
			return InvalidPricing("%q is not a payment method", m)
		}
		if f.PerTicket < 0 || f.PerOrder < 0 || f.PerTicket > MaxPrice/10 || f.PerOrder > MaxPrice/10 {
			return InvalidPricing("fees must be from 0 to 100,000.00")
		}
	}
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if _, err := q.PricingGet(ctx, eventID); errors.Is(err, pgx.ErrNoRows) {
			return ErrEventNotFound
		} else if err != nil {
			return err
		}
		if err := q.PricingSetTax(ctx, db.PricingSetTaxParams{EventID: eventID, TaxRateBp: int32(in.TaxRateBP), TaxLabel: in.TaxLabel}); err != nil {
			return err
		}
		for m, f := range in.Fees {
			err := q.FeeSet(ctx, db.FeeSetParams{EventID: eventID, Method: m, PerTicketCents: int32(f.PerTicket), PerOrderCents: int32(f.PerOrder)})
			if err != nil {
				return err
			}
		}
		return staff.Audit(ctx, tx, by.StaffID, "pricing.set", PricingSubject(eventID), nil, in, by.Address)
	})
}

// TypeInput is a ticket type as staff set it; ID 0 makes a new one. Prices are its
// price at each level it is offered at; a level left out is not offered.
type TypeInput struct {
	ID                                            int64
	Name                                          string
	Position, MaxPerOrder                         int
	CountsAsAdult, NeedsAdult, DeskOnly, CodeOnly bool
	Prices                                        map[pricing.Level]int64
}

func (in TypeInput) validate() error {
	switch n := utf8.RuneCountInString(in.Name); {
	case n < 1 || n > 60:
		return InvalidPricing("a ticket type needs a name of 1 to 60 characters")
	case in.MaxPerOrder < 0 || in.MaxPerOrder > 10_000:
		return InvalidPricing("the most per order must be a whole number from 0 (no cap) to 10,000")
	case in.Position < -10_000 || in.Position > 10_000:
		return InvalidPricing("the position must be from -10,000 to 10,000")
	case in.CountsAsAdult && in.NeedsAdult:
		return InvalidPricing("a type cannot both count as an adult and need one")
	}
	for _, p := range in.Prices {
		if p < 0 || p > MaxPrice {
			return InvalidPricing("prices must be from 0 to 1,000,000.00")
		}
	}
	return nil
}

// SaveType creates or changes a ticket type and its prices, with its audit entry, and
// returns its id.
func (s *Desk) SaveType(ctx context.Context, eventID int64, in TypeInput, by Actor) (int64, error) {
	in.Name = strings.TrimSpace(in.Name)
	if err := in.validate(); err != nil {
		return 0, err
	}
	var maxPer *int32
	if in.MaxPerOrder > 0 {
		m := int32(in.MaxPerOrder)
		maxPer = &m
	}
	id := in.ID
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		levels, err := priceLevels(ctx, q, eventID)
		if err != nil {
			return err
		}
		if len(levels) == 0 {
			return ErrEventNotFound
		}
		for l := range in.Prices {
			if !hasLevel(levels, l) {
				return InvalidPricing("a price names a level this event does not have")
			}
		}
		if id, err = saveTypeRow(ctx, q, eventID, id, in, maxPer); err != nil {
			return err
		}
		if err := q.TicketTypePricesClear(ctx, db.TicketTypePricesClearParams{EventID: eventID, TypeID: id}); err != nil {
			return err
		}
		for l, p := range in.Prices {
			err := q.TicketTypePriceAdd(ctx, db.TicketTypePriceAddParams{EventID: eventID, TypeID: id,
				PriceTierID: l.PriceTierID, GaTierID: l.GATierID, PriceCents: int32(p)})
			if err != nil {
				return err
			}
		}
		in.ID = id
		return staff.Audit(ctx, tx, by.StaffID, "ticket_type.save", PricingSubject(eventID), nil, auditType(in), by.Address)
	})
	return id, err
}

// saveTypeRow inserts (id 0) or updates a type's row; a taken name is an input error.
func saveTypeRow(ctx context.Context, q *db.Queries, eventID, id int64, in TypeInput, maxPer *int32) (int64, error) {
	var err error
	if id == 0 {
		id, err = q.TicketTypeCreate(ctx, db.TicketTypeCreateParams{EventID: eventID, Name: in.Name, Position: int32(in.Position),
			MaxPerOrder: maxPer, CountsAsAdult: in.CountsAsAdult, NeedsAdult: in.NeedsAdult, DeskOnly: in.DeskOnly, CodeOnly: in.CodeOnly})
	} else {
		var n int64
		n, err = q.TicketTypeUpdate(ctx, db.TicketTypeUpdateParams{EventID: eventID, ID: id, Name: in.Name, Position: int32(in.Position),
			MaxPerOrder: maxPer, CountsAsAdult: in.CountsAsAdult, NeedsAdult: in.NeedsAdult, DeskOnly: in.DeskOnly, CodeOnly: in.CodeOnly})
		if err == nil && n == 0 {
			return 0, ErrTypeNotFound
		}
	}
	if dberr.IsUniqueViolation(err) {
		return 0, InvalidPricing("this event already has a ticket type named %q", in.Name)
	}
	return id, err
}

// auditType is a type as the audit log records it: prices by level name.
func auditType(in TypeInput) map[string]any {
	prices := map[string]int64{}
	for l, p := range in.Prices {
		if l.GATierID != 0 {
			prices["ga:"+strconv.FormatInt(l.GATierID, 10)] = p
		} else {
			prices["tier:"+strconv.FormatInt(l.PriceTierID, 10)] = p
		}
	}
	return map[string]any{"id": in.ID, "name": in.Name, "position": in.Position, "max_per_order": in.MaxPerOrder,
		"counts_as_adult": in.CountsAsAdult, "needs_adult": in.NeedsAdult, "desk_only": in.DeskOnly, "code_only": in.CodeOnly, "prices": prices}
}

func hasLevel(levels []TypeLevel, l pricing.Level) bool {
	for _, pl := range levels {
		if pl.Level == l {
			return true
		}
	}
	return false
}

// ErrTypeNotFound is a ticket type id the event does not have.
var ErrTypeNotFound = errors.New("ticket type not found")

// SetTypePaused pauses a ticket type (it is offered nowhere, and a basket holding it
// is refused at checkout) or puts it back on sale.
func (s *Desk) SetTypePaused(ctx context.Context, eventID, typeID int64, paused bool, by Actor) error {
	return s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		n, err := q.TicketTypeSetPaused(ctx, db.TicketTypeSetPausedParams{EventID: eventID, ID: typeID, Paused: paused})
		if err != nil {
			return err
		} else if n == 0 {
			return ErrTypeNotFound
		}
		return staff.Audit(ctx, tx, by.StaffID, "ticket_type.pause", PricingSubject(eventID), nil,
			map[string]any{"type": typeID, "paused": paused}, by.Address)
	})
}
