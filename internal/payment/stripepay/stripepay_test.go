package stripepay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"

	"boxoffice/internal/booking"
	"boxoffice/internal/payment/stripepay/stripetest"
)

// provider is the adapter on the fake, with stripe-go's own retries set.
func provider(t *testing.T, f *stripetest.Fake, retries int64) *Provider {
	t.Helper()
	p, err := New(Config{SecretKey: stripetest.SecretKey, URL: f.URL, MaxNetworkRetries: stripe.Int64(retries)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func charge(method, key string) booking.ChargeRequest {
	return booking.ChargeRequest{Key: key, OrderID: 7, EventID: 3, AmountCents: 4500, Method: method}
}

func TestChargeSucceeds(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	p := provider(t, f, 0)
	if p.Name() != "stripe" {
		t.Fatalf("Name = %q", p.Name())
	}
	res, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_k1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.PaymentID == "" || res.State != booking.PaymentSucceeded {
		t.Fatalf("Charge = %+v, want a succeeded payment", res)
	}
	req := f.Last(t)
	want := map[string]string{
		"amount": "4500", "currency": "eur", "payment_method": "pm_card_visa", "confirm": "true",
		"payment_method_types[0]": "card", "error_on_requires_action": "true",
		"metadata[order_id]": "7", "metadata[event_id]": "3", "metadata[payment_key]": "pay_k1",
	}
	for k, v := range want {
		if req.Form[k] != v {
			t.Errorf("form %s = %q, want %q (form %v)", k, req.Form[k], v, req.Form)
		}
	}
	if req.Method != "POST" || req.Path != "/v1/payment_intents" || req.IdempotencyKey != "pay_k1" || req.Auth != "Bearer sk_test_fake" {
		t.Errorf("request %+v", req)
	}

	// The same key again: the same intent, nothing new charged.
	again, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_k1"))
	if err != nil || again != res {
		t.Fatalf("repeat = %+v, %v; want %+v", again, err, res)
	}
	if f.Intents() != 1 {
		t.Fatalf("%d intents after a repeated key, want 1", f.Intents())
	}

	res, err = p.Charge(t.Context(), charge("pm_card_processing", "pay_k2"))
	if err != nil || res.State != booking.PaymentProcessing {
		t.Fatalf("processing charge = %+v, %v", res, err)
	}
}

func TestChargeDefiniteFailures(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	p := provider(t, f, 0)
	for _, tc := range []struct {
		method    string
		want      error
		paymentID bool // the failed attempt is named
	}{
		{"pm_card_chargeDeclined", booking.ErrCardDeclined, true},
		{"pm_card_bogus", booking.ErrInvalidCard, false},
		{"pm_rate_limit", booking.ErrNotCharged, false},
		{"", booking.ErrInvalidCard, false},
	} {
		res, err := p.Charge(t.Context(), charge(tc.method, "pay_"+tc.method))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.method, err, tc.want)
		}
		if (res.PaymentID != "") != tc.paymentID {
			t.Errorf("%s: result %+v, want a payment id: %v", tc.method, res, tc.paymentID)
		}
	}
	if _, err := p.Charge(t.Context(), booking.ChargeRequest{Method: "pm_card_visa"}); !errors.Is(err, booking.ErrNotCharged) {
		t.Errorf("charge without key: %v, want ErrNotCharged", err)
	}
}

// A 500 leaves the outcome unknown: the error wraps none of the definite failures.
func TestChargeServerErrorIsUnknown(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	p := provider(t, f, 0)
	_, err := p.Charge(t.Context(), charge("pm_fail_500", "pay_k500"))
	if err == nil || errors.Is(err, booking.ErrCardDeclined) || errors.Is(err, booking.ErrInvalidCard) || errors.Is(err, booking.ErrNotCharged) {
		t.Fatalf("err = %v, want an unknown outcome", err)
	}
	if r := f.Last(t); r.IdempotencyKey != "pay_k500" {
		t.Errorf("Idempotency-Key %q, want pay_k500", r.IdempotencyKey)
	}
}

// A connection cut before the answer is retried by stripe-go with the same
// Idempotency-Key, so Stripe acts once.
func TestChargeRetryKeepsKey(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	var cut sync.Once
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		cutNow := false
		cut.Do(func() { cutNow = true })
		if cutNow {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}
		return cutNow
	})
	p := provider(t, f, 1)
	res, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_retry"))
	if err != nil || res.State != booking.PaymentSucceeded {
		t.Fatalf("Charge = %+v, %v", res, err)
	}
	requests := f.Requests()
	if len(requests) != 2 {
		t.Fatalf("%d requests, want the cut one and its retry", len(requests))
	}
	for _, r := range requests {
		if r.IdempotencyKey != "pay_retry" {
			t.Errorf("attempt with Idempotency-Key %q, want pay_retry", r.IdempotencyKey)
		}
	}
}

// A Stripe that cannot be reached is an unknown outcome too.
func TestChargeNetworkErrorIsUnknown(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	p := provider(t, f, 0)
	f.Server.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := p.Charge(ctx, charge("pm_card_visa", "pay_net"))
	if err == nil || errors.Is(err, booking.ErrCardDeclined) || errors.Is(err, booking.ErrInvalidCard) || errors.Is(err, booking.ErrNotCharged) {
		t.Fatalf("err = %v, want an unknown outcome", err)
	}
}

func TestLookUp(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	p := provider(t, f, 0)
	ok, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_ok"))
	if err != nil {
		t.Fatal(err)
	}
	declined, _ := p.Charge(t.Context(), charge("pm_card_chargeDeclined", "pay_no"))

	st, err := p.LookUp(t.Context(), booking.PaymentRef{PaymentID: ok.PaymentID})
	if err != nil || st != (booking.PaymentStatus{PaymentID: ok.PaymentID, State: booking.PaymentSucceeded, AmountCents: 4500}) {
		t.Fatalf("by id: %+v, %v", st, err)
	}
	if r := f.Last(t); r.Method != "GET" || r.Path != "/v1/payment_intents/"+ok.PaymentID || r.Form["expand[0]"] != "latest_charge" {
		t.Errorf("by id: request %+v", r)
	}

	st, err = p.LookUp(t.Context(), booking.PaymentRef{Key: "pay_ok"})
	if err != nil || st.PaymentID != ok.PaymentID || st.State != booking.PaymentSucceeded {
		t.Fatalf("by key: %+v, %v", st, err)
	}
	if r := f.Last(t); r.Path != "/v1/payment_intents/search" || r.Form["query"] != "metadata['payment_key']:'pay_ok'" {
		t.Errorf("by key: request %+v", r)
	}

	st, err = p.LookUp(t.Context(), booking.PaymentRef{PaymentID: declined.PaymentID})
	if err != nil || st.State != booking.PaymentFailed {
		t.Fatalf("declined: %+v, %v", st, err)
	}
	st, err = p.LookUp(t.Context(), booking.PaymentRef{PaymentID: "pi_unknown"})
	if err != nil || st.State != booking.PaymentNotFound {
		t.Fatalf("unknown id: %+v, %v", st, err)
	}
	st, err = p.LookUp(t.Context(), booking.PaymentRef{Key: "pay_never"})
	if err != nil || st.State != booking.PaymentNotFound {
		t.Fatalf("unknown key: %+v, %v", st, err)
	}
	if _, err := p.LookUp(t.Context(), booking.PaymentRef{}); err == nil {
		t.Fatal("lookup of nothing: no error")
	}
}

// A 404 that is not Stripe's "no such object" (a wrong URL, a proxy) is an error,
// never "nothing was charged".
func TestLookUpForeign404IsAnError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	p, err := New(Config{SecretKey: "sk_test_fake", URL: srv.URL, MaxNetworkRetries: stripe.Int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.LookUp(t.Context(), booking.PaymentRef{PaymentID: "pi_x"}); err == nil {
		t.Fatalf("LookUp = %+v, want an error", st)
	}
}

func TestRefund(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	p := provider(t, f, 0)
	ok, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_r"))
	if err != nil {
		t.Fatal(err)
	}
	req := booking.RefundRequest{Key: "refund_k1", PaymentID: ok.PaymentID, OrderID: 7, EventID: 3, AmountCents: 4500, Reason: "late success"}
	res, err := p.Refund(t.Context(), req)
	if err != nil || res.RefundID == "" || res.State != booking.RefundPending {
		t.Fatalf("Refund = %+v, %v", res, err)
	}
	r := f.Last(t)
	want := map[string]string{
		"payment_intent": ok.PaymentID, "amount": "4500", "metadata[refund_key]": "refund_k1",
		"metadata[order_id]": "7", "metadata[event_id]": "3", "metadata[reason]": "late success",
	}
	for k, v := range want {
		if r.Form[k] != v {
			t.Errorf("form %s = %q, want %q", k, r.Form[k], v)
		}
	}
	if r.Path != "/v1/refunds" || r.IdempotencyKey != "refund_k1" {
		t.Errorf("request %+v", r)
	}
	again, err := p.Refund(t.Context(), req)
	if err != nil || again != res {
		t.Fatalf("repeat = %+v, %v; want %+v", again, err, res)
	}
	st, err := p.LookUp(t.Context(), booking.PaymentRef{PaymentID: ok.PaymentID})
	if err != nil || st.RefundedCents != 4500 {
		t.Fatalf("after refund: %+v, %v; want 4500 refunded once", st, err)
	}
	n := f.Count()
	if _, err := p.Refund(t.Context(), booking.RefundRequest{PaymentID: ok.PaymentID, AmountCents: 1}); err == nil || f.Count() != n {
		t.Fatalf("refund without key: %v, and %d calls", err, f.Count()-n)
	}
}

func TestStates(t *testing.T) {
	t.Parallel()
	for s, want := range map[stripe.PaymentIntentStatus]booking.PaymentState{
		"succeeded": booking.PaymentSucceeded, "processing": booking.PaymentProcessing,
		"requires_action": booking.PaymentProcessing, "requires_payment_method": booking.PaymentFailed,
		"canceled": booking.PaymentFailed,
	} {
		if got := intentState(s); got != want {
			t.Errorf("intentState(%s) = %s, want %s", s, got, want)
		}
	}
	for s, want := range map[stripe.RefundStatus]booking.RefundState{
		"pending": booking.RefundPending, "requires_action": booking.RefundPending,
		"succeeded": booking.RefundSucceeded, "failed": booking.RefundFailed, "canceled": booking.RefundFailed,
	} {
		if got := refundState(s); got != want {
			t.Errorf("refundState(%s) = %s, want %s", s, got, want)
		}
	}
}

// TestLookUpRefund: a refund is retrieved by its id, or found by its key among its
// PaymentIntent's refunds (over more than one page), also once Stripe has forgotten
// the key; a pending refund that fails later is seen failed; unknown ones are not
// found.
func TestLookUpRefund(t *testing.T) {
	t.Parallel()
	f := stripetest.New(t)
	p := provider(t, f, 0)
	pi, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_lr"))
	if err != nil {
		t.Fatal(err)
	}
	refund := func(key string) booking.RefundResult {
		t.Helper()
		res, err := p.Refund(t.Context(), booking.RefundRequest{Key: key, PaymentID: pi.PaymentID, OrderID: 7, EventID: 3, AmountCents: 100})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := refund("refund_first")
	for i := range 12 { // the list's default page is 10
		refund(fmt.Sprintf("refund_%d", i))
	}
	f.ForgetKeys()

	st, err := p.LookUpRefund(t.Context(), booking.RefundRef{RefundID: first.RefundID})
	if want := (booking.RefundStatus{RefundID: first.RefundID, State: booking.RefundSucceeded, AmountCents: 100}); err != nil || st != want {
		t.Fatalf("by id: got %+v, %v, want %+v", st, err, want)
	}
	if r := f.Last(t); r.Method != "GET" || r.Path != "/v1/refunds/"+first.RefundID {
		t.Errorf("by id: request %+v", r)
	}
	st, err = p.LookUpRefund(t.Context(), booking.RefundRef{PaymentID: pi.PaymentID, Key: "refund_first"})
	if err != nil || st.RefundID != first.RefundID || st.State != booking.RefundSucceeded {
		t.Fatalf("by key: got %+v, %v, want %s succeeded", st, err, first.RefundID)
	}
	if r := f.Last(t); r.Path != "/v1/refunds" || r.Form["payment_intent"] != pi.PaymentID || r.Form["starting_after"] == "" {
		t.Errorf("by key, the last page: request %+v", r)
	}

	f.HoldRefunds(true)
	held := refund("refund_held")
	if st, _ := p.LookUpRefund(t.Context(), booking.RefundRef{RefundID: held.RefundID}); st.State != booking.RefundPending {
		t.Errorf("held: got %+v, want pending", st)
	}
	f.SettleRefund(held.RefundID, "failed")
	if st, _ := p.LookUpRefund(t.Context(), booking.RefundRef{PaymentID: pi.PaymentID, Key: "refund_held"}); st.State != booking.RefundFailed {
		t.Errorf("failed later: got %+v, want failed", st)
	}
	if n := f.Refunds(pi.PaymentID); n != 13 {
		t.Errorf("refunds not failed: got %d, want 13", n)
	}

	for _, ref := range []booking.RefundRef{
		{RefundID: "re_unknown"}, {PaymentID: pi.PaymentID, Key: "refund_never"}, {PaymentID: "pi_unknown", Key: "refund_first"},
	} {
		if st, err := p.LookUpRefund(t.Context(), ref); err != nil || st.State != booking.RefundNotFound {
			t.Errorf("%+v: got %+v, %v, want not found", ref, st, err)
		}
	}
	if _, err := p.LookUpRefund(t.Context(), booking.RefundRef{Key: "refund_first"}); err == nil {
		t.Error("lookup by key without a payment: no error")
	}
}
