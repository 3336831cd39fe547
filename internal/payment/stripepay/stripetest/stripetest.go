// Package stripetest is a local fake of the Stripe API endpoints the Stripe adapter
// (stripepay) calls, and of Stripe's webhooks, for tests: no test may reach the
// internet. It serves PaymentIntents (create and confirm, retrieve, search by
// metadata) and Refunds, answers a repeated Idempotency-Key with the first answer as
// Stripe does, and records every request. Given a webhook address and signing secret
// (SendWebhooks), it delivers payment_intent.succeeded, payment_intent.payment_failed
// and refund.updated events there, signed as Stripe signs them, as Stripe would.
//
// Payment methods choose the outcome: pm_card_visa succeeds, pm_card_processing
// stays processing, pm_card_chargeDeclined is declined (402 card_error),
// pm_card_bogus does not exist (400 on payment_method), pm_fail_500 is a 500, and
// pm_rate_limit a 429. A refund is pending when created and succeeds at once after,
// unless HoldRefunds keeps it pending until SettleRefund; refunds are retrieved by id
// and listed by PaymentIntent. ForgetKeys plays the end of Stripe's 24-hour
// idempotency window.
//
// It imports no package of boxoffice: it is Stripe's side of the wire.
package stripetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

// SecretKey is a secret key the fake accepts (it accepts any, and records it).
const SecretKey = "sk_test_fake"

// Fake is the fake Stripe. Its zero value is not usable: see New.
type Fake struct {
	// URL is the API's base address, for stripepay.Config.URL or STRIPE_API_URL.
	URL string
	// Server serves the fake; a test may close it to make Stripe unreachable.
	Server *httptest.Server

	t         testing.TB
	intercept func(w http.ResponseWriter, r *http.Request) bool

	mu         sync.Mutex
	requests   []Request
	intents    map[string]map[string]any // by id
	refunds    map[string]map[string]any // by id, as they stand now
	byKey      map[string]answer         // by Idempotency-Key
	holdRe     bool                      // refunds stay pending (HoldRefunds)
	n          int
	hookURL    string
	hookSecret string
	deliveries []Delivery
	sending    sync.WaitGroup
}

// Request is one request the fake received.
type Request struct {
	Method, Path, IdempotencyKey, Auth string
	Form                               map[string]string
}

// Delivery is one webhook the fake sent, and how it was answered.
type Delivery struct {
	EventID, Type, ObjectID string
	Status                  int   // the endpoint's HTTP status; 0 if it could not be reached
	Err                     error // why it could not
}

type answer struct {
	status int
	body   any
}

// New starts a fake for the test; it stops, after its webhooks are delivered, when the
// test ends.
func New(t testing.TB) *Fake {
	f := &Fake{t: t, intents: map[string]map[string]any{}, refunds: map[string]map[string]any{}, byKey: map[string]answer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/payment_intents", f.idempotent(f.createIntent))
	mux.HandleFunc("GET /v1/payment_intents/search", f.searchIntents)
	mux.HandleFunc("GET /v1/payment_intents/{id}", f.get(f.intents, "intent", "payment_intent"))
	mux.HandleFunc("POST /v1/refunds", f.idempotent(f.createRefund))
	mux.HandleFunc("GET /v1/refunds", f.listRefunds)
	mux.HandleFunc("GET /v1/refunds/{id}", f.get(f.refunds, "id", "refund"))
	f.Server = httptest.NewServer(f.record(mux))
	f.URL = f.Server.URL
	t.Cleanup(f.Server.Close)
	t.Cleanup(f.sending.Wait) // first: cleanups run last-in first-out
	return f
}

// SendWebhooks has the fake deliver its events to url (the program's
// /api/v1/payments/webhook), signed with secret (PAYMENT_WEBHOOK_SECRET), from now
// on. Each goes once, after the answer to the request that caused it, as Stripe's
// do; Deliveries says how each was answered.
func (f *Fake) SendWebhooks(url, secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hookURL, f.hookSecret = url, secret
}

// Intercept has fn see every request after it is recorded and before the fake
// answers it; fn returns true if it dealt with the request itself (cut the connection,
// say).
func (f *Fake) Intercept(fn func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intercept = fn
}

// Requests returns every request so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Last returns the latest request, or fails the test if there was none.
func (f *Fake) Last(t testing.TB) Request {
	t.Helper()
	r := f.Requests()
	if len(r) == 0 {
		t.Fatal("stripetest: no request reached the fake")
	}
	return r[len(r)-1]
}

// Count is how many requests reached the fake.
func (f *Fake) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// Intents is how many PaymentIntents the fake made: charges, whatever their outcome.
func (f *Fake) Intents() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.intents)
}

// Deliveries returns the webhooks delivered so far.
func (f *Fake) Deliveries() []Delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Delivery(nil), f.deliveries...)
}

// DeliveriesDone is Deliveries once every webhook sent so far has had its answer: a
// delivery is recorded when the answer comes back, which may be after the endpoint
// has acted on it (and the order it confirms is seen confirmed).
func (f *Fake) DeliveriesDone() []Delivery {
	f.sending.Wait()
	return f.Deliveries()
}

func (f *Fake) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			f.t.Errorf("stripetest: %v", err)
		}
		form := map[string]string{}
		for k, v := range r.Form {
			form[k] = strings.Join(v, ",")
		}
		f.mu.Lock()
		f.requests = append(f.requests, Request{r.Method, r.URL.Path, r.Header.Get("Idempotency-Key"), r.Header.Get("Authorization"), form})
		intercept := f.intercept
		f.mu.Unlock()
		if intercept != nil && intercept(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// idempotent answers a repeated Idempotency-Key with the first answer.
func (f *Fake) idempotent(h func(r *http.Request) (answer, func())) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		f.mu.Lock()
		a, ok := f.byKey[key]
		f.mu.Unlock()
		var after func()
		if !ok {
			a, after = h(r)
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
		if after != nil {
			after()
		}
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

var metaKey = regexp.MustCompile(`^metadata\[(.+)\]$`)

func metadata(r *http.Request) map[string]string {
	meta := map[string]string{}
	for k, v := range r.Form {
		if m := metaKey.FindStringSubmatch(k); m != nil {
			meta[m[1]] = v[0]
		}
	}
	return meta
}

func (f *Fake) newIntent(r *http.Request, status string) map[string]any {
	amount, _ := strconv.ParseInt(r.Form.Get("amount"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	pi := map[string]any{
		"id": fmt.Sprintf("pi_fake%d", f.n), "object": "payment_intent", "amount": amount,
		"currency": r.Form.Get("currency"), "status": status, "metadata": metadata(r),
		"latest_charge": map[string]any{"id": fmt.Sprintf("ch_fake%d", f.n), "object": "charge", "amount_refunded": 0},
	}
	f.intents[pi["id"].(string)] = pi
	return pi
}

func (f *Fake) createIntent(r *http.Request) (answer, func()) {
	switch r.Form.Get("payment_method") {
	case "pm_card_visa":
		pi := f.newIntent(r, "succeeded")
		return answer{200, pi}, func() { f.send("payment_intent.succeeded", pi) }
	case "pm_card_processing":
		return answer{200, f.newIntent(r, "processing")}, nil
	case "pm_card_chargeDeclined":
		pi := f.newIntent(r, "requires_payment_method")
		return answer{402, apiError("card_error", "card_declined", "", "Your card was declined.",
			map[string]any{"decline_code": "generic_decline", "payment_intent": pi})}, func() { f.send("payment_intent.payment_failed", pi) }
	case "pm_card_bogus":
		return answer{400, apiError("invalid_request_error", "resource_missing", "payment_method", "No such PaymentMethod: 'pm_card_bogus'", nil)}, nil
	case "pm_rate_limit":
		return answer{429, apiError("invalid_request_error", "rate_limit", "", "Too many requests.", nil)}, nil
	default: // pm_fail_500
		return answer{500, apiError("api_error", "", "", "Something went wrong on Stripe's end.", nil)}, nil
	}
}

// get answers the object of objects named by the path's id, or Stripe's 404 for one
// it has no record of, naming param and what.
func (f *Fake) get(objects map[string]map[string]any, param, what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		o, ok := objects[r.PathValue("id")]
		f.mu.Unlock()
		if !ok {
			writeJSON(w, 404, apiError("invalid_request_error", "resource_missing", param, "No such "+what, nil))
			return
		}
		writeJSON(w, 200, o)
	}
}

var searchQuery = regexp.MustCompile(`^metadata\['payment_key'\]:'(.*)'$`)

func (f *Fake) searchIntents(w http.ResponseWriter, r *http.Request) {
	m := searchQuery.FindStringSubmatch(r.Form.Get("query"))
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

func (f *Fake) createRefund(r *http.Request) (answer, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pi, ok := f.intents[r.Form.Get("payment_intent")]
	if !ok {
		return answer{404, apiError("invalid_request_error", "resource_missing", "payment_intent", "No such payment_intent", nil)}, nil
	}
	amount, _ := strconv.ParseInt(r.Form.Get("amount"), 10, 64)
	ch := pi["latest_charge"].(map[string]any)
	ch["amount_refunded"] = ch["amount_refunded"].(int) + int(amount)
	f.n++
	refund := map[string]any{
		"id": fmt.Sprintf("re_fake%d", f.n), "object": "refund", "amount": amount, "currency": "eur",
		"payment_intent": pi["id"], "status": "pending", "metadata": metadata(r),
	}
	now := with(refund, "status", "succeeded")
	if f.holdRe {
		now = with(refund, "status", "pending")
		f.refunds[refund["id"].(string)] = now
		return answer{200, refund}, nil
	}
	f.refunds[refund["id"].(string)] = now
	return answer{200, refund}, func() { f.send("refund.updated", now) }
}

// with is a copy of object with key set to v: an answer already given (and kept for
// its key's repeats) never changes with the object.
func with(object map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(object))
	for k, x := range object {
		out[k] = x
	}
	out[key] = v
	return out
}

// listRefunds lists the refunds of the PaymentIntent payment_intent, newest first, in
// pages of limit (10 by default) after starting_after, as Stripe does.
func (f *Fake) listRefunds(w http.ResponseWriter, r *http.Request) {
	limit, err := strconv.Atoi(r.Form.Get("limit"))
	if err != nil || limit <= 0 {
		limit = 10
	}
	var ids []int
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, re := range f.refunds {
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "re_fake"))
		if re["payment_intent"] == r.Form.Get("payment_intent") {
			ids = append(ids, n)
		}
	}
	after, _ := strconv.Atoi(strings.TrimPrefix(r.Form.Get("starting_after"), "re_fake"))
	slices.SortFunc(ids, func(a, b int) int { return b - a })
	data := []any{}
	for _, n := range ids {
		if after == 0 || n < after {
			data = append(data, f.refunds[fmt.Sprintf("re_fake%d", n)])
		}
	}
	more := len(data) > limit
	data = data[:min(limit, len(data))]
	writeJSON(w, 200, map[string]any{"object": "list", "data": data, "has_more": more, "url": "/v1/refunds"})
}

// HoldRefunds has the refunds made from now on stay pending, with no webhook, until
// SettleRefund (hold false: they succeed at once again).
func (f *Fake) HoldRefunds(hold bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holdRe = hold
}

// SettleRefund moves a refund to status ("succeeded", "failed", "canceled"), as Stripe
// does later on its own (a refund may fail after it succeeded), and sends its
// refund.updated event.
func (f *Fake) SettleRefund(id, status string) {
	f.mu.Lock()
	re, ok := f.refunds[id]
	if ok {
		if status != "succeeded" && re["status"] != "failed" && re["status"] != "canceled" {
			ch := f.intents[re["payment_intent"].(string)]["latest_charge"].(map[string]any)
			ch["amount_refunded"] = ch["amount_refunded"].(int) - int(re["amount"].(int64))
		}
		re = with(re, "status", status)
		f.refunds[id] = re
	}
	f.mu.Unlock()
	if !ok {
		f.t.Errorf("stripetest: settle of unknown refund %s", id)
		return
	}
	f.send("refund.updated", re)
}

// ForgetKeys forgets every Idempotency-Key, as Stripe does 24 hours after a key's
// first use: a repeat of a key is a new request.
func (f *Fake) ForgetKeys() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.byKey)
}

// Refunds counts the refunds of a PaymentIntent that did not fail or get cancelled:
// what the buyer is paid back, one by one.
func (f *Fake) Refunds(paymentIntent string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, re := range f.refunds {
		if re["payment_intent"] == paymentIntent && re["status"] != "failed" && re["status"] != "canceled" {
			n++
		}
	}
	return n
}

// send delivers an event about object to the webhook address, if there is one, in
// the background.
func (f *Fake) send(typ string, object map[string]any) {
	f.mu.Lock()
	url, secret := f.hookURL, f.hookSecret
	if url == "" {
		f.mu.Unlock()
		return
	}
	f.n++
	id := fmt.Sprintf("evt_fake%d", f.n)
	payload, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "created": time.Now().Unix(), "api_version": stripe.APIVersion,
		"livemode": false, "data": map[string]any{"object": object},
	})
	f.sending.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.sending.Done()
		d := Delivery{EventID: id, Type: typ, ObjectID: object["id"].(string), Err: err}
		if err == nil {
			d.Status, d.Err = deliver(url, secret, payload)
		}
		f.mu.Lock()
		f.deliveries = append(f.deliveries, d)
		f.mu.Unlock()
	}()
}

// deliver posts one signed event, as Stripe does: the Stripe-Signature header made by
// stripe-go's own signing, from the raw payload and the time.
func deliver(url, secret string, payload []byte) (int, error) {
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: time.Now()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", signed.Header)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}
