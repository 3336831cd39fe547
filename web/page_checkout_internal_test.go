package web

import (
	"testing"
	"time"
)

// TestCheckoutWording: expiry and form checks as people read them (amounts: internal/wording).
func TestCheckoutWording(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 14, 19, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		left time.Duration
		want string
	}{
		{20 * time.Second, "19:00 UTC (less than a minute from now)"},
		{65 * time.Second, "19:01 UTC (about a minute from now)"},
		{10 * time.Minute, "19:10 UTC (about 10 minutes from now)"},
	} {
		if got := expiryText(now.Add(tc.left), time.UTC, now); got != tc.want {
			t.Errorf("expiryText(+%v): got %q, want %q", tc.left, got, tc.want)
		}
	}
	for _, tc := range []struct {
		email, card string
		field       string
	}{
		{"ada@example.com", "4242 4242 4242 4242", ""},
		{"ada@example.com", "4242424242424242", ""},
		{"ada@example", "4242 4242 4242 4242", ""}, // mail.ParseAddress accepts a bare host, as the API does
		{"ada@example.com\x00", "4242 4242 4242 4242", "email"},
		{"ada@example.com", "4242-4242-4242-4242", "card"},
		{"ada@example.com", "4242 4242 4242 4242 4242", "card"},
	} {
		if _, field := checkCheckoutForm(checkoutForm{Email: tc.email, Card: tc.card}); field != tc.field {
			t.Errorf("checkCheckoutForm(%q, %q): got field %q, want %q", tc.email, tc.card, field, tc.field)
		}
	}
}
