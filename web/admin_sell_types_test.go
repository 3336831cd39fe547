package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/staff"
)

// TestStaffSaleTypes: the window's sale form offers the event's types, the desk-only
// Companion too; a cash sale of a Child, a Companion and an Adult (the default for the
// seat left) takes the quote for cash, which the payment the till counts, the order's
// lines and the receipt all show, and a whole refund at the desk gives back. Online
// the Companion is refused.
func TestStaffSaleTypes(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.BoxOffice)
	e := newPricedEvent(t, a.Pool, "sale-types")
	if _, err := a.Pool.Exec(t.Context(), `INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents) VALUES ($1, 'cash', 50, 100)`, e.id); err != nil {
		t.Fatal(err)
	}
	base := "/admin/events/" + itoa(e.id)
	p := c.page(base+"/sell", false)
	companion := p.doc.Find(`input[name="type_` + itoa(e.companion) + `"]`)
	if companion.Length() != 1 || !strings.Contains(p.doc.Find(`label[for="sale-type_`+itoa(e.companion)+`"]`).Text(), "box office only") {
		t.Fatalf("the sale form has no field for the desk-only Companion")
	}

	f := sellForm(c, "sale-types-token-0123456", e.seats[0], e.seats[1], e.seats[2])
	f.Set("type_"+itoa(e.child), "1")
	f.Set("type_"+itoa(e.companion), "1")
	ans := c.postForm(base+"/sell", f, false)
	loc := saleLocation.FindStringSubmatch(ans.header.Get("Location"))
	if ans.status != http.StatusSeeOther || loc == nil {
		t.Fatalf("sale: %d, want 303; %s", ans.status, ans.doc.Find("#seat-message").Text())
	}
	// Child 12.50, Companion 0, Adult 20.00; 1.50 + 0.50 a ticket in cash; 2.00 +
	// 1.00 an order in cash.
	want := 1250 + 0 + 2000 + 3*200 + 300
	if n := count(t, a.Pool, `SELECT amount_cents FROM payments WHERE order_id = $1 AND provider = 'box_office'`, loc[2]); n != want {
		t.Errorf("the window took %d, want the cash quote %d", n, want)
	}
	if n := count(t, a.Pool, `SELECT sum(total_cents) FROM order_lines WHERE order_id = $1`, loc[2]); n != want {
		t.Errorf("order lines add up to %d, want %d", n, want)
	}
	receipt := c.page(ans.header.Get("Location"), false).doc.Find(".order-summary").Text()
	for _, w := range []string{"Child", "Companion", "Adult", "€41.50"} {
		if !strings.Contains(receipt, w) {
			t.Errorf("the receipt does not say %q: %s", w, receipt)
		}
	}
	// Refunded whole at the desk, the sale gives back in cash what the window took.
	orderID := int64(count(t, a.Pool, `SELECT $1::bigint`, loc[2]))
	c.refundVia(orderID, url.Values{"kind": {"refund"}, "whole": {"1"}})
	if n := count(t, a.Pool, `SELECT coalesce(sum(amount_cents), 0) FROM refunds WHERE order_id = $1 AND state = 'succeeded'`, orderID); n != want {
		t.Errorf("refunded at the desk: got %d, want the %d taken", n, want)
	}
	bookingtest.CheckMoney(t, a.Pool, e.id)

	f = sellForm(c, "sale-types-token-4567890", e.seats[3])
	f.Set("type_"+itoa(e.child), "1")
	if r := c.postForm(base+"/sell", f, false); r.status != http.StatusUnprocessableEntity || !seatFree(t, a.Pool, e.id, e.seats[3]) {
		t.Errorf("a Child alone at the window: got %d, want 422 and the seat left free", r.status)
	}

	buyer := a.newClient(t)
	h := buyer.hold(e.id, e.seats[5])
	if st := buyer.setType(h.HoldID, e.seats[5], e.companion); st != http.StatusBadRequest {
		t.Errorf("the desk-only Companion online: got %d, want 400", st)
	}
}
