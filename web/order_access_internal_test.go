package web

import "testing"

// TestRedactURI: the secret query values of a logged request URI (an order's access
// token, a verification link's) are replaced, whatever else the query holds.
func TestRedactURI(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/orders/42?t=secret":                 "/orders/42?t=REDACTED",
		"/orders/42/tickets.pdf?x=1&t=secret": "/orders/42/tickets.pdf?x=1&t=REDACTED",
		"/verify?token=secret&t=s2":           "/verify?token=REDACTED&t=REDACTED",
		"/orders/42?%74=secret":               "/orders/42?%74=REDACTED",
		"/events/x/seats?section=A":           "/events/x/seats?section=A",
		"/orders/42":                          "/orders/42",
	} {
		if got := redactURI(in); got != want {
			t.Errorf("redactURI(%q): got %q, want %q", in, got, want)
		}
	}
}
