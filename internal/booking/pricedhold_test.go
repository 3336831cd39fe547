package booking

import (
	"strconv"
	"testing"

	"boxoffice/internal/demo"
	"boxoffice/internal/pricing"
)

// TestPriceChangeQuotedAtOnce: a change to the event's price configuration (a type's
// price through the admin's SaveType, a fee, the tax, a type paused) is priced by the
// very next quote of the same process, which keeps the configuration between quotes,
// and by the next checkout. The negative control changes a price with the version's
// trigger off: the process then quotes the price it kept, while a process without one
// reads the new price, so what the test sees is the version at work.
func TestPriceChangeQuotedAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 2500)}), DefaultConfig())
	ctx := t.Context()
	seats := f.rowSeats(t, "Stalls", "A")
	tier := f.ids(t, `SELECT min(id) FROM price_tiers WHERE event_id = $1`, f.event)[0]
	level := pricing.Level{PriceTierID: tier}
	by := Actor{StaffID: newStaff(t, f.pool, "box_office"), Address: "192.0.2.9"}
	adult := TypeInput{Name: "Adult", Prices: map[pricing.Level]int64{level: 2000}}
	var err error
	if adult.ID, err = f.svc.Desk.SaveType(ctx, f.event, adult, by); err != nil {
		t.Fatal(err)
	}
	h := f.hold(t, "ada", seats[0])
	total := func(svc *Services) int64 {
		t.Helper()
		bq, err := svc.Buyer.Quote(ctx, h.ID, "ada")
		if err != nil {
			t.Fatal(err)
		}
		if bq.Problem != nil {
			t.Fatalf("quote: %v", bq.Problem)
		}
		return bq.Total
	}
	if got := total(f.svc); got != 2000 {
		t.Fatalf("first quote: got %d, want 2000", got)
	}

	adult.Prices[level] = 3000
	if _, err := f.svc.Desk.SaveType(ctx, f.event, adult, by); err != nil {
		t.Fatal(err)
	}
	if got := total(f.svc); got != 3000 {
		t.Errorf("quote after the price changed: got %d, want 3000", got)
	}
	f.ids(t, `INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents)
		VALUES ($1, 'online', 100, 50) RETURNING event_id`, f.event)
	if got := total(f.svc); got != 3150 {
		t.Errorf("quote after a fee was added: got %d, want 3150", got)
	}
	if err := f.svc.Desk.SetPricing(ctx, f.event, PricingInput{TaxRateBP: 2000, TaxLabel: "VAT"}, by); err != nil {
		t.Fatal(err)
	}
	if bq, err := f.svc.Buyer.Quote(ctx, h.ID, "ada"); err != nil || bq.Tax == 0 {
		t.Errorf("quote after the tax was set: tax %d (%v), want some", bq.Tax, err)
	}
	child := TypeInput{Name: "Child", Position: -1, Prices: map[pricing.Level]int64{level: 1000}}
	if child.ID, err = f.svc.Desk.SaveType(ctx, f.event, child, by); err != nil {
		t.Fatal(err)
	}
	if got := total(f.svc); got != 1150 {
		t.Errorf("quote after a cheaper type came first: got %d, want 1150", got)
	}
	if err := f.svc.Desk.SetTypePaused(ctx, f.event, child.ID, true, by); err != nil {
		t.Fatal(err)
	}
	if got := total(f.svc); got != 3150 {
		t.Errorf("quote after that type was paused: got %d, want 3150", got)
	}
	o := f.checkout(t, h, "ada")
	if o.AmountCents != 3150 {
		t.Errorf("checkout charged %d, want the quote's 3150", o.AmountCents)
	}

	// The control: a price changed without its version.
	h2 := f.hold(t, "bob", seats[1])
	if bq, err := f.svc.Buyer.Quote(ctx, h2.ID, "bob"); err != nil || bq.Total != 3150 {
		t.Fatalf("bob's quote: got %d (%v), want 3150", bq.Total, err)
	}
	for _, sql := range []string{`ALTER TABLE ticket_type_prices DISABLE TRIGGER ticket_type_prices_price_version`,
		`UPDATE ticket_type_prices SET price_cents = 4000 WHERE event_id = ` + strconv.FormatInt(f.event, 10),
		`ALTER TABLE ticket_type_prices ENABLE TRIGGER ticket_type_prices_price_version`} {
		if _, err := f.pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if bq, err := f.svc.Buyer.Quote(ctx, h2.ID, "bob"); err != nil || bq.Total != 3150 {
		t.Errorf("control, the same process: got %d (%v), want the kept 3150: the version is what tells a change", bq.Total, err)
	}
	if bq, err := f.withService(DefaultConfig()).svc.Buyer.Quote(ctx, h2.ID, "bob"); err != nil || bq.Total != 4150 {
		t.Errorf("control, a new process: got %d (%v), want 4150", bq.Total, err)
	}
}

// TestEveryPriceTableRaisesTheVersion: a row written to or removed from any table the
// price configuration is read from raises the event's version, and only that event's.
func TestEveryPriceTableRaisesTheVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 2, 2500)}), DefaultConfig())
	spec := smallSpec([]demo.Section{oneRow("Other", 2, 100)})
	spec.Slug = "other"
	other, err := demo.Create(t.Context(), f.pool, spec)
	if err != nil {
		t.Fatal(err)
	}
	tier := f.ids(t, `SELECT min(id) FROM price_tiers WHERE event_id = $1`, f.event)[0]
	version := func(event int64) int64 {
		t.Helper()
		return f.ids(t, `SELECT version FROM event_price_versions WHERE event_id = $1`, event)[0]
	}
	var typeID int64
	for _, c := range []struct{ name, sql string }{
		{"event_pricing insert", `INSERT INTO event_pricing (event_id, tax_rate_bp) VALUES ($1, 700) RETURNING event_id`},
		{"event_pricing update", `UPDATE event_pricing SET tax_label = 'GST' WHERE event_id = $1 RETURNING event_id`},
		{"event_fees insert", `INSERT INTO event_fees (event_id, method, per_ticket_cents) VALUES ($1, 'all', 10) RETURNING event_id`},
		{"event_fees update", `UPDATE event_fees SET per_order_cents = 5 WHERE event_id = $1 RETURNING event_id`},
		{"event_fees delete", `DELETE FROM event_fees WHERE event_id = $1 RETURNING event_id`},
		{"ticket_types insert", `INSERT INTO ticket_types (event_id, name) VALUES ($1, 'Adult') RETURNING id`},
		{"ticket_type_prices insert", `INSERT INTO ticket_type_prices (event_id, type_id, price_tier_id, price_cents)
			SELECT event_id, id, ` + "$2" + `, 900 FROM ticket_types WHERE event_id = $1 RETURNING type_id`},
		{"ticket_type_prices update", `UPDATE ticket_type_prices SET price_cents = 950 WHERE event_id = $1 RETURNING type_id`},
		{"ticket_types update", `UPDATE ticket_types SET paused = true WHERE event_id = $1 RETURNING id`},
		{"ticket_types delete (its prices cascade)", `DELETE FROM ticket_types WHERE event_id = $1 RETURNING id`},
	} {
		before, otherBefore := version(f.event), version(other)
		args := []any{f.event}
		if c.name == "ticket_type_prices insert" {
			args = append(args, tier)
		}
		if ids := f.ids(t, c.sql, args...); len(ids) == 0 {
			t.Fatalf("%s: changed no row", c.name)
		} else if c.name == "ticket_types insert" {
			typeID = ids[0]
		}
		if after := version(f.event); after <= before {
			t.Errorf("%s: version %d, then %d; want it raised", c.name, before, after)
		}
		if v := version(other); v != otherBefore {
			t.Errorf("%s: the other event's version moved from %d to %d", c.name, otherBefore, v)
		}
	}
	if typeID == 0 {
		t.Error("no type was made")
	}
}

// TestPricedHoldRoundTrips: a priced read of a hold (the API's GET of a hold with its
// quote) is one round trip of two statements once the process has the event's price
// configuration, for seats with a type and a voucher as for standing places; reading
// the configuration adds one round trip of four. GetHold is that read without the
// price. A change of a seat's type and checkout read the basket in the batch that
// locks the hold, and a voucher's entry the voucher its code names too.
func TestPricedHoldRoundTrips(t *testing.T) {
	t.Parallel()
	pool, rt := tracedPool(t)
	f := fixtureOn(t, pool, smallSpec([]demo.Section{oneRow("Stalls", 6, 2500)}, demo.GATier{Name: "Floor", PriceCents: 1500, Capacity: 50, Stripes: 2}), DefaultConfig())
	ctx := t.Context()
	seats := f.rowSeats(t, "Stalls", "A")
	tier := f.ids(t, `SELECT min(id) FROM price_tiers WHERE event_id = $1`, f.event)[0]
	by := Actor{StaffID: newStaff(t, f.pool, "box_office"), Address: "192.0.2.9"}
	adult, err := f.svc.Desk.SaveType(ctx, f.event, TypeInput{Name: "Adult",
		Prices: map[pricing.Level]int64{{PriceTierID: tier}: 2000, {GATierID: f.tier}: 1200}}, by)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Desk.CreateVoucher(ctx, f.event, VoucherInput{Code: "TENOFF", AmountOff: 1000}, by); err != nil {
		t.Fatal(err)
	}
	h := f.hold(t, "ada", seats[0], seats[1])
	if err := f.svc.Buyer.SetSeatType(ctx, h.ID, "ada", seats[0], adult); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Buyer.SetVoucher(ctx, h.ID, "ada", "TENOFF"); err != nil {
		t.Fatal(err)
	}
	ga, err := f.holdGA(t, "bob", 3)
	if err != nil {
		t.Fatal(err)
	}

	fresh := f.withService(DefaultConfig()).svc // a process that has read no configuration yet
	for _, c := range []struct {
		name               string
		svc                *Services
		id                 HoldID
		buyer              string
		wantTrips, wantSts int
		wantTotal          int64
	}{
		{"seats, configuration not yet read", fresh, h.ID, "ada", 2, 6, 2*2000 - 1000},
		{"seats", fresh, h.ID, "ada", 1, 2, 2*2000 - 1000},
		{"standing places", fresh, ga.ID, "bob", 1, 2, 3 * 1200},
	} {
		var bq BasketQuote
		var held Hold
		trips, stmts := rt.count(func() {
			held, bq, err = c.svc.Buyer.PricedHold(ctx, c.id, c.buyer)
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if trips != c.wantTrips || stmts != c.wantSts {
			t.Errorf("%s: %d round trips of %d statements, want %d of %d", c.name, trips, stmts, c.wantTrips, c.wantSts)
		}
		if bq.Total != c.wantTotal || bq.Problem != nil {
			t.Errorf("%s: total %d (%v), want %d", c.name, bq.Total, bq.Problem, c.wantTotal)
		}
		if len(held.Seats)+gaQuantity(held) == 0 {
			t.Errorf("%s: the answer has no seats or places", c.name)
		}
	}

	trips, stmts := rt.count(func() { _, err = fresh.Buyer.GetHold(ctx, ga.ID, "bob") })
	if err != nil || trips != 1 || stmts != 2 {
		t.Errorf("GetHold: %d round trips of %d statements (%v), want 1 of 2", trips, stmts, err)
	}

	// One batch: BEGIN, the hold's lock, its order, its basket; then the type and COMMIT.
	trips, stmts = rt.count(func() { err = fresh.Buyer.SetSeatType(ctx, h.ID, "ada", seats[1], adult) })
	if err != nil {
		t.Fatal(err)
	}
	if trips != 3 || stmts != 7 {
		t.Errorf("a seat's type: %d round trips of %d statements, want 3 of 7", trips, stmts)
	}

	// One batch: the same, and the voucher the code names; then the voucher and COMMIT.
	trips, stmts = rt.count(func() { err = fresh.Buyer.SetVoucher(ctx, h.ID, "ada", "tenoff") })
	if err != nil {
		t.Fatal(err)
	}
	if trips != 3 || stmts != 8 {
		t.Errorf("a voucher: %d round trips of %d statements, want 3 of 8", trips, stmts)
	}

	var o Order
	trips, stmts = rt.count(func() { o, err = fresh.Buyer.Checkout(ctx, h.ID, "ada", "ada@example.com") })
	if err != nil {
		t.Fatal(err)
	}
	// One batch: BEGIN, the hold's lock, its order, its basket (two statements); then the
	// order with its lines, the voucher's redemption and COMMIT, one at a time.
	if trips != 4 || stmts != 8 {
		t.Errorf("checkout: %d round trips of %d statements, want 4 of 8", trips, stmts)
	}
	if o.AmountCents != 3000 {
		t.Errorf("checkout charged %d, want the quote's 3000", o.AmountCents)
	}
}

func gaQuantity(h Hold) int {
	if h.GA == nil {
		return 0
	}
	return h.GA.Quantity
}
