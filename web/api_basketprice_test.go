package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
)

// pricedEvent is a small event with ticket types, fees and tax, as staff would set
// them: Adult 20.00 (counts as an adult) and Child 12.50 (needs an adult, at most 2)
// on the seats, Companion at the window only; 1.50 a ticket for every method plus
// 0.25 online, 2.00 an order; 20 % VAT included; vouchers TENADULT (10 % off Adult
// tickets, once) and FIVE (5.00 off, no limit).
type pricedEvent struct {
	id                          int64
	adult, child, companion     int64
	tenAdult, five              int64
	seats                       []int64
	gaTier, gaAdultPrice        int64
	adultAllIn, childAllIn, fee int64
}

func newPricedEvent(t *testing.T, pool *pgxpool.Pool, slug string) pricedEvent {
	t.Helper()
	ctx := context.Background()
	e := pricedEvent{id: smallEvent(t, pool, slug), adultAllIn: 2000 + 175, childAllIn: 1250 + 175, fee: 200}
	var tier int64
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(pool.QueryRow(ctx, `SELECT min(id) FROM price_tiers WHERE event_id = $1`, e.id).Scan(&tier))
	must(pool.QueryRow(ctx, `SELECT min(id) FROM ga_tiers WHERE event_id = $1`, e.id).Scan(&e.gaTier))
	_, err := pool.Exec(ctx, `INSERT INTO event_pricing (event_id, tax_rate_bp, tax_label) VALUES ($1, 2000, 'VAT')`, e.id)
	must(err)
	_, err = pool.Exec(ctx, `INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents) VALUES ($1, 'all', 150, 200), ($1, 'online', 25, 0)`, e.id)
	must(err)
	typ := func(name string, pos int, maxPer *int, adult, needs, desk bool) int64 {
		var id int64
		must(pool.QueryRow(ctx, `INSERT INTO ticket_types (event_id, name, position, max_per_order, counts_as_adult, needs_adult, desk_only)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, e.id, name, pos, maxPer, adult, needs, desk).Scan(&id))
		return id
	}
	two := 2
	e.adult, e.child, e.companion = typ("Adult", 1, nil, true, false, false), typ("Child", 2, &two, false, true, false), typ("Companion", 3, nil, false, false, true)
	e.gaAdultPrice = 800
	_, err = pool.Exec(ctx, `INSERT INTO ticket_type_prices (event_id, type_id, price_tier_id, ga_tier_id, price_cents) VALUES
		($1, $2, $5, NULL, 2000), ($1, $3, $5, NULL, 1250), ($1, $4, $5, NULL, 0), ($1, $2, NULL, $6, 800)`,
		e.id, e.adult, e.child, e.companion, tier, e.gaTier)
	must(err)
	must(pool.QueryRow(ctx, `INSERT INTO vouchers (event_id, code, percent_off_bp, type_ids, usage_limit) VALUES ($1, 'TENADULT', 1000, $2, 1) RETURNING id`,
		e.id, []int64{e.adult}).Scan(&e.tenAdult))
	must(pool.QueryRow(ctx, `INSERT INTO vouchers (event_id, code, amount_off_cents) VALUES ($1, 'FIVE', 500) RETURNING id`, e.id).Scan(&e.five))
	e.seats = firstSeats(t, pool, e.id, 10)
	return e
}

// pricedHold is GET /holds/{id} with its quote.
type pricedHold struct {
	HoldID string `json:"holdId"`
	Seats  []struct {
		ID         int64 `json:"id"`
		PriceCents int   `json:"priceCents"`
	} `json:"seats"`
	Quote struct {
		Lines []struct {
			SeatID        int64  `json:"seatId"`
			TypeID        int64  `json:"typeId"`
			Type          string `json:"type"`
			DiscountCents int64  `json:"discountCents"`
			TaxCents      int64  `json:"taxCents"`
			TotalCents    int64  `json:"totalCents"`
			Types         []struct {
				ID         int64 `json:"id"`
				AllInCents int64 `json:"allInCents"`
			} `json:"types"`
		} `json:"lines"`
		OrderFeeCents int64    `json:"orderFeeCents"`
		DiscountCents int64    `json:"discountCents"`
		TaxCents      int64    `json:"taxCents"`
		TotalCents    int64    `json:"totalCents"`
		Problems      []string `json:"problems"`
		Voucher       *struct {
			Code    string `json:"code"`
			Problem string `json:"problem"`
		} `json:"voucher"`
	} `json:"quote"`
}

func (c *client) pricedHold(id string) pricedHold {
	c.t.Helper()
	var h pricedHold
	if st := c.do("GET", "/api/v1/holds/"+id, nil, &h); st != http.StatusOK {
		c.t.Fatalf("get hold %s: got %d, want 200", id, st)
	}
	return h
}

func (c *client) setType(holdID string, seat, typeID int64) int {
	return c.do("PUT", "/api/v1/holds/"+holdID+"/seats/"+itoa(seat), map[string]any{"typeId": typeID}, nil)
}

// TestAPIBasketPricing: a basket line's type set through the API (the seat stays held
// as it was), each pricing rule (default type, desk-only refused online, the cap,
// "needs an adult"), fees per ticket and per order, tax rounded half to even per
// line, a voucher on a mixed basket, and checkout charging exactly the quoted total:
// the order's amount, its lines and the payment the test provider took.
func TestAPIBasketPricing(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	e := newPricedEvent(t, app.Pool, "priced-api")
	c := app.newClient(t)
	h := c.hold(e.id, e.seats[:3]...)
	var heldBefore string
	app.Pool.QueryRow(t.Context(), `SELECT string_agg(id || ':' || held_by || ':' || hold_expires_at, ',' ORDER BY id) FROM seats WHERE event_id = $1`, e.id).Scan(&heldBefore)

	got := c.pricedHold(h.HoldID)
	if len(got.Quote.Lines) != 3 || got.Quote.Lines[0].TypeID != e.adult || got.Quote.TotalCents != 3*e.adultAllIn+e.fee {
		t.Fatalf("default types: got %+v, want three Adult lines totalling %d", got.Quote, 3*e.adultAllIn+e.fee)
	}
	if offers := got.Quote.Lines[0].Types; len(offers) != 2 || offers[0].AllInCents != e.adultAllIn || offers[1].AllInCents != e.childAllIn {
		t.Errorf("offered types: got %+v, want Adult %d and Child %d (no desk-only Companion)", offers, e.adultAllIn, e.childAllIn)
	}
	if st := c.setType(h.HoldID, e.seats[0], e.companion); st != http.StatusBadRequest {
		t.Errorf("desk-only type online: got %d, want 400", st)
	}
	for _, s := range e.seats[:3] {
		if st := c.setType(h.HoldID, s, e.child); st != http.StatusOK {
			t.Fatalf("set Child: got %d, want 200", st)
		}
	}
	got = c.pricedHold(h.HoldID)
	if len(got.Quote.Problems) != 2 {
		t.Errorf("three Child tickets: got problems %q, want the cap and needs-an-adult", got.Quote.Problems)
	}
	var refused errorBody
	if st := c.do("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "ada@example.com"}, &refused); st != http.StatusUnprocessableEntity || refused.Error != "pricing_rule" {
		t.Errorf("checkout of a basket breaking rules: got %d %q, want 422 pricing_rule", st, refused.Error)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM orders WHERE event_id = $1`, e.id); n != 0 {
		t.Errorf("a refused checkout made %d orders, want none", n)
	}
	if st := c.setType(h.HoldID, e.seats[0], e.adult); st != http.StatusOK {
		t.Fatalf("set Adult: got %d", st)
	}
	var heldAfter string
	app.Pool.QueryRow(t.Context(), `SELECT string_agg(id || ':' || held_by || ':' || hold_expires_at, ',' ORDER BY id) FROM seats WHERE event_id = $1`, e.id).Scan(&heldAfter)
	if heldAfter != heldBefore {
		t.Errorf("changing types touched the seats: before %s, after %s", heldBefore, heldAfter)
	}

	if st := c.do("PUT", "/api/v1/holds/"+h.HoldID+"/voucher", map[string]string{"code": "nope"}, nil); st != http.StatusNotFound {
		t.Errorf("unknown voucher: got %d, want 404", st)
	}
	if st := c.do("PUT", "/api/v1/holds/"+h.HoldID+"/voucher", map[string]string{"code": " tenadult "}, nil); st != http.StatusOK {
		t.Fatalf("voucher: got %d, want 200", st)
	}
	// Adult 20.00 + 1.75 fees - 2.00 off = 19.75, VAT 3.29; Child 12.50 + 1.75 = 14.25,
	// VAT 2.375 rounded half to even to 2.38, twice; the order fee 2.00, VAT 0.33.
	got = c.pricedHold(h.HoldID)
	q := got.Quote
	if q.TotalCents != 1975+2*1425+200 || q.DiscountCents != 200 || q.TaxCents != 329+238+238+33 || q.OrderFeeCents != 200 || len(q.Problems) != 0 {
		t.Fatalf("mixed basket with the voucher: got total %d, discount %d, tax %d, fee %d, problems %q; want 5025, 200, 838, 200, none",
			q.TotalCents, q.DiscountCents, q.TaxCents, q.OrderFeeCents, q.Problems)
	}
	if q.Lines[1].DiscountCents != 0 || q.Lines[1].TaxCents != 238 || q.Voucher == nil || q.Voucher.Code != "TENADULT" {
		t.Errorf("child line: got %+v, voucher %+v; want no discount, tax 238, voucher TENADULT", q.Lines[1], q.Voucher)
	}

	co := c.checkout(h.HoldID)
	if co.AmountCents != int(q.TotalCents) {
		t.Fatalf("checkout amount: got %d, want the quoted %d", co.AmountCents, q.TotalCents)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM order_lines WHERE order_id = $1 AND kind = 'ticket'`, co.OrderID); n != 3 {
		t.Errorf("order lines: got %d tickets, want 3", n)
	}
	if n := count(t, app.Pool, `SELECT sum(total_cents) FROM order_lines WHERE order_id = $1`, co.OrderID); n != co.AmountCents {
		t.Errorf("order lines add up to %d, want %d", n, co.AmountCents)
	}
	if n := count(t, app.Pool, `SELECT used FROM vouchers WHERE id = $1`, e.tenAdult); n != 1 {
		t.Errorf("voucher used %d times, want 1", n)
	}
	if st := c.setType(h.HoldID, e.seats[1], e.adult); st != http.StatusConflict {
		t.Errorf("type change after checkout began: got %d, want 409", st)
	}
	c.pay(co.OrderID, "")
	waitOrder(t, c, co.OrderID, booking.StatusConfirmed)
	if n := count(t, app.Pool, `SELECT amount_cents FROM payments WHERE order_id = $1 AND state = 'succeeded'`, co.OrderID); n != int(q.TotalCents) {
		t.Errorf("charged %d, want the quoted %d", n, q.TotalCents)
	}

	// The voucher's one use is gone: another buyer is told at once.
	other := app.newClient(t)
	h2 := other.hold(e.id, e.seats[5])
	var used errorBody
	if st := other.do("PUT", "/api/v1/holds/"+h2.HoldID+"/voucher", map[string]string{"code": "TENADULT"}, &used); st != http.StatusUnprocessableEntity || used.Error != "voucher_not_usable" {
		t.Errorf("used-up voucher: got %d %q, want 422 voucher_not_usable", st, used.Error)
	}
	if st := other.do("PUT", "/api/v1/holds/"+h2.HoldID+"/voucher", map[string]string{"code": "FIVE"}, nil); st != http.StatusOK {
		t.Fatalf("FIVE: got %d", st)
	}
	if q := other.pricedHold(h2.HoldID).Quote; q.TotalCents != e.adultAllIn-500+e.fee {
		t.Errorf("fixed amount off: got %d, want %d", q.TotalCents, e.adultAllIn-500+e.fee)
	}
	if st := other.do("DELETE", "/api/v1/holds/"+h2.HoldID+"/voucher", nil, nil); st != http.StatusOK {
		t.Fatalf("clear voucher: got %d", st)
	}
	if q := other.pricedHold(h2.HoldID).Quote; q.TotalCents != e.adultAllIn+e.fee || q.Voucher != nil {
		t.Errorf("voucher cleared: got %d (%+v), want %d", q.TotalCents, q.Voucher, e.adultAllIn+e.fee)
	}
}
