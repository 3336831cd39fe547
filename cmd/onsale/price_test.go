package main

import (
	"strings"
	"testing"

	"boxoffice/internal/benchkit"
)

// checkPricing checks the prices of a run on a priced event: tickets of every type
// (at least as many as the places sold), buyers who set types, the unlimited voucher
// redeemed, the limited one refused once used up and never used past its limit, and the money the same
// in the buyers' checkouts, the orders, their lines and the charges less refunds.
func checkPricing(t *testing.T, r *report) {
	t.Helper()
	k := r.Pricing
	if k == nil || k.SQL == nil {
		t.Fatalf("pricing: got %+v, want the buyers' prices and the SQL figures", k)
	}
	tickets := 0
	for _, name := range []string{"Adult", "Child", "Concession"} {
		if k.TicketsByType[name] == 0 {
			t.Errorf("pricing: no %s ticket sold (tickets by type %v)", name, k.TicketsByType)
		}
	}
	for _, n := range k.TicketsByType {
		tickets += n
	}
	// The report's counts are of the buyers who saw their tickets in time; the prices'
	// of every order confirmed by the end (whose places its lines are: a violation
	// otherwise).
	if tickets < r.Counts.PlacesSold || k.Orders < r.Counts.Confirmed || k.TypeBuyers == 0 {
		t.Errorf("pricing: %d tickets in %d orders, %d buyers set types; want at least the %d places sold in the %d orders confirmed, and some",
			tickets, k.Orders, k.TypeBuyers, r.Counts.PlacesSold, r.Counts.Confirmed)
	}
	if k.Vouchers.Redeemed[benchkit.VoucherPercent] == 0 {
		t.Errorf("pricing: voucher %s redeemed on no confirmed order (%v)", benchkit.VoucherPercent, k.Vouchers.Redeemed)
	}
	refused := 0
	for reason, n := range k.Vouchers.Refused {
		if strings.HasPrefix(reason, benchkit.VoucherLimited+":") {
			refused += n
		}
	}
	if refused == 0 || r.Expected["voucher: 422 voucher_not_usable"]+r.Expected["checkout: 422 voucher_not_usable"] != refused {
		t.Errorf("pricing: voucher %s refused %d times (%v), expected refusals %v; want some, each counted as a normal refusal",
			benchkit.VoucherLimited, refused, k.Vouchers.Refused, r.Expected)
	}
	for _, v := range k.SQL.Vouchers {
		// An order that lapses unpaid gives its use back, so the voucher may end with
		// uses left over even though buyers were refused it.
		if v.Code == benchkit.VoucherLimited && (v.Limit != benchkit.VoucherLimitedUses || v.Used > v.Limit || v.Redemptions != v.Used) {
			t.Errorf("pricing: voucher %s has %d uses, %d redemptions, limit %d; want at most %d used, each a redemption",
				v.Code, v.Used, v.Redemptions, v.Limit, benchkit.VoucherLimitedUses)
		}
	}
	m := k.SQL
	if m.ConfirmedCents != k.RevenueCents || m.LinesCents != m.ConfirmedCents || m.ChargedCents-m.RefundedCents != m.ConfirmedCents {
		t.Errorf("pricing: buyers paid %d, SQL's confirmed orders %d, their lines %d, charged %d less refunds %d; want all the same",
			k.RevenueCents, m.ConfirmedCents, m.LinesCents, m.ChargedCents, m.RefundedCents)
	}
	if k.RevenueCents <= 0 || k.FeesCents <= 0 || k.TaxCents <= 0 || k.DiscountCents <= 0 ||
		k.RevenueCents != k.PricesCents+k.FeesCents-k.DiscountCents {
		t.Errorf("pricing: revenue %d, prices %d, fees %d, discounts %d, tax %d; want each positive, revenue the prices and fees less discounts",
			k.RevenueCents, k.PricesCents, k.FeesCents, k.DiscountCents, k.TaxCents)
	}
}

// checkMoneyControl is the money invariants' negative control: on the run's database,
// one confirmed order's amount raised by a cent and the limited voucher given one
// redemption more than its limit, each invariant of the money reports it.
func checkMoneyControl(t *testing.T, url, slug string) {
	t.Helper()
	db, err := openSQL(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var eventID int64
	if err := db.pool.QueryRow(t.Context(), `SELECT id FROM events WHERE slug = $1`, slug).Scan(&eventID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE orders SET amount_cents = amount_cents + 1
		 WHERE id = (SELECT min(id) FROM orders WHERE event_id = $1 AND status = 'confirmed')`,
		`INSERT INTO voucher_redemptions (event_id, order_id, voucher_id, discount_cents)
		 SELECT $1, (SELECT min(o.id) FROM orders o WHERE o.event_id = $1
		             AND NOT EXISTS (SELECT 1 FROM voucher_redemptions r WHERE r.order_id = o.id)),
		        v.id, 1
		 FROM vouchers v WHERE v.event_id = $1 AND v.code = '` + benchkit.VoucherLimited + `'`,
	} {
		if tag, err := db.pool.Exec(t.Context(), q, eventID); err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("control: %v, %d rows changed; want one", err, tag.RowsAffected())
		}
	}
	got, err := db.violations(t.Context(), eventID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range moneyInvariants {
		found := false
		for _, v := range got {
			found = found || strings.HasPrefix(v, inv.name+": ")
		}
		if !found {
			t.Errorf("control: %q not reported; got %q", inv.name, got)
		}
	}
}
