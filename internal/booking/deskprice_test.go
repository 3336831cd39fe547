package booking

import (
	"errors"
	"testing"

	"boxoffice/internal/demo"
	"boxoffice/internal/pricing"
)

// TestDeskSaleTypes: a window sale of an Adult, a Child and a desk-only Companion paid
// in cash charges the quote for cash (its own fees on top of every method's): the
// order's amount, its lines and the payment the till counts all agree. The Companion
// type is refused to an online buyer.
func TestDeskSaleTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 8, 2500)}), DefaultConfig())
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")
	typ := func(name string, pos int, adult, needs, desk bool, price int) int64 {
		t.Helper()
		id := f.ids(t, `INSERT INTO ticket_types (event_id, name, position, counts_as_adult, needs_adult, desk_only)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, f.event, name, pos, adult, needs, desk)[0]
		f.ids(t, `INSERT INTO ticket_type_prices (event_id, type_id, price_tier_id, price_cents)
			SELECT $1, $2, min(id), $3 FROM price_tiers WHERE event_id = $1 RETURNING type_id`, f.event, id, price)
		return id
	}
	adult, child, companion := typ("Adult", 1, true, false, false, 2000), typ("Child", 2, false, true, false, 1250), typ("Companion", 3, false, false, true, 0)
	f.ids(t, `INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents)
		VALUES ($1, 'all', 150, 0), ($1, 'cash', 50, 100), ($1, 'online', 25, 200) RETURNING event_id`, f.event)

	sl := f.sale(member, "token-desk-types-0123", seats[:3]...)
	sl.Types = map[int64]int{child: 1, companion: 1}
	o, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), sl)
	if err != nil {
		t.Fatal(err)
	}
	// Child 12.50 + Companion 0 + Adult 20.00 (the default for the third seat), 2.00
	// fees a ticket in cash, 1.00 per cash order.
	want := 1250 + 0 + 2000 + 3*200 + 100
	if o.AmountCents != want {
		t.Errorf("sale amount: got %d, want %d", o.AmountCents, want)
	}
	if n := f.count(t, `SELECT amount_cents FROM payments WHERE order_id = $1 AND state = 'succeeded'`, o.ID); n != want {
		t.Errorf("payment at the window: got %d, want %d", n, want)
	}
	if n := f.count(t, `SELECT sum(total_cents) FROM order_lines WHERE order_id = $1`, o.ID); n != want {
		t.Errorf("order lines add up to %d, want %d", n, want)
	}
	types := f.ids(t, `SELECT type_id FROM order_lines WHERE order_id = $1 AND kind = 'ticket' ORDER BY line`, o.ID)
	if len(types) != 3 || types[0] != child || types[1] != companion || types[2] != adult {
		t.Errorf("line types: got %v, want child, companion, adult (%d %d %d)", types, child, companion, adult)
	}

	sl = f.sale(member, "token-desk-types-4567", seats[3])
	sl.Types = map[int64]int{child: 1}
	var needs *pricing.NeedsAdultError
	if _, _, err := f.svc.Desk.SellAtBoxOffice(t.Context(), sl); !errors.As(err, &needs) {
		t.Errorf("a Child alone at the window: got %v, want the needs-an-adult rule", err)
	}
	if n := f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND id = $2 AND (held_by IS NOT NULL OR sold_at IS NOT NULL)`, f.event, seats[3]); n != 0 {
		t.Errorf("the refused sale left its seat held or sold")
	}

	var inv *InvalidError
	h := f.hold(t, "online", seats[5])
	if err := f.svc.Buyer.SetSeatType(t.Context(), h.ID, "online", seats[5], companion); !errors.As(err, &inv) || inv.Code != "type_not_offered" {
		t.Errorf("Companion online: got %v, want type_not_offered", err)
	}
}
