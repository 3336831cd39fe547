package pricing

import (
	"slices"
	"strconv"
	"time"
)

// Quote prices b: each line's type (the chosen one, or Default), price, fee, discount
// and tax, the order fee, and the totals. A basket that breaks a rule gets the zero
// Quote and Violations naming every rule broken, not just the first, so a page can
// say all of them at once. An empty basket costs nothing and carries no order fee.
func (c Config) Quote(b Basket) (Quote, error) {
	q := Quote{Lines: make([]LineQuote, len(b.Lines)), TaxLabel: c.TaxLabel}
	var bad Violations
	types := make([]Type, len(b.Lines)) // the zero Type on an untyped event
	for i, l := range b.Lines {
		lq := LineQuote{Line: l, TypeName: Standard, Price: l.BasePrice, Fee: c.ticketFee(b.Method)}
		if c.Typed() {
			t, err := c.lineType(l, b.Method, b.Code)
			if err != nil {
				bad = appendOnce(bad, err)
				continue
			}
			types[i], lq.TypeID, lq.TypeName, lq.Price = t, t.ID, t.Name, t.Prices[l.Level]
		}
		q.Lines[i] = lq
	}
	bad = append(bad, orderRules(types)...)
	if b.Voucher != nil && len(bad) == 0 {
		if err := applyVoucher(q.Lines, *b.Voucher, b.Now); err != nil {
			bad = append(bad, err)
		}
		q.VoucherID = b.Voucher.ID
	}
	if len(bad) > 0 {
		return Quote{}, bad
	}
	for i := range q.Lines {
		l := &q.Lines[i]
		l.Total = l.Price + l.Fee - l.Discount
		l.Tax = TaxIncluded(l.Total, c.TaxRateBP)
		q.Prices, q.Fees, q.Discount, q.Tax, q.Total = q.Prices+l.Price, q.Fees+l.Fee, q.Discount+l.Discount, q.Tax+l.Tax, q.Total+l.Total
	}
	if len(q.Lines) > 0 {
		q.OrderFee = c.OrderFee(b.Method)
		q.OrderFeeTax = TaxIncluded(q.OrderFee, c.TaxRateBP)
		q.Fees, q.Tax, q.Total = q.Fees+q.OrderFee, q.Tax+q.OrderFeeTax, q.Total+q.OrderFee
	}
	return q, nil
}

// lineType is the type a line sells as, or why it cannot.
func (c Config) lineType(l Line, m Method, code *AccessCode) (Type, error) {
	id := l.TypeID
	if id == 0 {
		if id = c.Default(l.Level, m, code); id == 0 {
			return Type{}, &TypeError{Reason: TypeNone}
		}
	}
	t, ok := c.typeByID(id)
	switch _, priced := t.Prices[l.Level]; {
	case !ok:
		return Type{}, &TypeError{Type: "type " + strconv.FormatInt(id, 10), Reason: TypeUnknown}
	case t.Paused:
		return Type{}, &TypeError{Type: t.Name, Reason: TypePaused}
	case t.DeskOnly && !m.Desk():
		return Type{}, &DeskOnlyError{Type: t.Name}
	case t.CodeOnly && !reveals(code, t):
		return Type{}, &TypeError{Type: t.Name, Reason: TypeNeedsCode}
	case !priced:
		return Type{}, &TypeError{Type: t.Name, Reason: TypeNotAtLevel}
	}
	return t, nil
}

// appendOnce appends err unless an equal message is there already: ten lines of a
// paused type are one broken rule.
func appendOnce(v Violations, err error) Violations {
	for _, e := range v {
		if e.Error() == err.Error() {
			return v
		}
	}
	return append(v, err)
}

// orderRules are the rules over the whole order: the caps per type and "needs an
// adult". types holds each line's type (zero for lines already refused or untyped).
func orderRules(types []Type) Violations {
	var bad Violations
	counts := map[int64]int{}
	adult := false
	var order []Type // each type once, in the order first seen
	for _, t := range types {
		if t.ID == 0 {
			continue
		}
		if counts[t.ID] == 0 {
			order = append(order, t)
		}
		counts[t.ID]++
		adult = adult || t.CountsAsAdult
	}
	for _, t := range order {
		if t.MaxPerOrder > 0 && counts[t.ID] > t.MaxPerOrder {
			bad = append(bad, &CapError{Type: t.Name, Cap: t.MaxPerOrder, Count: counts[t.ID]})
		}
		if t.NeedsAdult && !adult {
			bad = append(bad, &NeedsAdultError{Type: t.Name})
		}
	}
	return bad
}

// Usable says why v cannot be used at now, or nil. The limit is judged on Used as
// last read; the redemption at confirmation decides.
func (v Voucher) Usable(now time.Time) error {
	reason := ""
	switch {
	case v.Paused:
		reason = VoucherPaused
	case !v.ValidFrom.IsZero() && now.Before(v.ValidFrom):
		reason = VoucherNotYet
	case !v.ValidUntil.IsZero() && !now.Before(v.ValidUntil):
		reason = VoucherExpired
	case v.Limit > 0 && v.Used >= v.Limit:
		reason = VoucherUsedUp
	default:
		return nil
	}
	return &VoucherError{Code: v.Code, Reason: reason}
}

// applyVoucher sets the lines' discounts: a percentage off each eligible ticket's
// price, rounded half to even; or a fixed amount spread over the eligible tickets in
// line order, each down to zero at most.
func applyVoucher(lines []LineQuote, v Voucher, now time.Time) error {
	if err := v.Usable(now); err != nil {
		return err
	}
	left, eligible := v.AmountOff, false
	for i := range lines {
		l := &lines[i]
		if len(v.TypeIDs) > 0 && !slices.Contains(v.TypeIDs, l.TypeID) {
			continue
		}
		eligible = true
		if v.PercentOffBP > 0 {
			l.Discount = min(divHalfEven(l.Price*int64(v.PercentOffBP), 10_000), l.Price)
		} else {
			l.Discount = min(left, l.Price)
			left -= l.Discount
		}
	}
	if !eligible {
		return &VoucherError{Code: v.Code, Reason: VoucherNotForThis}
	}
	return nil
}
