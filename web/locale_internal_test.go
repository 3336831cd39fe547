package web

import (
	"testing"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
)

// TestShopLocaleWords: the buyer pages' price words follow the shop's format, cents
// and all (TestShopLocaleBuyerPages sees whole euros on the pages): a price list's
// figure, a range, and the order page's refund notes.
func TestShopLocaleWords(t *testing.T) {
	t.Parallel()
	de, err := money.New("de")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ got, want string }{
		{allInText(de, 1250, booking.AllInPrices{}), "12,50\u00a0€"},
		{allInText(money.Shop{}, 1250, booking.AllInPrices{}), "€12.50"},
		{priceRange(de, 4500, 123450), "45\u00a0€–1.234,50\u00a0€"},
		{seatPriceText(de, 9500, booking.AllInPrices{}), "95\u00a0€"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	notes := refundNotes(de, []booking.OrderRefund{{AmountCents: 1250, Reason: booking.ReasonStaffRefund, Done: true}})
	if want := "The box office refunded 12,50\u00a0€ for tickets of this order."; len(notes) != 1 || notes[0] != want {
		t.Errorf("refund notes: got %q, want [%q]", notes, want)
	}
}
