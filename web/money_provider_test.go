package web_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"boxoffice/internal/apptest"
	"boxoffice/internal/payment/stripepay/stripetest"
)

// TestMoneyCheckoutNamesProvider: the checkout answer names the payment provider the
// program is configured with, and lists the test cards only with the built-in test
// provider, whose cards they are; with Stripe there are none to list (a buyer pays
// with a Stripe PaymentMethod).
func TestMoneyCheckoutNamesProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider  string
		testCards bool
	}{
		{"test", true},
		{"stripe", false},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			var app *testApp
			if tc.provider == "stripe" {
				app = newStripeApp(t, stripetest.New(t))
			} else {
				app = newTestApp(t)
			}
			c := app.newClient(t)
			h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
			st, raw, _ := c.raw("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "ada@example.com"}, nil)
			if st != http.StatusCreated {
				t.Fatalf("checkout: got %d %s, want 201", st, truncate(raw))
			}
			var ans struct {
				Payment map[string]json.RawMessage `json:"payment"`
			}
			if err := json.Unmarshal(raw, &ans); err != nil {
				t.Fatal(err)
			}
			if got := string(ans.Payment["provider"]); got != `"`+tc.provider+`"` {
				t.Errorf("provider: got %s, want %q", got, tc.provider)
			}
			cards, listed := ans.Payment["testCards"]
			if listed != tc.testCards {
				t.Errorf("test cards: got %s, want listed %v", cards, tc.testCards)
			}
			var byCard map[string]string
			if listed {
				if err := json.Unmarshal(cards, &byCard); err != nil || byCard["4242 4242 4242 4242"] != "succeeds" {
					t.Errorf("test cards: got %s (%v), want 4242 4242 4242 4242 among them", cards, err)
				}
			}
		})
	}
}

// newStripeApp starts the program with PAYMENT_PROVIDER=stripe against the local
// Stripe fake, which delivers its signed webhooks to the program.
func newStripeApp(t *testing.T, fake *stripetest.Fake, opts ...func(*appOptions)) *testApp {
	t.Helper()
	var o appOptions
	o.Env = map[string]string{
		"PAYMENT_PROVIDER": "stripe", "STRIPE_SECRET_KEY": stripetest.SecretKey, "STRIPE_API_URL": fake.URL,
	}
	for _, f := range opts {
		f(&o)
	}
	p := apptest.New(t, o)
	url := p.Serve(t)
	fake.SendWebhooks(url+"/api/v1/payments/webhook", apptest.WebhookSecret)
	return &testApp{URL: url, Pool: p.Pool, Booking: p.Booking, Redis: p.Redis, Prefix: p.Prefix, EventID: p.EventID, App: p}
}
