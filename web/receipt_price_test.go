package web_test

import (
	"net/http"
	"strings"
	"testing"

	"boxoffice/internal/booking"
)

// TestItemisedReceipt: an order of an Adult and a Child seat with a 5.00 voucher is
// charged its quote, and the confirmation email and the order page itemise it: the
// tickets by type with their prices, the fees per ticket and per order, the voucher's
// discount, the tax included and the total charged.
func TestItemisedReceipt(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	e := newPricedEvent(t, app.Pool, "priced-mail")
	c := app.newClient(t)
	holdID := c.adultAndChildWithFive(e)
	quoted := c.pricedHold(holdID).Quote.TotalCents
	// Adult 20.00 + Child 12.50 + 2 × 1.75 fees + 2.00 per order - 5.00 = 33.00.
	if quoted != 3300 {
		t.Fatalf("quote: got %d, want 3300", quoted)
	}
	co := app.checkout(c, holdID)
	if co.AmountCents != 3300 {
		t.Fatalf("checkout: got %d, want 3300", co.AmountCents)
	}
	c.pay(co.OrderID, "")
	waitOrder(t, c, co.OrderID, booking.StatusConfirmed)
	if n := count(t, app.Pool, `SELECT amount_cents FROM payments WHERE order_id = $1 AND state = 'succeeded'`, co.OrderID); n != 3300 {
		t.Errorf("charged %d, want 3300", n)
	}
	// VAT, per line: the voucher's 5.00 comes off the first line, Adult 21.75 - 5.00 =
	// 16.75 / 6 = 2.79; Child 14.25 / 6 = 2.375, half to even 2.38; 2.00 / 6 = 0.33.
	want := []string{"Adult", "Child", "€20.00", "€12.50", "Fees per ticket", "€3.50", "Order fee", "€2.00",
		"Voucher FIVE", "-€5.00", "VAT included", "€5.50", "€33.00"}
	msg := app.mailWith(t, "Your tickets")
	for _, w := range want {
		if !strings.Contains(msg.Text, w) {
			t.Errorf("email: no %q in\n%s", w, msg.Text)
		}
	}
	st, body, _ := c.raw("GET", "/orders/"+itoa(co.OrderID), nil, nil)
	if st != http.StatusOK {
		t.Fatalf("order page: got %d", st)
	}
	for _, w := range want {
		if !strings.Contains(string(body), w) {
			t.Errorf("order page: no %q", w)
		}
	}
}
