package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/pricing"
	"boxoffice/views"
)

// The basket's price on the seat page: each line's type (a select, a form post per
// change), the all-in price per line, the fees, the tax included, the voucher box and
// the total. The prices come from booking's quote, the one checkout charges.

// basketQuotes prices each of the buyer's live holds; a hold that lapsed meanwhile is
// left out (the panel then shows its seats' own prices until it is fetched again).
func (s *server) basketQuotes(ctx context.Context, holds []booking.Hold, buyer string) (map[booking.HoldID]booking.BasketQuote, error) {
	out := map[booking.HoldID]booking.BasketQuote{}
	for _, h := range holds {
		bq, err := s.Buyer.Quote(ctx, h.ID, buyer)
		if errors.Is(err, booking.ErrHoldExpired) || errors.Is(err, booking.ErrHoldNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out[h.ID] = bq
	}
	return out, nil
}

// lineQuoteOf finds the quote of the seat seatID (0: the standing places) in bq.
func lineQuotesOf(bq booking.BasketQuote, seatID int64) []pricing.LineQuote {
	var out []pricing.LineQuote
	for _, l := range bq.Lines {
		if l.SeatID == seatID {
			out = append(out, l)
		}
	}
	return out
}

// typeOptions are the types a line at level may take, each with its all-in price,
// the chosen one selected.
func typeOptions(shop money.Shop, bq booking.BasketQuote, level pricing.Level, chosen, fee int64) []views.Option {
	var out []views.Option
	for _, t := range bq.Offered[level] {
		out = append(out, views.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name + " " + shop.Short(int(t.Prices[level]+fee)), Selected: t.ID == chosen})
	}
	return out
}

// pricedSeatLine fills in line l of seat seatID from the basket's quote.
func pricedSeatLine(shop money.Shop, l *views.HoldLine, h booking.Hold, bq booking.BasketQuote, seatID int64) {
	var chosen pricing.Line
	for _, c := range bq.Chosen {
		if c.SeatID == seatID {
			chosen = c
		}
	}
	fee := int64(0)
	if lq := lineQuotesOf(bq, seatID); len(lq) == 1 {
		q := lq[0]
		fee, l.Price, l.Type = q.Fee, shop.Short(int(q.Total)), q.TypeName
		l.Detail = lineDetail(shop, q.Fee, q.Discount)
	}
	if len(bq.Offered[chosen.Level]) > 0 && !h.CheckoutBegun {
		l.TypeURL = "/holds/" + h.ID.String() + "/seats/" + strconv.FormatInt(seatID, 10) + "/type"
		l.Types = typeOptions(shop, bq, chosen.Level, chosen.TypeID, fee)
	}
}

// lineDetail says what a line's all-in price is made of.
func lineDetail(shop money.Shop, fee, discount int64) string {
	d := ""
	if fee > 0 {
		d = "incl. " + shop.Short(int(fee)) + " fees"
	}
	if discount > 0 {
		if d != "" {
			d += ", "
		}
		d += shop.Short(int(discount)) + " off"
	}
	return d
}

// pricedGALines are a hold's standing places, one line per type, from its quote.
func pricedGALines(shop money.Shop, h booking.Hold, bq booking.BasketQuote) []views.HoldLine {
	var out []views.HoldLine
	byType := map[string][]pricing.LineQuote{}
	var order []string
	for _, q := range lineQuotesOf(bq, 0) {
		if byType[q.TypeName] == nil {
			order = append(order, q.TypeName)
		}
		byType[q.TypeName] = append(byType[q.TypeName], q)
	}
	for _, name := range order {
		qs := byType[name]
		total, fee, discount := int64(0), int64(0), int64(0)
		for _, q := range qs {
			total, fee, discount = total+q.Total, fee+q.Fee, discount+q.Discount
		}
		out = append(out, views.HoldLine{What: fmt.Sprintf("%d × %s (general admission)", len(qs), h.GA.TierName),
			Type: name, Price: shop.Short(int(total)), Detail: lineDetail(shop, fee, discount)})
	}
	return out
}

// gaTypeForm counts h's standing places per type, as bq has them (chosen, or by
// default); nil when they have no choice of type or can no longer change.
func gaTypeForm(shop money.Shop, h booking.Hold, bq booking.BasketQuote) *views.GATypeForm {
	if h.GA == nil || h.CheckoutBegun {
		return nil
	}
	level := pricing.Level{GATierID: h.GA.TierID}
	if len(bq.Offered[level]) < 2 {
		return nil
	}
	counts := map[int64]int{}
	for _, l := range bq.Chosen {
		if l.GATierID == h.GA.TierID {
			counts[l.TypeID]++
		}
	}
	fee := int64(0)
	if lq := lineQuotesOf(bq, 0); len(lq) > 0 {
		fee = lq[0].Fee
	}
	f := &views.GATypeForm{URL: "/holds/" + h.ID.String() + "/ga-types",
		What: fmt.Sprintf("%d standing places (%s)", h.GA.Quantity, h.GA.TierName)}
	for _, t := range bq.Offered[level] {
		name := typeCountPrefix + strconv.FormatInt(t.ID, 10)
		f.Fields = append(f.Fields, views.TypeCount{InputID: "ga-" + name + "-" + h.ID.String(), Name: name,
			Label: t.Name + " " + shop.Short(int(t.Prices[level]+fee)), Value: strconv.Itoa(counts[t.ID])})
	}
	return f
}

// setGATypesForm sets how many of the basket's standing places are of each type: a
// form post of type_<id> counts. Places not counted take the first type.
func (s *server) setGATypesForm(c echo.Context) error {
	id, buyer, ev, err := s.basketForm(c)
	if err != nil {
		return err
	}
	f, err := c.FormParams()
	if err != nil {
		return s.holdRefused(c, ev, "", booking.HoldRequest{}, badRequest("invalid_form", "The form could not be read."))
	}
	counts, err := typeCounts(typeCountsTyped(f))
	if err == nil {
		err = s.Buyer.SetGATypes(c.Request().Context(), id, buyer, counts)
	}
	if err != nil {
		return s.holdRefused(c, ev, "", booking.HoldRequest{}, err)
	}
	return s.basketChanged(c, ev, "Ticket types set. Your places are still yours.")
}

// basketPrice is the summary of bq under the lines.
func basketPrice(shop money.Shop, h booking.Hold, bq booking.BasketQuote) *views.BasketPrice {
	q := bq.Quote
	p := &views.BasketPrice{Fees: shop.Short(int(q.Fees)), Tax: "incl. " + shop.Short(int(q.Tax)) + " " + q.TaxLabel, VoucherCode: bq.VoucherCode}
	if q.TaxLabel == "" || q.Tax == 0 {
		p.Tax = "included where due"
	}
	if q.OrderFee > 0 {
		p.OrderFee = shop.Short(int(q.OrderFee))
	}
	if q.Discount > 0 {
		p.Discount = "−" + shop.Short(int(q.Discount))
	}
	if bq.VoucherProblem != nil {
		p.VoucherProblem = sentence(bq.VoucherProblem.Error())
	}
	if v, ok := bq.Problem.(pricing.Violations); ok {
		for _, e := range v {
			p.Problems = append(p.Problems, sentence(e.Error()))
		}
	}
	if !h.CheckoutBegun {
		p.VoucherURL = "/holds/" + h.ID.String() + "/voucher"
	}
	return p
}

// setTypeForm changes a basket line's ticket type: a form post of "type". Without
// the script it sends the browser back to the seat page; htmx gets the panel again.
func (s *server) setTypeForm(c echo.Context) error {
	id, buyer, ev, err := s.basketForm(c)
	if err != nil {
		return err
	}
	seat, err := booking.ParseID(c.Param("seatId"))
	if err != nil {
		return booking.ErrSeatNotInHold
	}
	typeID, err := booking.ParseID(c.FormValue("type"))
	if err != nil {
		return s.holdRefused(c, ev, "", booking.HoldRequest{}, badRequest("invalid_request", "Choose a ticket type."))
	}
	if err := s.Buyer.SetSeatType(c.Request().Context(), id, buyer, seat, typeID); err != nil {
		return s.holdRefused(c, ev, "", booking.HoldRequest{}, err)
	}
	return s.basketChanged(c, ev, "Ticket type changed. The seat is still yours.")
}

// voucherForm enters the voucher of the form's "code" in the basket, or clears it
// (the form's "clear").
func (s *server) voucherForm(c echo.Context) error {
	id, buyer, ev, err := s.basketForm(c)
	if err != nil {
		return err
	}
	code, msg := c.FormValue("code"), "Voucher applied."
	if c.FormValue("clear") != "" {
		code, msg = "", "Voucher removed."
	} else if booking.NormalCode(code) == "" {
		return s.holdRefused(c, ev, "", booking.HoldRequest{}, badRequest("invalid_request", "Enter a voucher code."))
	}
	if err := s.Buyer.SetVoucher(c.Request().Context(), id, buyer, code); err != nil {
		return s.holdRefused(c, ev, "", booking.HoldRequest{}, err)
	}
	return s.basketChanged(c, ev, msg)
}

// basketForm is the hold a basket form names, the session's buyer and the event.
func (s *server) basketForm(c echo.Context) (booking.HoldID, string, booking.Event, error) {
	id, err := pageHoldID(c)
	if err != nil {
		return id, "", booking.Event{}, err
	}
	buyer := s.pageBuyer(c)
	if buyer == "" {
		return id, "", booking.Event{}, booking.ErrHoldNotFound // a session that never held anything owns nothing
	}
	ev, err := s.eventByID(c.Request().Context(), id.Event)
	return id, buyer, ev, err
}

// basketChanged answers a basket form that worked: back to the seat page, or the
// panel again for htmx.
func (s *server) basketChanged(c echo.Context, ev booking.Event, msg string) error {
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, seatsURL(ev, ""))
	}
	return s.holdAnswer(c, ev, "", http.StatusOK, views.Message{Text: msg}, nil, "")
}
