// Package pricing works out what a basket costs: ticket types and their prices per
// price level, fees per ticket and per order (optionally per payment method), tax
// included in every price, and a voucher's discount. It is pure: the caller reads the
// event's configuration (booking) and the clock, and pricing answers with a Quote or
// the rules the basket breaks. Money is int64 minor units throughout; nothing here
// ever holds a float.
//
// # The price a buyer sees first
//
// AllIn is the price per ticket including every mandatory per-ticket fee for the way
// the buyer pays (online buyers always pay by the provider, so the online fees are
// mandatory for them): it is the first price shown anywhere, on the event page, the
// map and the basket, as the FTC's rule on live-event tickets and the EU's price
// indication rules ask. A per-order fee cannot be folded into a per-ticket figure
// without making that figure depend on how many tickets are bought, so it is shown
// beside the first price, as prominently, as a fixed amount per order ("+ 2.00 per
// order"), and it is inside every total from the basket on, before any payment detail
// is asked for: the sum a buyer is quoted is the sum charged. An organiser who wants a
// single figure sets no per-order fee.
//
// # Tax and rounding
//
// Prices and fees are tax-inclusive. The tax inside an amount is
// gross * rate / (1 + rate), rounded half to even in minor units (TaxIncluded). It is
// worked out per line (each ticket, and the order fee), and the order's tax is the sum
// of its lines' tax: an itemised receipt adds up exactly, which a tax worked out on the
// order's total and then shared out would not guarantee. Half to even, rather than half
// up, keeps the rounding from leaning one way over many lines. A percentage discount is
// rounded the same way, per line.
//
// # Events without ticket types
//
// An event with no ticket types sells every seat at its own price (Line.BasePrice, the
// seat's or GA tier's price_cents) under the label Standard: existing events keep
// their prices without any row of configuration.
package pricing

import (
	"slices"
	"time"
)

// Method is how an order is paid. The window's methods are the desk's; online is the
// payment provider.
type Method string

// The payment methods.
const (
	MethodOnline      Method = "online"
	MethodCash        Method = "cash"
	MethodCardPresent Method = "card_present"
)

// Methods are the payment methods, in the order the fee settings list them.
var Methods = []Method{MethodOnline, MethodCash, MethodCardPresent}

// Desk reports whether m is a method of the box office's window.
func (m Method) Desk() bool { return m == MethodCash || m == MethodCardPresent }

// Valid reports whether m is one of Methods.
func (m Method) Valid() bool { return slices.Contains(Methods, m) }

// Level is a price level: a seats' price tier or a GA tier, exactly one of them set.
type Level struct {
	PriceTierID int64
	GATierID    int64
}

// Type is a ticket type of an event.
type Type struct {
	ID       int64
	Name     string
	Position int
	// MaxPerOrder caps the tickets of this type in one order; 0: no cap.
	MaxPerOrder int
	// CountsAsAdult marks the types that satisfy NeedsAdult.
	CountsAsAdult bool
	// NeedsAdult: sold only in an order with a ticket of a CountsAsAdult type.
	NeedsAdult bool
	// DeskOnly: sold only at the window (Method.Desk).
	DeskOnly bool
	// CodeOnly: offered only with an access code that reveals it.
	CodeOnly bool
	Paused   bool
	// Prices is the type's price at each level it is offered at.
	Prices map[Level]int64
}

// Fees are charged per ticket and per order, tax-inclusive.
type Fees struct {
	PerTicket int64
	PerOrder  int64
}

// Config is an event's price configuration.
type Config struct {
	// Types in the order they are offered (by Position); none: the event sells at
	// its levels' own prices.
	Types []Type
	// Fees apply to every method; MethodFees add to them for one method.
	Fees       Fees
	MethodFees map[Method]Fees
	// TaxRateBP is the tax rate in basis points (2000 is 20 %); prices include it.
	TaxRateBP int
	TaxLabel  string
}

// Voucher is a discount a buyer enters in the basket.
type Voucher struct {
	ID   int64
	Code string
	// AmountOff is a fixed amount off the order, spread over its eligible tickets in
	// line order, each down to zero at most; or PercentOffBP off each eligible
	// ticket's price. Exactly one is set. Fees are never discounted.
	AmountOff    int64
	PercentOffBP int
	// TypeIDs are the types it applies to; none: every ticket.
	TypeIDs []int64
	// Limit is how many orders may use it; 0: no limit. Used is how many have, as
	// last read: the redemption at confirmation decides, by the database clock.
	Limit, Used int
	// ValidFrom and ValidUntil bound when it may be used; zero: unbounded.
	ValidFrom, ValidUntil time.Time
	Paused                bool
}

// AccessCode opens a presale to its holders and may reveal a code-only type.
type AccessCode struct {
	ID                         int64
	Code                       string
	PresaleStarts, PresaleEnds time.Time
	// Quota is the places the code may sell; 0: no quota. Used is the places sold,
	// as last read.
	Quota, Used int
	// RevealsType is a code-only type the code offers; 0: none.
	RevealsType int64
	Paused      bool
}

// Line is one ticket in a basket: a held seat or one GA place.
type Line struct {
	SeatID   int64
	GATierID int64
	Level    Level
	// BasePrice is the seat's (or GA tier's) own price: the price when the event has
	// no ticket types.
	BasePrice int64
	// TypeID is the chosen type; 0: the first type offered at the level (Default).
	TypeID int64
}

// Basket is what Quote prices: the lines, how they are paid, and the codes entered.
type Basket struct {
	Lines   []Line
	Method  Method
	Voucher *Voucher
	Code    *AccessCode
	// Now is the time the voucher's validity is judged by.
	Now time.Time
}

// LineQuote is one ticket's charges. Total = Price + Fee - Discount, and Tax is
// included in Total.
type LineQuote struct {
	Line
	TypeName                         string
	Price, Fee, Discount, Tax, Total int64
}

// Quote is what a basket costs. Total is the sum of the lines' totals and the order
// fee; Tax the sum of the lines' tax and the order fee's.
type Quote struct {
	Lines       []LineQuote
	OrderFee    int64
	OrderFeeTax int64
	// Prices, Fees (per ticket and per order), Discount, Tax and Total over the order.
	Prices, Fees, Discount, Tax, Total int64
	// VoucherID is the voucher applied; 0: none.
	VoucherID int64
	TaxLabel  string
}

// Standard is the label of a line on an event without ticket types.
const Standard = "Standard"

// TaxIncluded is the tax inside gross at rateBP basis points, tax-inclusive:
// gross * rate / (1 + rate), rounded half to even in minor units.
func TaxIncluded(gross int64, rateBP int) int64 {
	if gross <= 0 || rateBP <= 0 {
		return 0
	}
	return divHalfEven(gross*int64(rateBP), 10_000+int64(rateBP))
}

// divHalfEven is num / den rounded half to even, for num >= 0 and den > 0.
func divHalfEven(num, den int64) int64 {
	q, r := num/den, num%den
	if 2*r > den || (2*r == den && q%2 == 1) {
		q++
	}
	return q
}

// ticketFee is the fee per ticket for m: every method's, plus m's own.
func (c Config) ticketFee(m Method) int64 { return c.Fees.PerTicket + c.MethodFees[m].PerTicket }

// OrderFee is the fee per order for m: every method's, plus m's own.
func (c Config) OrderFee(m Method) int64 { return c.Fees.PerOrder + c.MethodFees[m].PerOrder }

// Typed reports whether the event sells by ticket type.
func (c Config) Typed() bool { return len(c.Types) > 0 }

// typeByID returns the type with id.
func (c Config) typeByID(id int64) (Type, bool) {
	for _, t := range c.Types {
		if t.ID == id {
			return t, true
		}
	}
	return Type{}, false
}

// reveals reports whether code reveals the code-only type t.
func reveals(code *AccessCode, t Type) bool { return code != nil && code.RevealsType == t.ID }

// Offered lists the types a buyer paying by m may choose at level, in order: not
// paused, priced at the level, desk-only ones only at the window, code-only ones only
// when code reveals them.
func (c Config) Offered(level Level, m Method, code *AccessCode) []Type {
	var out []Type
	for _, t := range c.Types {
		if _, priced := t.Prices[level]; !priced || t.Paused || (t.DeskOnly && !m.Desk()) || (t.CodeOnly && !reveals(code, t)) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Default is the type a line without a chosen type gets: the first offered at level
// that needs no adult; 0 when the event has no types or none is offered.
func (c Config) Default(level Level, m Method, code *AccessCode) int64 {
	for _, t := range c.Offered(level, m, code) {
		if !t.NeedsAdult {
			return t.ID
		}
	}
	return 0
}

// AllIn is the first price a buyer paying by m sees for a ticket of type typeID at
// level: the price plus every per-ticket fee for m (see the package doc for the
// per-order fee). basePrice is the level's own price, used when the event has no
// types (typeID is then 0).
func (c Config) AllIn(level Level, basePrice, typeID int64, m Method) (int64, bool) {
	price := basePrice
	if c.Typed() {
		t, ok := c.typeByID(typeID)
		if !ok {
			return 0, false
		}
		if price, ok = t.Prices[level]; !ok {
			return 0, false
		}
	}
	return price + c.ticketFee(m), true
}

// From is the lowest all-in price at level among the types offered to the public
// paying by m (no code): the "from" price of a seat on the map. false: nothing is
// offered there.
func (c Config) From(level Level, basePrice int64, m Method) (int64, bool) {
	if !c.Typed() {
		return basePrice + c.ticketFee(m), true
	}
	best, found := int64(0), false
	for _, t := range c.Offered(level, m, nil) {
		if p := t.Prices[level]; !found || p < best {
			best, found = p, true
		}
	}
	return best + c.ticketFee(m), found
}
