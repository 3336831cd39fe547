package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
	"boxoffice/internal/mail/mailtest"
	"boxoffice/internal/payment/stripepay/stripetest"
)

// TestServeSellsWithStripe runs the whole program with PAYMENT_PROVIDER=stripe against
// the local Stripe fake and buys two seats through the JSON API, as a client would:
// the checkout names Stripe, the payment is a PaymentIntent created once under the
// payment's idempotency key (a repeat of the pay call with the same Idempotency-Key
// creates nothing more), the order is confirmed by Stripe's signed webhook alone, and
// the confirmation with both tickets reaches the buyer's mailbox.
func TestServeSellsWithStripe(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.URL(t)
	setup, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	eventID, err := demo.Create(t.Context(), setup, demo.DemoSpec(time.Now()))
	if err != nil {
		setup.Close()
		t.Fatal(err)
	}
	defer setup.Close()
	catcher := mailtest.New(t)
	to := mailtest.Address(t)
	fake := stripetest.New(t)
	const secret = "whsec_e2e_stripe_test_secret"
	env := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": os.Getenv("REDIS_URL"), "ADDR": "127.0.0.1:0",
		"REDIS_PREFIX": "test:serve-stripe:" + strings.TrimSuffix(to, "@boxoffice.test") + ":", "SHUTDOWN_TIMEOUT": "10s",
		"PAYMENT_PROVIDER": "stripe", "STRIPE_SECRET_KEY": stripetest.SecretKey, "STRIPE_API_URL": fake.URL,
		"PAYMENT_WEBHOOK_SECRET": secret, "SMTP_URL": catcher.SMTPURL,
	}
	if env["REDIS_URL"] == "" {
		t.Fatal("REDIS_URL not set: run tests through `make test`")
	}
	ctx, cancel := context.WithCancel(t.Context())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, nil, w)
		w.Close()
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve after shutdown: got %v, want nil", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not return within 20 s of its context ending")
		}
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v", err)
	}
	go io.Copy(io.Discard, out) //nolint:errcheck // drain the rest
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("got %q, want a line with the URL", line)
	}
	base := strings.Fields(line[i:])[0]
	fake.SendWebhooks(base+"/api/v1/payments/webhook", secret)

	c := newAPIClient(t, base)
	var hold struct {
		HoldID string `json:"holdId"`
		Seats  []any  `json:"seats"`
	}
	c.call("POST", fmt.Sprintf("/api/v1/events/%d/holds", eventID), `{"quantity": 2, "together": true}`, c.proved(), http.StatusCreated, &hold)
	var co struct {
		OrderID     int64 `json:"orderId"`
		AmountCents int64 `json:"amountCents"`
		Payment     struct {
			Provider  string            `json:"provider"`
			TestCards map[string]string `json:"testCards"`
		} `json:"payment"`
	}
	c.call("POST", "/api/v1/holds/"+hold.HoldID+"/checkout", `{"email": "`+to+`"}`, nil, http.StatusCreated, &co)
	if co.Payment.Provider != "stripe" || co.Payment.TestCards != nil || co.AmountCents <= 0 {
		t.Errorf("checkout: got %+v, want provider stripe, no test cards, an amount", co)
	}

	var pay, again struct {
		PaymentID string `json:"paymentId"`
		Status    string `json:"status"`
	}
	key := http.Header{"Idempotency-Key": {"pay-" + to}}
	payPath := fmt.Sprintf("/api/v1/orders/%d/pay", co.OrderID)
	c.call("POST", payPath, `{"card": "pm_card_visa"}`, key, http.StatusAccepted, &pay)
	c.call("POST", payPath, `{"card": "pm_card_visa"}`, key, http.StatusAccepted, &again)
	if pay.Status != "processing" || !strings.HasPrefix(pay.PaymentID, "pi_") || again != pay {
		t.Errorf("pay and its repeat: got %+v and %+v, want processing with a PaymentIntent id, twice the same", pay, again)
	}

	// The webhook, not the pay call, confirms the order.
	var order struct {
		Status  string `json:"status"`
		Tickets []struct {
			Code string `json:"code"`
		} `json:"tickets"`
	}
	deadline := time.Now().Add(15 * time.Second)
	for c.call("GET", fmt.Sprintf("/api/v1/orders/%d", co.OrderID), "", nil, http.StatusOK, &order); order.Status != "confirmed"; {
		if time.Now().After(deadline) {
			t.Fatalf("order: got %s after 15 s, want confirmed by Stripe's webhook (deliveries %+v)", order.Status, fake.Deliveries())
		}
		time.Sleep(20 * time.Millisecond) // polling, as a client does: the webhook is asynchronous
		c.call("GET", fmt.Sprintf("/api/v1/orders/%d", co.OrderID), "", nil, http.StatusOK, &order)
	}
	if len(order.Tickets) != 2 {
		t.Errorf("tickets: got %d, want 2", len(order.Tickets))
	}

	if n := fake.Intents(); n != 1 {
		t.Errorf("PaymentIntents at Stripe: got %d, want 1", n)
	}
	var payKey string
	if err := setup.QueryRow(t.Context(), `SELECT idempotency_key FROM payments WHERE order_id = $1 AND provider = 'stripe' AND provider_payment_id = $2`,
		co.OrderID, pay.PaymentID).Scan(&payKey); err != nil {
		t.Fatalf("the payment's record: %v", err)
	}
	for _, r := range fake.Requests() {
		if r.Method == "POST" && r.Path == "/v1/payment_intents" &&
			(r.IdempotencyKey != payKey || r.Form["metadata[order_id]"] != fmt.Sprint(co.OrderID) || r.Form["payment_method"] != "pm_card_visa") {
			t.Errorf("PaymentIntent request: got %+v, want Idempotency-Key %s, the order in its metadata, pm_card_visa", r, payKey)
		}
	}
	// The order is confirmed before the fake hears the webhook's answer: wait for it.
	var hooks []stripetest.Delivery
	for _, d := range fake.DeliveriesDone() {
		if d.ObjectID == pay.PaymentID {
			hooks = append(hooks, d)
		}
	}
	if len(hooks) != 1 || hooks[0].Type != "payment_intent.succeeded" || hooks[0].Status != http.StatusOK {
		t.Errorf("webhooks: got %+v, want one payment_intent.succeeded, answered 200", hooks)
	}

	mails := catcher.Wait(t, to, 1)
	msg, err := catcher.Message(t.Context(), mails[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(mails) != 1 || !strings.Contains(msg.Subject, fmt.Sprintf("(order %d)", co.OrderID)) || len(msg.Inline) != 2 {
		t.Errorf("email: got %d, the first %q with %d QR codes, want one confirmation of order %d with 2", len(mails), msg.Subject, len(msg.Inline), co.OrderID)
	}
	for _, tk := range order.Tickets {
		if !strings.Contains(msg.Text, tk.Code) {
			t.Errorf("the email lacks ticket %s", tk.Code)
		}
	}
}

// apiClient is one buyer of the JSON API: a session cookie and its CSRF token.
type apiClient struct {
	t    *testing.T
	base string
	http *http.Client
	csrf string
}

func newAPIClient(t *testing.T, base string) *apiClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &apiClient{t: t, base: base, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	var s struct {
		CSRFToken string `json:"csrfToken"`
	}
	c.call("GET", "/api/v1/session", "", nil, http.StatusOK, &s)
	c.csrf = s.CSRFToken
	return c
}

// proved is the header of a solved proof of work, which a new session's first hold
// needs.
func (c *apiClient) proved() http.Header {
	c.t.Helper()
	return http.Header{"X-Altcha": {solved(c.t, c.http, c.base)}}
}

// call sends body (JSON, or nothing) and decodes the answer into out, failing the test
// unless the status is want.
func (c *apiClient) call(method, path, body string, header http.Header, want int, out any) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, bytes.NewReader([]byte(body)))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-CSRF-Token", c.csrf)
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		c.t.Fatalf("%s %s: got %d %s, want %d", method, path, res.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: answer %q: %v", method, path, raw, err)
		}
	}
}
