package payment

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

const testSecret = "whsec_test_secret"

func sampleEvent(typ string) Event {
	return Event{
		ID:          "evt_SAMPLE",
		Type:        typ,
		PaymentID:   "pi_SAMPLE",
		OrderID:     42,
		EventID:     7,
		AmountCents: 12_50,
		Created:     time.Unix(time.Now().Unix(), 0).UTC(),
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ        string
		wantStatus string
	}{
		{EventSucceeded, "succeeded"},
		{EventFailed, "requires_payment_method"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			t.Parallel()
			want := sampleEvent(tt.typ)
			payload, err := Payload(want)
			if err != nil {
				t.Fatalf("Payload: %v", err)
			}
			header := Sign(payload, testSecret, time.Now())
			if !strings.HasPrefix(header, "t=") || !strings.Contains(header, ",v1=") {
				t.Errorf("got header %q, want t=...,v1=...", header)
			}
			got, err := Verify(payload, header, testSecret)
			if err != nil {
				t.Fatalf("Verify: got error %v, want nil", err)
			}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}

			// The body must be what Stripe sends, so that either side can be
			// swapped for the real thing.
			var se stripe.Event
			if err := json.Unmarshal(payload, &se); err != nil {
				t.Fatalf("unmarshal as stripe.Event: %v", err)
			}
			if se.Object != "event" || se.APIVersion != stripe.APIVersion {
				t.Errorf("got object %q api_version %q, want event %q", se.Object, se.APIVersion, stripe.APIVersion)
			}
			obj := se.Data.Object
			checks := []struct{ key, got, want string }{
				{"object", str(obj["object"]), "payment_intent"},
				{"id", str(obj["id"]), want.PaymentID},
				{"currency", str(obj["currency"]), "eur"},
				{"status", str(obj["status"]), tt.wantStatus},
				{"metadata.order_id", se.GetObjectValue("metadata", "order_id"), "42"},
				{"metadata.event_id", se.GetObjectValue("metadata", "event_id"), "7"},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("data.object.%s: got %q, want %q", c.key, c.got, c.want)
				}
			}
			if amount, _ := obj["amount"].(float64); amount != 1250 {
				t.Errorf("data.object.amount: got %v, want 1250", obj["amount"])
			}
		})
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// mutate returns the sample success payload changed by edit, to build
// correctly signed events with wrong content.
func mutate(t *testing.T, edit func(ev, pi map[string]any)) []byte {
	t.Helper()
	payload, err := Payload(sampleEvent(EventSucceeded))
	if err != nil {
		t.Fatalf("Payload: %v", err)
	}
	var ev map[string]any
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	edit(ev, ev["data"].(map[string]any)["object"].(map[string]any))
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifyRejects(t *testing.T) {
	t.Parallel()
	good, err := Payload(sampleEvent(EventSucceeded))
	if err != nil {
		t.Fatalf("Payload: %v", err)
	}
	now := time.Now()
	signNow := func(p []byte) string { return Sign(p, testSecret, now) }
	fixed := func(h string) func([]byte) string { return func([]byte) string { return h } }
	goodHeader := signNow(good)
	meta := func(pi map[string]any) map[string]any { return pi["metadata"].(map[string]any) }

	tests := []struct {
		name    string
		payload []byte
		header  func(payload []byte) string
		wantErr error // a further error the result must wrap, if any
	}{
		{"altered payload", []byte(strings.Replace(string(good), `"amount":1250`, `"amount":1`, 1)), fixed(goodHeader), webhook.ErrNoValidSignature},
		{"altered signature", good, fixed(goodHeader[:len(goodHeader)-1] + flip(goodHeader[len(goodHeader)-1])), webhook.ErrNoValidSignature},
		{"wrong secret", good, fixed(Sign(good, "whsec_other", now)), webhook.ErrNoValidSignature},
		{"missing header", good, fixed(""), webhook.ErrNotSigned},
		{"garbled header", good, fixed("v1"), webhook.ErrInvalidHeader},
		{"six minutes old", good, fixed(Sign(good, testSecret, now.Add(-6*time.Minute))), webhook.ErrTooOld},
		{"malformed json", []byte(`{"id":`), signNow, nil},
		{"unknown type", mutate(t, func(ev, _ map[string]any) { ev["type"] = "charge.refunded" }), signNow, nil},
		{"no data object", mutate(t, func(ev, _ map[string]any) { ev["data"] = map[string]any{"object": "pi_1"} }), signNow, nil},
		{"not a payment intent", mutate(t, func(_, pi map[string]any) { pi["object"] = "charge" }), signNow, nil},
		{"missing order_id", mutate(t, func(_, pi map[string]any) { delete(meta(pi), "order_id") }), signNow, nil},
		{"missing metadata", mutate(t, func(_, pi map[string]any) { delete(pi, "metadata") }), signNow, nil},
		{"non-numeric event_id", mutate(t, func(_, pi map[string]any) { meta(pi)["event_id"] = "seven" }), signNow, nil},
		{"negative order_id", mutate(t, func(_, pi map[string]any) { meta(pi)["order_id"] = "-3" }), signNow, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Verify(tt.payload, tt.header(tt.payload), testSecret)
			if !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("got error %v (event %+v), want ErrInvalidEvent", err, got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("got error %v, want it to wrap %v", err, tt.wantErr)
			}
			if got != (Event{}) {
				t.Errorf("got event %+v, want the zero Event", got)
			}
		})
	}
}

// flip changes one hex digit so that the signature stays well-formed.
func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

func TestVerifyAcceptsOtherAPIVersion(t *testing.T) {
	t.Parallel()
	payload := mutate(t, func(ev, _ map[string]any) { ev["api_version"] = "2020-08-27" })
	got, err := Verify(payload, Sign(payload, testSecret, time.Now()), testSecret)
	if err != nil {
		t.Fatalf("got error %v, want nil", err)
	}
	if got.OrderID != 42 {
		t.Errorf("got order id %d, want 42", got.OrderID)
	}
}

func TestPayloadUnknownType(t *testing.T) {
	t.Parallel()
	if _, err := Payload(sampleEvent("charge.refunded")); err == nil {
		t.Errorf("got nil error, want one for an unknown type")
	}
}
