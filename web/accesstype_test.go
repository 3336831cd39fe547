package web_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestAccessCodeType: a code-only type (a member price) is offered to the buyer whose
// hold was made with the access code that reveals it, in the API's offers and in the
// basket page's selects, and checkout charges it; a buyer without the code is neither
// offered it nor allowed to set it.
func TestAccessCodeType(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	e := newPricedEvent(t, app.Pool, "priced-member")
	member := int64(count(t, app.Pool, `INSERT INTO ticket_types (event_id, name, position, counts_as_adult, code_only)
		VALUES ($1, 'Member', 0, true, true) RETURNING id`, e.id))
	if _, err := app.Pool.Exec(t.Context(), `INSERT INTO ticket_type_prices (event_id, type_id, price_tier_id, price_cents)
		SELECT $1, $2, min(id), 1500 FROM price_tiers WHERE event_id = $1`, e.id, member); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Pool.Exec(t.Context(), `INSERT INTO access_codes (event_id, code, presale_starts_at, presale_ends_at, reveals_type_id)
		VALUES ($1, 'FANS', now() - interval '10 minutes', now() + interval '50 minutes', $2)`, e.id, member); err != nil {
		t.Fatal(err)
	}
	setWindow(t, app.Pool, e.id, windowBefore)
	offered := func(h pricedHold) []int64 {
		var ids []int64
		for _, o := range h.Quote.Lines[0].Types {
			ids = append(ids, o.ID)
		}
		return ids
	}

	fan := app.newClient(t)
	if st := fan.do("POST", "/api/v1/events/"+itoa(e.id)+"/access-code", map[string]string{"code": "fans"}, nil); st != http.StatusOK {
		t.Fatalf("entering the code: got %d, want 200", st)
	}
	h := fan.hold(e.id, e.seats[0])
	if ids := offered(fan.pricedHold(h.HoldID)); !slices.Contains(ids, member) {
		t.Errorf("offers to the code's holder: got types %v, want Member (%d) among them", ids, member)
	}
	if st := fan.setType(h.HoldID, e.seats[0], member); st != http.StatusOK {
		t.Fatalf("setting Member with the code: got %d, want 200", st)
	}
	chosen := fan.page("/events/priced-member/seats", false).doc.Find(`#hold-panel form.line-type select[name="type"] option[selected]`)
	if v, _ := chosen.Attr("value"); v != itoa(member) || !strings.Contains(chosen.Text(), "Member") {
		t.Errorf("the basket page's select: got %q (%q) chosen, want Member (%d)", v, chosen.Text(), member)
	}
	memberAllIn := 1500 + e.adultAllIn - 2000
	co := fan.checkout(h.HoldID)
	if int64(co.AmountCents) != memberAllIn+e.fee {
		t.Errorf("checkout with the member type: got %d, want %d", co.AmountCents, memberAllIn+e.fee)
	}

	setWindow(t, app.Pool, e.id, windowOpen)
	public := app.newClient(t)
	h2 := public.hold(e.id, e.seats[1])
	if ids := offered(public.pricedHold(h2.HoldID)); slices.Contains(ids, member) || len(ids) == 0 {
		t.Errorf("offers without the code: got types %v, want some, without Member (%d)", ids, member)
	}
	if st := public.setType(h2.HoldID, e.seats[1], member); st != http.StatusBadRequest {
		t.Errorf("setting Member without the code: got %d, want 400", st)
	}
}
