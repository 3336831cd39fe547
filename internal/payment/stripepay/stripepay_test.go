package stripepay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"

	"boxoffice/internal/booking"
)

// fakeStripe is a local stand-in for the Stripe endpoints the adapter calls. It keeps
// payment intents by id and by idempotency key, answers a repeated key with the first
// answer, as Stripe does, and records every request.
//
// Payment methods choose the outcome: pm_card_visa succeeds, pm_card_processing
// stays processing, pm_card_chargeDeclined is declined (402 card_error),
// pm_card_bogus does not exist (400 on payment_method), pm_fail_500 is a 500, and
// pm_rate_limit a 429.
type fakeStripe struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests []fakeRequest
	intents  map[string]map[string]any // by id
	byKey    map[string]fakeAnswer     // by Idempotency-Key
	n        int
}

type fakeRequest struct {
	Method, Path, IdempotencyKey, Auth string
	Form                               map[string]string
}

type fakeAnswer struct {
	status int
	body   any
}

func newFake(t *testing.T) *fakeStripe {
	f := &fakeStripe{t: t, intents: map[string]map[string]any{}, byKey: map[string]fakeAnswer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/payment_intents", f.idempotent(f.createIntent))
	mux.HandleFunc("GET /v1/payment_intents/search", f.searchIntents)
	mux.HandleFunc("GET /v1/payment_intents/{id}", f.getIntent)
	mux.HandleFunc("POST /v1/refunds", f.idempotent(f.createRefund))
	f.srv = httptest.NewServer(f.record(mux))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeStripe) provider(t *testing.T, retries int64) *Provider {
	p, err := New(Config{SecretKey: "sk_test_fake", URL: f.srv.URL, MaxNetworkRetries: stripe.Int64(retries)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fakeStripe) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			f.t.Errorf("fake: %v", err)
		}
		form := map[string]string{}
		for k, v := range r.Form {
			form[k] = strings.Join(v, ",")
		}
		f.mu.Lock()
		f.requests = append(f.requests, fakeRequest{r.Method, r.URL.Path, r.Header.Get("Idempotency-Key"), r.Header.Get("Authorization"), form})
		f.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (f *fakeStripe) last(t *testing.T) fakeRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		t.Fatal("no request reached the fake")
	}
	return f.requests[len(f.requests)-1]
}

func (f *fakeStripe) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// idempotent answers a repeated Idempotency-Key with the first answer.
func (f *fakeStripe) idempotent(h func(r *http.Request) fakeAnswer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		f.mu.Lock()
		a, ok := f.byKey[key]
		f.mu.Unlock()
		if !ok {
			a = h(r)
			if a.status < 500 && key != "" {
				f.mu.Lock()
				f.byKey[key] = a
				f.mu.Unlock()
			}
		}
		if a.status >= 500 {
			w.Header().Set("Stripe-Should-Retry", "true")
		}
		writeJSON(w, a.status, a.body)
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func apiError(typ, code, param, msg string, extra map[string]any) map[string]any {
	e := map[string]any{"type": typ, "code": code, "param": param, "message": msg}
	for k, v := range extra {
		e[k] = v
	}
	return map[string]any{"error": e}
}

func (f *fakeStripe) newIntent(r *http.Request, status string) map[string]any {
	amount, _ := strconv.ParseInt(r.Form.Get("amount"), 10, 64)
	meta := map[string]string{}
	for k, v := range r.Form {
		if m := regexp.MustCompile(`^metadata\[(.+)\]$`).FindStringSubmatch(k); m != nil {
			meta[m[1]] = v[0]
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	pi := map[string]any{
		"id": fmt.Sprintf("pi_fake%d", f.n), "object": "payment_intent", "amount": amount,
		"currency": r.Form.Get("currency"), "status": status, "metadata": meta,
		"latest_charge": map[string]any{"id": fmt.Sprintf("ch_fake%d", f.n), "object": "charge", "amount_refunded": 0},
	}
	f.intents[pi["id"].(string)] = pi
	return pi
}

func (f *fakeStripe) createIntent(r *http.Request) fakeAnswer {
	switch r.Form.Get("payment_method") {
	case "pm_card_visa":
		return fakeAnswer{200, f.newIntent(r, "succeeded")}
	case "pm_card_processing":
		return fakeAnswer{200, f.newIntent(r, "processing")}
	case "pm_card_chargeDeclined":
		pi := f.newIntent(r, "requires_payment_method")
		return fakeAnswer{402, apiError("card_error", "card_declined", "", "Your card was declined.",
			map[string]any{"decline_code": "generic_decline", "payment_intent": pi})}
	case "pm_card_bogus":
		return fakeAnswer{400, apiError("invalid_request_error", "resource_missing", "payment_method", "No such PaymentMethod: 'pm_card_bogus'", nil)}
	case "pm_rate_limit":
		return fakeAnswer{429, apiError("invalid_request_error", "rate_limit", "", "Too many requests.", nil)}
	default: // pm_fail_500
		return fakeAnswer{500, apiError("api_error", "", "", "Something went wrong on Stripe's end.", nil)}
	}
}

func (f *fakeStripe) getIntent(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	pi, ok := f.intents[r.PathValue("id")]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, 404, apiError("invalid_request_error", "resource_missing", "intent", "No such payment_intent", nil))
		return
	}
	writeJSON(w, 200, pi)
}

func (f *fakeStripe) searchIntents(w http.ResponseWriter, r *http.Request) {
	m := regexp.MustCompile(`^metadata\['payment_key'\]:'(.*)'$`).FindStringSubmatch(r.Form.Get("query"))
	if m == nil {
		writeJSON(w, 400, apiError("invalid_request_error", "", "query", "bad query", nil))
		return
	}
	data := []any{}
	f.mu.Lock()
	for _, pi := range f.intents {
		if pi["metadata"].(map[string]string)["payment_key"] == m[1] {
			data = append(data, pi)
		}
	}
	f.mu.Unlock()
	writeJSON(w, 200, map[string]any{"object": "search_result", "data": data, "has_more": false, "url": "/v1/payment_intents/search"})
}

func (f *fakeStripe) createRefund(r *http.Request) fakeAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	pi, ok := f.intents[r.Form.Get("payment_intent")]
	if !ok {
		return fakeAnswer{404, apiError("invalid_request_error", "resource_missing", "payment_intent", "No such payment_intent", nil)}
	}
	amount, _ := strconv.ParseInt(r.Form.Get("amount"), 10, 64)
	ch := pi["latest_charge"].(map[string]any)
	ch["amount_refunded"] = ch["amount_refunded"].(int) + int(amount)
	f.n++
	return fakeAnswer{200, map[string]any{
		"id": fmt.Sprintf("re_fake%d", f.n), "object": "refund", "amount": amount, "currency": "eur",
		"payment_intent": pi["id"], "status": "pending", "metadata": map[string]string{"refund_key": r.Form.Get("metadata[refund_key]")},
	}}
}

func charge(method, key string) booking.ChargeRequest {
	return booking.ChargeRequest{Key: key, OrderID: 7, EventID: 3, AmountCents: 4500, Method: method}
}

func TestChargeSucceeds(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	p := f.provider(t, 0)
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
	req := f.last(t)
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
	if len(f.intents) != 1 {
		t.Fatalf("%d intents after a repeated key, want 1", len(f.intents))
	}

	res, err = p.Charge(t.Context(), charge("pm_card_processing", "pay_k2"))
	if err != nil || res.State != booking.PaymentProcessing {
		t.Fatalf("processing charge = %+v, %v", res, err)
	}
}

func TestChargeDefiniteFailures(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	p := f.provider(t, 0)
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
	f := newFake(t)
	p := f.provider(t, 0)
	_, err := p.Charge(t.Context(), charge("pm_fail_500", "pay_k500"))
	if err == nil || errors.Is(err, booking.ErrCardDeclined) || errors.Is(err, booking.ErrInvalidCard) || errors.Is(err, booking.ErrNotCharged) {
		t.Fatalf("err = %v, want an unknown outcome", err)
	}
	if r := f.last(t); r.IdempotencyKey != "pay_k500" {
		t.Errorf("Idempotency-Key %q, want pay_k500", r.IdempotencyKey)
	}
}

// A connection cut before the answer is retried by stripe-go with the same
// Idempotency-Key, so Stripe acts once.
func TestChargeRetryKeepsKey(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	var cut sync.Once
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cutNow := false
		cut.Do(func() { cutNow = true })
		if cutNow {
			f.mu.Lock()
			f.requests = append(f.requests, fakeRequest{Method: r.Method, Path: r.URL.Path, IdempotencyKey: r.Header.Get("Idempotency-Key")})
			f.mu.Unlock()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		inner.ServeHTTP(w, r)
	})
	p := f.provider(t, 1)
	res, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_retry"))
	if err != nil || res.State != booking.PaymentSucceeded {
		t.Fatalf("Charge = %+v, %v", res, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 2 {
		t.Fatalf("%d requests, want the cut one and its retry", len(f.requests))
	}
	for _, r := range f.requests {
		if r.IdempotencyKey != "pay_retry" {
			t.Errorf("attempt with Idempotency-Key %q, want pay_retry", r.IdempotencyKey)
		}
	}
}

// A Stripe that cannot be reached is an unknown outcome too.
func TestChargeNetworkErrorIsUnknown(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	p := f.provider(t, 0)
	f.srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := p.Charge(ctx, charge("pm_card_visa", "pay_net"))
	if err == nil || errors.Is(err, booking.ErrCardDeclined) || errors.Is(err, booking.ErrInvalidCard) || errors.Is(err, booking.ErrNotCharged) {
		t.Fatalf("err = %v, want an unknown outcome", err)
	}
}

func TestLookUp(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	p := f.provider(t, 0)
	ok, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_ok"))
	if err != nil {
		t.Fatal(err)
	}
	declined, _ := p.Charge(t.Context(), charge("pm_card_chargeDeclined", "pay_no"))

	st, err := p.LookUp(t.Context(), booking.PaymentRef{PaymentID: ok.PaymentID})
	if err != nil || st != (booking.PaymentStatus{PaymentID: ok.PaymentID, State: booking.PaymentSucceeded, AmountCents: 4500}) {
		t.Fatalf("by id: %+v, %v", st, err)
	}
	if r := f.last(t); r.Method != "GET" || r.Path != "/v1/payment_intents/"+ok.PaymentID || r.Form["expand[0]"] != "latest_charge" {
		t.Errorf("by id: request %+v", r)
	}

	st, err = p.LookUp(t.Context(), booking.PaymentRef{Key: "pay_ok"})
	if err != nil || st.PaymentID != ok.PaymentID || st.State != booking.PaymentSucceeded {
		t.Fatalf("by key: %+v, %v", st, err)
	}
	if r := f.last(t); r.Path != "/v1/payment_intents/search" || r.Form["query"] != "metadata['payment_key']:'pay_ok'" {
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
	f := newFake(t)
	p := f.provider(t, 0)
	ok, err := p.Charge(t.Context(), charge("pm_card_visa", "pay_r"))
	if err != nil {
		t.Fatal(err)
	}
	req := booking.RefundRequest{Key: "refund_k1", PaymentID: ok.PaymentID, OrderID: 7, EventID: 3, AmountCents: 4500, Reason: "late success"}
	res, err := p.Refund(t.Context(), req)
	if err != nil || res.RefundID == "" || res.State != booking.RefundPending {
		t.Fatalf("Refund = %+v, %v", res, err)
	}
	r := f.last(t)
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
	n := f.count()
	if _, err := p.Refund(t.Context(), booking.RefundRequest{PaymentID: ok.PaymentID, AmountCents: 1}); err == nil || f.count() != n {
		t.Fatalf("refund without key: %v, and %d calls", err, f.count()-n)
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
