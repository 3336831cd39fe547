package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"boxoffice/internal/staff"
)

// TestAdminPricing: an admin sets tax and fees and makes a ticket type with a price at
// a level, pauses it; bad amounts are a 400 that writes nothing; the box office may
// not change prices.
func TestAdminPricing(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	ctx := t.Context()
	c, _ := a.staffClient(t, staff.Admin)
	base := "/admin/events/" + itoa(a.EventID)
	if p := c.page(base+"/pricing", false); p.status != http.StatusOK || !strings.Contains(p.body, "Ticket types") {
		t.Fatalf("pricing page: status %d", p.status)
	}
	form := url.Values{"_csrf": {c.csrf}, "tax_label": {"VAT"}, "tax_rate": {"20"}, "fee_ticket_all": {"1.50"},
		"fee_order_all": {"2"}, "fee_ticket_online": {"0.25"}}
	if p := c.postForm(base+"/pricing", form, false); p.status != http.StatusSeeOther {
		t.Fatalf("set pricing: status %d, want 303: %s", p.status, p.body)
	}
	var rate, ticket, order, online int
	if err := a.Pool.QueryRow(ctx, `SELECT p.tax_rate_bp, a.per_ticket_cents, a.per_order_cents, o.per_ticket_cents
		FROM event_pricing p JOIN event_fees a ON a.event_id = p.event_id AND a.method = 'all'
		JOIN event_fees o ON o.event_id = p.event_id AND o.method = 'online' WHERE p.event_id = $1`, a.EventID).Scan(&rate, &ticket, &order, &online); err != nil {
		t.Fatal(err)
	}
	if rate != 2000 || ticket != 150 || order != 200 || online != 25 {
		t.Fatalf("got rate %d, fees %d/%d, online %d; want 2000, 150/200, 25", rate, ticket, order, online)
	}
	form.Set("fee_order_all", "two")
	if p := c.postForm(base+"/pricing", form, false); p.status != http.StatusBadRequest || !strings.Contains(p.body, "fee") {
		t.Fatalf("bad fee: status %d, want 400 naming the fee", p.status)
	}

	var tier int64
	if err := a.Pool.QueryRow(ctx, `SELECT min(id) FROM price_tiers WHERE event_id = $1`, a.EventID).Scan(&tier); err != nil {
		t.Fatal(err)
	}
	typeForm := url.Values{"_csrf": {c.csrf}, "name": {"Child"}, "position": {"2"}, "max_per_order": {"4"},
		"needs_adult": {"on"}, "price_tier" + itoa(tier): {"12.50"}}
	if p := c.postForm(base+"/types", typeForm, false); p.status != http.StatusSeeOther {
		t.Fatalf("create type: status %d, want 303: %s", p.status, p.body)
	}
	var id int64
	var price, maxPer int
	var needs bool
	if err := a.Pool.QueryRow(ctx, `SELECT t.id, p.price_cents, t.max_per_order, t.needs_adult FROM ticket_types t
		JOIN ticket_type_prices p ON p.event_id = t.event_id AND p.type_id = t.id AND p.price_tier_id = $2
		WHERE t.event_id = $1 AND t.name = 'Child'`, a.EventID, tier).Scan(&id, &price, &maxPer, &needs); err != nil {
		t.Fatal(err)
	}
	if price != 1250 || maxPer != 4 || !needs {
		t.Fatalf("got price %d, cap %d, needs adult %v; want 1250, 4, true", price, maxPer, needs)
	}
	for name, bad := range map[string]url.Values{
		"a price that is not an amount": {"name": {"Adult"}, "price_tier" + itoa(tier): {"12,5x"}},
		"adult that needs an adult":     {"name": {"Adult"}, "counts_as_adult": {"on"}, "needs_adult": {"on"}},
		"a taken name":                  {"name": {"Child"}},
		"no name":                       {"name": {""}},
	} {
		bad.Set("_csrf", c.csrf)
		if p := c.postForm(base+"/types", bad, false); p.status != http.StatusBadRequest || p.doc.Find(".error").Length() != 1 {
			t.Errorf("%s: status %d, want 400 with the reason", name, p.status)
		}
	}
	var types int
	a.Pool.QueryRow(ctx, `SELECT count(*) FROM ticket_types WHERE event_id = $1`, a.EventID).Scan(&types)
	if types != 1 {
		t.Fatalf("got %d types after the refused forms, want 1", types)
	}

	if p := c.postForm(base+"/types/"+itoa(id)+"/pause", url.Values{"_csrf": {c.csrf}}, false); p.status != http.StatusSeeOther {
		t.Fatalf("pause type: status %d", p.status)
	}
	var paused bool
	a.Pool.QueryRow(ctx, `SELECT paused FROM ticket_types WHERE id = $1`, id).Scan(&paused)
	if !paused {
		t.Fatal("the type is not paused")
	}
	if p := c.postForm(base+"/types/999999/pause", url.Values{"_csrf": {c.csrf}}, false); p.status != http.StatusNotFound {
		t.Fatalf("pause of no type: status %d, want 404", p.status)
	}
	if p := c.postForm(base+"/pricing", url.Values{"tax_label": {"VAT"}}, false); p.status != http.StatusForbidden {
		t.Fatalf("without the CSRF token: status %d, want 403", p.status)
	}

	desk, _ := a.staffClient(t, staff.BoxOffice)
	if p := desk.postForm(base+"/types", url.Values{"_csrf": {desk.csrf}, "name": {"Sneaky"}}, false); p.status != http.StatusForbidden {
		t.Fatalf("box office changing a type: status %d, want 403", p.status)
	}
	if p := a.newClient(t).page(base+"/pricing", false); p.status == http.StatusOK {
		t.Fatal("the pricing page answered 200 without a staff login")
	}
}

// TestAdminCodes: the box office creates a voucher and an access code, sees them with
// their use, pauses one and exports both as CSV; bad input is a 400 that writes
// nothing; door staff may not.
func TestAdminCodes(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	ctx := t.Context()
	c, _ := a.staffClient(t, staff.BoxOffice)
	base := "/admin/events/" + itoa(a.EventID)
	v := url.Values{"_csrf": {c.csrf}, "code": {"kids-10"}, "percent_off": {"12.5"}, "limit": {"5"},
		"valid_from": {"2020-01-01T10:00"}}
	if p := c.postForm(base+"/vouchers", v, false); p.status != http.StatusSeeOther {
		t.Fatalf("create voucher: status %d, want 303: %s", p.status, p.body)
	}
	ac := url.Values{"_csrf": {c.csrf}, "code": {"FANS"}, "starts": {"2020-01-01T10:00"}, "ends": {"2040-01-01T10:00"}, "quota": {"100"}}
	if p := c.postForm(base+"/access-codes", ac, false); p.status != http.StatusSeeOther {
		t.Fatalf("create access code: status %d, want 303: %s", p.status, p.body)
	}
	for name, bad := range map[string]struct {
		path string
		form url.Values
	}{
		"both amount and percent": {"/vouchers", url.Values{"code": {"BOTH"}, "percent_off": {"10"}, "amount_off": {"5"}}},
		"neither":                 {"/vouchers", url.Values{"code": {"NONE"}}},
		"a taken code":            {"/vouchers", url.Values{"code": {"KIDS-10"}, "amount_off": {"5"}}},
		"a short code":            {"/vouchers", url.Values{"code": {"AB"}, "amount_off": {"5"}}},
		"over 100 %":              {"/vouchers", url.Values{"code": {"HUGE"}, "percent_off": {"150"}}},
		"a time that is not one":  {"/vouchers", url.Values{"code": {"WHEN"}, "amount_off": {"5"}, "valid_from": {"soon"}}},
		"a presale ending first":  {"/access-codes", url.Values{"code": {"BACK"}, "starts": {"2030-01-01T10:00"}, "ends": {"2029-01-01T10:00"}}},
		"a type of no event":      {"/access-codes", url.Values{"code": {"TYPE"}, "starts": {"2030-01-01T10:00"}, "ends": {"2031-01-01T10:00"}, "reveals": {"999999"}}},
	} {
		bad.form.Set("_csrf", c.csrf)
		if p := c.postForm(base+bad.path, bad.form, false); p.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, p.status)
		}
	}
	var vouchers, codes int
	a.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM vouchers WHERE event_id = $1), (SELECT count(*) FROM access_codes WHERE event_id = $1)`,
		a.EventID).Scan(&vouchers, &codes)
	if vouchers != 1 || codes != 1 {
		t.Fatalf("got %d vouchers and %d codes, want 1 each", vouchers, codes)
	}

	p := c.page(base+"/codes", false)
	if p.status != http.StatusOK {
		t.Fatalf("codes page: %d", p.status)
	}
	row := p.doc.Find("table").First().Find("tbody tr").First().Text()
	if !strings.Contains(row, "KIDS-10") || !strings.Contains(row, "12.5 %") || !strings.Contains(row, "0 of 5") {
		t.Fatalf("voucher row %q, want KIDS-10, 12.5 %%, 0 of 5", row)
	}
	var vid int64
	a.Pool.QueryRow(ctx, `SELECT id FROM vouchers WHERE event_id = $1`, a.EventID).Scan(&vid)
	if p := c.postForm(base+"/vouchers/"+itoa(vid)+"/pause", url.Values{"_csrf": {c.csrf}}, false); p.status != http.StatusSeeOther {
		t.Fatalf("pause voucher: status %d", p.status)
	}
	_, rows := c.csvOf(base + "/vouchers.csv")
	if len(rows) != 2 || rows[1][1] != "KIDS-10" || rows[1][3] != "1250" || rows[1][5] != "5" || rows[1][6] != "0" || rows[1][9] != "true" {
		t.Fatalf("vouchers.csv: got %q, want KIDS-10, 1250 bp, limit 5, used 0, paused", rows)
	}
	_, rows = c.csvOf(base + "/access-codes.csv")
	if len(rows) != 2 || rows[1][1] != "FANS" || rows[1][4] != "100" || rows[1][5] != "0" {
		t.Fatalf("access-codes.csv: got %q, want FANS with a quota of 100, none used", rows)
	}

	door, _ := a.staffClient(t, staff.Door)
	if p := door.page(base+"/codes", false); p.status != http.StatusForbidden {
		t.Fatalf("door staff on the codes page: status %d, want 403", p.status)
	}
}
