package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"boxoffice/internal/booking"
	"boxoffice/internal/staff"
	"boxoffice/internal/ticketpdf/pdftest"
	"boxoffice/web"
)

// adultAndChildWithFive holds e's first two seats, the second as a Child, with the
// voucher FIVE, and returns the hold's id.
func (c *client) adultAndChildWithFive(e pricedEvent) string {
	c.t.Helper()
	h := c.hold(e.id, e.seats[0], e.seats[1])
	if st := c.setType(h.HoldID, e.seats[1], e.child); st != http.StatusOK {
		c.t.Fatalf("set Child: got %d", st)
	}
	if st := c.do("PUT", "/api/v1/holds/"+h.HoldID+"/voucher", map[string]string{"code": "FIVE"}, nil); st != http.StatusOK {
		c.t.Fatalf("voucher: got %d", st)
	}
	return h.HoldID
}

// TestOrderChargesShown: an order of an Adult and a Child with the voucher FIVE shows
// staff its itemised lines and the voucher's code and discount, and its ticket PDF
// gives each ticket's type and what it cost. Voided whole, the order gives the
// voucher's use back and its page says so, keeping the discount it had.
func TestOrderChargesShown(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	e := newPricedEvent(t, app.Pool, "priced-order")
	c := app.newClient(t)
	co := c.checkout(c.adultAndChildWithFive(e))
	c.pay(co.OrderID, "")
	waitOrder(t, c, co.OrderID, booking.StatusConfirmed)

	bo, _ := app.staffClient(t, staff.BoxOffice)
	orderURL := "/admin/orders/" + itoa(co.OrderID)
	p := bo.page(orderURL, false)
	if got := strings.TrimSpace(p.doc.Find("dd.voucher").Text()); got != "FIVE, −€5.00" {
		t.Errorf("voucher on the order page: got %q, want FIVE, −€5.00", got)
	}
	lines := p.doc.Find("table.order-lines").Text()
	for _, w := range []string{"Adult", "Child", "Order fee", "€33.00"} {
		if !strings.Contains(lines, w) {
			t.Errorf("the order page's lines lack %q: %s", w, lines)
		}
	}

	st, raw, _ := c.raw("GET", web.OrderURL(co.OrderID)+web.PDFSuffix, nil, nil)
	if st != http.StatusOK {
		t.Fatalf("PDF: got %d", st)
	}
	doc, err := pdftest.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Adult 20.00 + 1.75 - 5.00 off = 16.75; Child 12.50 + 1.75 = 14.25.
	all := strings.Join(doc.Text, " ")
	for _, w := range []string{"Adult, €16.75", "Child, €14.25"} {
		if !strings.Contains(all, w) {
			t.Errorf("the ticket PDF lacks %q", w)
		}
	}

	bo.refundVia(co.OrderID, url.Values{"kind": {"void"}, "whole": {"1"}})
	if n := count(t, app.Pool, `SELECT used FROM vouchers WHERE id = $1`, e.five); n != 0 {
		t.Errorf("voucher uses after the whole order was voided: got %d, want 0", n)
	}
	if got := bo.page(orderURL, false).doc.Find("dd.voucher").Text(); !strings.Contains(got, "−€5.00") || !strings.Contains(got, "given back") {
		t.Errorf("voucher on the voided order's page: got %q, want the discount and that its use was given back", got)
	}
}
