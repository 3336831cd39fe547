package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// A buyer of a priced event sees the basket's price before checkout (GET
// /holds/{holdId}, its quote), and some (-types) set a seat to a ticket type other
// than the default: a child beside an adult, when they hold two seats or more, or a
// concession. Others (-voucher) enter a voucher, one of -voucher-codes at random; a
// voucher refused (used up, when the limited one is gone) is counted by its reason,
// and the buyer checks out without it. Standing places keep the default type.

// Type names the buyers look for among a line's offers (the price list of
// internal/pricedemo).
const (
	typeChild      = "child"
	typeConcession = "concession"
)

// quoteJSON is the basket's price as GET /holds/{holdId} and the price calls answer
// it: what checkout charges.
type quoteJSON struct {
	Lines []struct {
		SeatID     int64  `json:"seatId"`
		Type       string `json:"type"`
		TotalCents int64  `json:"totalCents"`
		Types      []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"types"`
	} `json:"lines"`
	// TotalCents is what checkout charges: the prices and fees less the discounts,
	// the tax included.
	TotalCents  int64 `json:"totalCents"`
	PricesCents int64 `json:"pricesCents"`
	FeesCents   int64 `json:"feesCents"`
	Voucher     *struct {
		Code    string `json:"code"`
		Problem string `json:"problem"`
	} `json:"voucher"`
	DiscountCents int64  `json:"discountCents"`
	TaxCents      int64  `json:"taxCents"`
	TaxLabel      string `json:"taxLabel"`
}

// pricedJSON is a hold with its quote.
type pricedJSON struct {
	Quote quoteJSON `json:"quote"`
}

// priceUse is what one buyer did with the price, for the report.
type priceUse struct {
	typeCalls int       // seats set to a type
	voucher   string    // the voucher the order was made with
	refused   string    // the voucher refused, and why
	quote     quoteJSON // the price checkout charged
	charged   int64     // what checkout said the order costs
}

// choosePrices reads the basket's price and, for some buyers, sets a seat's type and
// enters a voucher. It returns false when the visit ends.
func (b *buyer) choosePrices(ctx context.Context, holdID string) bool {
	s := b.sim
	q, ok := b.readQuote(ctx, holdID)
	if !ok {
		return false
	}
	if b.rng.Float64() < s.cfg.Types {
		if q, ok = b.setType(ctx, holdID, q); !ok {
			return false
		}
	}
	if len(s.cfg.Codes) > 0 && b.rng.Float64() < s.cfg.Voucher {
		if q, ok = b.enterVoucher(ctx, holdID, q); !ok {
			return false
		}
	}
	b.price.quote = q
	return true
}

// readQuote is the basket's price, as the checkout page shows it.
func (b *buyer) readQuote(ctx context.Context, holdID string) (quoteJSON, bool) {
	var p pricedJSON
	a, ok := b.try(ctx, "quote", http.MethodGet, "/api/v1/holds/"+holdID, nil, &p)
	return p.Quote, ok && b.priceAnswer("quote", a)
}

// priceAnswer says whether a price call's answer lets the visit go on: a lapsed hold
// ends it as expired, any other refusal as an error.
func (b *buyer) priceAnswer(step string, a answer) bool {
	switch {
	case a.Status == http.StatusOK || a.Status == http.StatusNoContent:
		return true
	case a.Status == http.StatusGone:
		b.outcome = outExpired
	default:
		b.fail(step, a)
	}
	return false
}

// setType sets one held seat to another type than the default: the last to a child
// when two seats or more are held (the others stay adults), else one to a concession.
// A basket whose lines offer no such type is left as it is.
func (b *buyer) setType(ctx context.Context, holdID string, q quoteJSON) (quoteJSON, bool) {
	var seats []int // lines of seats, which offer types
	for i, l := range q.Lines {
		if l.SeatID != 0 && len(l.Types) > 0 {
			seats = append(seats, i)
		}
	}
	if len(seats) == 0 {
		return q, true
	}
	line, want := seats[b.rng.IntN(len(seats))], typeConcession
	if len(seats) >= 2 && b.rng.IntN(2) == 0 {
		line, want = seats[len(seats)-1], typeChild
	}
	var typeID int64
	for _, t := range q.Lines[line].Types {
		if strings.HasPrefix(strings.ToLower(t.Name), want) {
			typeID = t.ID
		}
	}
	if typeID == 0 {
		return q, true
	}
	var p pricedJSON
	path := "/api/v1/holds/" + holdID + "/seats/" + strconv.FormatInt(q.Lines[line].SeatID, 10)
	a, ok := b.try(ctx, "type", http.MethodPut, path, map[string]int64{"typeId": typeID}, &p)
	if !ok || !b.priceAnswer("type", a) {
		return q, false
	}
	b.price.typeCalls++
	b.sim.count.event("type")
	return p.Quote, true
}

// enterVoucher enters one of the codes. One refused as not usable (used up, most
// often) is a normal part of an onsale: the buyer goes on without it.
func (b *buyer) enterVoucher(ctx context.Context, holdID string, q quoteJSON) (quoteJSON, bool) {
	code := b.sim.cfg.Codes[b.rng.IntN(len(b.sim.cfg.Codes))]
	var p pricedJSON
	a, ok := b.try(ctx, "voucher", http.MethodPut, "/api/v1/holds/"+holdID+"/voucher", map[string]string{"code": code}, &p)
	if !ok {
		return q, false
	}
	if a.Status == http.StatusUnprocessableEntity && a.Err.Code == "voucher_not_usable" {
		b.price.refused = code + ": " + a.kind()
		b.sim.count.expected("voucher: " + a.kind())
		return q, true
	}
	if !b.priceAnswer("voucher", a) {
		return q, false
	}
	b.price.voucher = code
	return p.Quote, true
}

// checkout makes the order of the hold and returns its id. A voucher used up since it
// was entered refuses the checkout (the limit is counted there); the buyer then takes
// it out and checks out without it, at the price the basket then shows.
func (b *buyer) checkout(ctx context.Context, holdID string) (int64, bool) {
	s := b.sim
	body := map[string]string{"email": "buyer" + strconv.Itoa(b.id) + "@example.com"}
	for range 2 {
		var co checkoutJSON
		a, ok := b.send(ctx, "checkout", http.MethodPost, "/api/v1/holds/"+holdID+"/checkout", body, &co)
		if !ok {
			return 0, false
		}
		switch {
		case a.Status == http.StatusCreated:
			b.price.charged = co.AmountCents
			if co.AmountCents != b.price.quote.TotalCents {
				s.count.unexpected("checkout: charged other than the basket's price")
			}
			return co.OrderID, true
		case a.Status == http.StatusGone:
			b.outcome = outExpired
			return 0, false
		case a.Status == http.StatusUnprocessableEntity && a.Err.Code == "voucher_not_usable" && b.price.voucher != "":
			b.price.refused = b.price.voucher + ": " + a.kind() + " at checkout"
			b.price.voucher = ""
			s.count.expected("checkout: " + a.kind())
			if a, ok := b.try(ctx, "voucher", http.MethodDelete, "/api/v1/holds/"+holdID+"/voucher", nil, nil); !ok || !b.priceAnswer("voucher", a) {
				return 0, false
			}
			if b.price.quote, ok = b.readQuote(ctx, holdID); !ok {
				return 0, false
			}
		default:
			b.fail("checkout", a)
			return 0, false
		}
	}
	s.count.unexpected("checkout: refused twice")
	b.outcome = outFailed
	return 0, false
}
