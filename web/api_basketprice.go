package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/pricing"
)

// The basket's price in the JSON API: a line's ticket type, the voucher, and the
// quote that GET /holds/{holdId} returns beside the hold's seats. None of these calls
// touches a seat's claim.

// quoteJSON is what the basket costs an online buyer, all fees and tax included.
type quoteJSON struct {
	Lines         []quoteLineJSON `json:"lines"`
	OrderFeeCents int64           `json:"orderFeeCents"`
	PricesCents   int64           `json:"pricesCents"`
	FeesCents     int64           `json:"feesCents"`
	DiscountCents int64           `json:"discountCents"`
	TaxCents      int64           `json:"taxCents"`
	TaxLabel      string          `json:"taxLabel"`
	TotalCents    int64           `json:"totalCents"`
	Voucher       *voucherJSON    `json:"voucher,omitempty"`
	// Problems are the rules the basket breaks; checkout is refused while any is.
	Problems []string `json:"problems,omitempty"`
}

type quoteLineJSON struct {
	SeatID        int64  `json:"seatId,omitempty"`
	GATierID      int64  `json:"gaTierId,omitempty"`
	TypeID        int64  `json:"typeId,omitempty"`
	Type          string `json:"type"`
	PriceCents    int64  `json:"priceCents"`
	FeeCents      int64  `json:"feeCents"`
	DiscountCents int64  `json:"discountCents"`
	TaxCents      int64  `json:"taxCents"`
	TotalCents    int64  `json:"totalCents"`
	// Types are the types this line may be set to, each with its all-in price.
	Types []typeOfferJSON `json:"types,omitempty"`
}

type typeOfferJSON struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	AllInCents int64  `json:"allInCents"`
}

type voucherJSON struct {
	Code string `json:"code"`
	// Problem says why the voucher does not apply now; it is then left out.
	Problem string `json:"problem,omitempty"`
}

// quoteView is bq as the API shows it; lines of a refused basket are left out.
func quoteView(bq booking.BasketQuote) quoteJSON {
	q := bq.Quote
	out := quoteJSON{OrderFeeCents: q.OrderFee, PricesCents: q.Prices, FeesCents: q.Fees, DiscountCents: q.Discount,
		TaxCents: q.Tax, TaxLabel: q.TaxLabel, TotalCents: q.Total, Lines: []quoteLineJSON{}}
	for _, l := range q.Lines {
		lj := quoteLineJSON{SeatID: l.SeatID, GATierID: l.GATierID, TypeID: l.TypeID, Type: l.TypeName, PriceCents: l.Price,
			FeeCents: l.Fee, DiscountCents: l.Discount, TaxCents: l.Tax, TotalCents: l.Total}
		for _, t := range bq.Offered[l.Level] {
			lj.Types = append(lj.Types, typeOfferJSON{ID: t.ID, Name: t.Name, AllInCents: t.Prices[l.Level] + l.Fee})
		}
		out.Lines = append(out.Lines, lj)
	}
	if bq.VoucherCode != "" {
		out.Voucher = &voucherJSON{Code: bq.VoucherCode}
		if bq.VoucherProblem != nil {
			out.Voucher.Problem = sentence(bq.VoucherProblem.Error())
		}
	}
	if v, ok := bq.Problem.(pricing.Violations); ok {
		for _, e := range v {
			out.Problems = append(out.Problems, sentence(e.Error()))
		}
	}
	return out
}

// sentence is a message of pricing's as a sentence: capital first, full stop last.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}

// pricedHoldJSON is a hold with its quote.
type pricedHoldJSON struct {
	holdJSON
	Quote quoteJSON `json:"quote"`
}

// pricedHold answers with the buyer's hold id and its quote.
func (s *server) pricedHold(ctx context.Context, c echo.Context, id booking.HoldID, buyer string) error {
	h, bq, err := s.Buyer.PricedHold(ctx, id, buyer)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pricedHoldJSON{holdJSON: holdView(h), Quote: quoteView(bq)})
}

// setSeatTypeJSON is the body of PUT /holds/{holdId}/seats/{seatId}.
type setSeatTypeJSON struct {
	TypeID int64 `json:"typeId"`
}

// setSeatType sets a held seat's ticket type and answers with the priced hold. The
// seat stays held as it was.
func (s *server) setSeatType(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	seat, err := pathID(c, "seatId")
	if err != nil {
		return err
	}
	var in setSeatTypeJSON
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if in.TypeID <= 0 {
		return badRequest("invalid_request", `Send {"typeId": n}, a ticket type of the event.`)
	}
	ctx := c.Request().Context()
	if err := s.Buyer.SetSeatType(ctx, id, buyer, seat, in.TypeID); err != nil {
		return err
	}
	return s.pricedHold(ctx, c, id, buyer)
}

// setGATypesJSON is the body of PUT /holds/{holdId}/ga-types.
type setGATypesJSON struct {
	Types []struct {
		TypeID   int64 `json:"typeId"`
		Quantity int   `json:"quantity"`
	} `json:"types"`
}

// setGATypes says how many of the hold's standing places are of each type.
func (s *server) setGATypes(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	var in setGATypesJSON
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	counts := map[int64]int{}
	for _, t := range in.Types {
		counts[t.TypeID] += t.Quantity
	}
	ctx := c.Request().Context()
	if err := s.Buyer.SetGATypes(ctx, id, buyer, counts); err != nil {
		return err
	}
	return s.pricedHold(ctx, c, id, buyer)
}

// setVoucherJSON is the body of PUT /holds/{holdId}/voucher.
type setVoucherJSON struct {
	Code string `json:"code"`
}

// setVoucher enters a voucher in the hold; one that does not apply is refused at
// once and not kept.
func (s *server) setVoucher(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	var in setVoucherJSON
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if booking.NormalCode(in.Code) == "" {
		return badRequest("invalid_request", `Send {"code": "..."}, the voucher's code.`)
	}
	ctx := c.Request().Context()
	if err := s.Buyer.SetVoucher(ctx, id, buyer, in.Code); err != nil {
		return err
	}
	return s.pricedHold(ctx, c, id, buyer)
}

// clearVoucher takes the voucher out of the hold.
func (s *server) clearVoucher(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.Buyer.SetVoucher(ctx, id, buyer, ""); err != nil {
		return err
	}
	return s.pricedHold(ctx, c, id, buyer)
}
