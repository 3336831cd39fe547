// Package payment is boxoffice's payment seam: the built-in test provider,
// which behaves like Stripe does for the test cards, and the Stripe-format
// webhook events it sends, with their signing and verification.
//
// It is an adapter of the booking domain: TestProvider implements
// booking.Provider, and Event.Booking turns a verified event into booking's
// own PaymentEvent. booking imports nothing from here.
//
// Signatures are computed and checked by stripe-go's webhook package, so an
// endpoint that accepts events from the test provider accepts real Stripe
// events too, and the other way round.
//
// It never imports web or the generated queries: money moves through booking.
package payment

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"boxoffice/internal/booking"
)

// Event types boxoffice acts on. They are Stripe's names, so a real Stripe
// endpoint can be pointed at boxoffice unchanged.
const (
	// EventSucceeded confirms a payment: the order may be confirmed.
	EventSucceeded = "payment_intent.succeeded"
	// EventFailed reports a failed payment attempt: the order stays pending, with the
	// reason recorded, and its hold keeps its seats until it lapses.
	EventFailed = "payment_intent.payment_failed"
	// EventRefundUpdated reports where a refund stands (Event.RefundStatus):
	// "succeeded" or "failed" settle it.
	EventRefundUpdated = "refund.updated"
)

// SignatureHeader is the HTTP header carrying an event's signature.
const SignatureHeader = "Stripe-Signature"

// tolerance is how old a signature may be. It bounds how long a captured
// request can be replayed; five minutes is Stripe's own default.
const tolerance = 300 * time.Second

// ErrInvalidEvent is wrapped by every error Verify returns: whatever went
// wrong, the request must be refused and never acted on.
var ErrInvalidEvent = errors.New("invalid payment event")

// Event is a verified provider event, reduced to what boxoffice acts on.
type Event struct {
	ID          string    // provider event id, "evt_..."; unique per event, the same on redelivery
	Type        string    // EventSucceeded, EventFailed or EventRefundUpdated
	PaymentID   string    // "pi_..."
	PaymentKey  string    // the charge's idempotency key, from metadata "payment_key" (payment events)
	RefundID    string    // "re_..." (refund events)
	RefundKey   string    // the refund's idempotency key, from metadata "refund_key" (refund events)
	RefundState string    // the refund's status (refund events): "pending", "succeeded", "failed", …
	OrderID     int64     // from metadata "order_id"
	EventID     int64     // boxoffice event (show) id, from metadata "event_id"
	AmountCents int64     // the amount charged (or, for a refund, refunded), in euro cents
	Created     time.Time // when the provider created the event; whole seconds, as Stripe sends it
}

// Booking is the event as booking acts on it. A refund still pending is of no
// kind: booking records and ignores it.
func (e Event) Booking() booking.PaymentEvent {
	out := booking.PaymentEvent{
		ID: e.ID, PaymentID: e.PaymentID, PaymentKey: e.PaymentKey, RefundID: e.RefundID, RefundKey: e.RefundKey,
		OrderID: e.OrderID, EventID: e.EventID, AmountCents: e.AmountCents, Created: e.Created,
	}
	switch {
	case e.Type == EventSucceeded:
		out.Kind = booking.KindPaymentSucceeded
	case e.Type == EventFailed:
		out.Kind = booking.KindPaymentFailed
	case e.Type == EventRefundUpdated && e.RefundState == string(stripe.RefundStatusSucceeded):
		out.Kind = booking.KindRefundSucceeded
	case e.Type == EventRefundUpdated && (e.RefundState == string(stripe.RefundStatusFailed) || e.RefundState == string(stripe.RefundStatusCanceled)):
		out.Kind = booking.KindRefundFailed
	}
	return out
}

// Metadata keys under which a payment intent (or refund) carries boxoffice's ids
// and idempotency keys: written by whoever charges (the test provider, the Stripe
// adapter) and read back from the webhooks by Verify.
const (
	MetaOrderID    = "order_id"
	MetaEventID    = "event_id"
	MetaPaymentKey = "payment_key"
	MetaRefundKey  = "refund_key"
)

// eventJSON and intentJSON are the parts of Stripe's event and payment intent
// objects that the test provider fills in. stripe.Event is not marshalled
// directly because its data.object is only populated by unmarshalling.
type eventJSON struct {
	ID              string      `json:"id"`
	Object          string      `json:"object"`
	APIVersion      string      `json:"api_version"`
	Created         int64       `json:"created"`
	Data            dataJSON    `json:"data"`
	Livemode        bool        `json:"livemode"`
	PendingWebhooks int64       `json:"pending_webhooks"`
	Request         requestJSON `json:"request"`
	Type            string      `json:"type"`
}

type dataJSON struct {
	Object any `json:"object"` // an intentJSON or a refundJSON
}

// requestJSON says the event was caused by an API request; Stripe sends
// nulls for the ids when none is known.
type requestJSON struct {
	ID             *string `json:"id"`
	IdempotencyKey *string `json:"idempotency_key"`
}

type intentJSON struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Amount           int64             `json:"amount"`
	AmountReceived   int64             `json:"amount_received"`
	Created          int64             `json:"created"`
	Currency         string            `json:"currency"`
	LastPaymentError *paymentErrJSON   `json:"last_payment_error"`
	Livemode         bool              `json:"livemode"`
	Metadata         map[string]string `json:"metadata"`
	Status           string            `json:"status"`
}

// refundJSON is the part of Stripe's refund object the test provider fills in.
type refundJSON struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        int64             `json:"amount"`
	Created       int64             `json:"created"`
	Currency      string            `json:"currency"`
	Metadata      map[string]string `json:"metadata"`
	PaymentIntent string            `json:"payment_intent"`
	Reason        *string           `json:"reason"`
	Status        string            `json:"status"`
}

// paymentErrJSON is what Stripe reports on a declined test card.
type paymentErrJSON struct {
	Code        string `json:"code"`
	DeclineCode string `json:"decline_code"`
	Message     string `json:"message"`
	Type        string `json:"type"`
}

// Payload builds the JSON body of a Stripe-format event: an "event" object
// with api_version stripe.APIVersion whose data.object is the payment intent
// (or, for EventRefundUpdated, the refund), in euros, with boxoffice's ids as
// decimal strings in its metadata.
func Payload(ev Event) ([]byte, error) {
	meta := map[string]string{
		MetaOrderID: strconv.FormatInt(ev.OrderID, 10),
		MetaEventID: strconv.FormatInt(ev.EventID, 10),
	}
	var object any
	switch ev.Type {
	case EventSucceeded, EventFailed:
		if ev.PaymentKey != "" {
			meta[MetaPaymentKey] = ev.PaymentKey
		}
		intent := intentJSON{
			ID: ev.PaymentID, Object: "payment_intent", Amount: ev.AmountCents,
			Created: ev.Created.Unix(), Currency: "eur", Metadata: meta,
		}
		if ev.Type == EventSucceeded {
			intent.Status = string(stripe.PaymentIntentStatusSucceeded)
			intent.AmountReceived = ev.AmountCents
		} else {
			// A failed attempt leaves the intent waiting for another card, which
			// is how Stripe reports a decline.
			intent.Status = string(stripe.PaymentIntentStatusRequiresPaymentMethod)
			intent.LastPaymentError = &paymentErrJSON{
				Code:        "card_declined",
				DeclineCode: "generic_decline",
				Message:     "Your card was declined.",
				Type:        "card_error",
			}
		}
		object = intent
	case EventRefundUpdated:
		if ev.RefundKey != "" {
			meta[MetaRefundKey] = ev.RefundKey
		}
		object = refundJSON{
			ID: ev.RefundID, Object: "refund", Amount: ev.AmountCents, Created: ev.Created.Unix(),
			Currency: "eur", Metadata: meta, PaymentIntent: ev.PaymentID, Status: ev.RefundState,
		}
	default:
		return nil, fmt.Errorf("payment: payload for unknown event type %q", ev.Type)
	}
	return json.Marshal(eventJSON{
		ID:              ev.ID,
		Object:          "event",
		APIVersion:      stripe.APIVersion,
		Created:         ev.Created.Unix(),
		Data:            dataJSON{Object: object},
		PendingWebhooks: 1,
		Type:            ev.Type,
	})
}

// Sign returns the Stripe-Signature header value ("t=...,v1=...") for payload
// signed with secret at time t. A zero t means now.
func Sign(payload []byte, secret string, t time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload:   payload,
		Secret:    secret,
		Timestamp: t,
	}).Header
}

// Verify checks payload's signature in header (the Stripe-Signature value)
// against secret, refuses signatures older than five minutes, and parses the
// event. Every failure wraps ErrInvalidEvent: a bad, missing, stale or
// altered signature, malformed JSON, an unknown event type, or metadata whose
// order_id or event_id is missing or not a positive decimal number.
func Verify(payload []byte, header, secret string) (Event, error) {
	se, err := webhook.ConstructEventWithOptions(payload, header, secret, webhook.ConstructEventOptions{
		Tolerance: tolerance,
		// The payload fields read here have been stable across Stripe's API
		// versions, and an account may be pinned to an older one.
		IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	ev, err := fromStripe(se)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	return ev, nil
}

// fromStripe reduces a signed Stripe event to an Event, refusing anything
// boxoffice could not act on safely.
func fromStripe(se stripe.Event) (Event, error) {
	typ := string(se.Type)
	if typ != EventSucceeded && typ != EventFailed && typ != EventRefundUpdated {
		return Event{}, fmt.Errorf("unknown event type %q", typ)
	}
	if se.ID == "" {
		return Event{}, errors.New("event without id")
	}
	if se.Data == nil || len(se.Data.Raw) == 0 {
		return Event{}, errors.New("event without data.object")
	}
	ev := Event{ID: se.ID, Type: typ, Created: time.Unix(se.Created, 0).UTC()}
	var meta map[string]string
	if typ == EventRefundUpdated {
		var r stripe.Refund
		if err := json.Unmarshal(se.Data.Raw, &r); err != nil {
			return Event{}, fmt.Errorf("data.object: %w", err)
		}
		if r.Object != "refund" || r.ID == "" || r.PaymentIntent == nil || r.PaymentIntent.ID == "" {
			return Event{}, fmt.Errorf("data.object is not a refund of a payment intent (object %q, id %q)", r.Object, r.ID)
		}
		ev.RefundID, ev.PaymentID, ev.RefundState, ev.AmountCents = r.ID, r.PaymentIntent.ID, string(r.Status), r.Amount
		ev.RefundKey, meta = r.Metadata[MetaRefundKey], r.Metadata
	} else {
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(se.Data.Raw, &pi); err != nil {
			return Event{}, fmt.Errorf("data.object: %w", err)
		}
		if pi.Object != "payment_intent" || pi.ID == "" {
			return Event{}, fmt.Errorf("data.object is not a payment intent (object %q, id %q)", pi.Object, pi.ID)
		}
		ev.PaymentID, ev.AmountCents = pi.ID, pi.Amount
		ev.PaymentKey, meta = pi.Metadata[MetaPaymentKey], pi.Metadata
	}
	var err error
	if ev.OrderID, err = metaID(meta, MetaOrderID); err != nil {
		return Event{}, err
	}
	if ev.EventID, err = metaID(meta, MetaEventID); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// metaID reads a boxoffice id from payment intent metadata. Ids are database
// serials, so zero or negative values can only come from a foreign or forged
// intent.
func metaID(meta map[string]string, key string) (int64, error) {
	s, ok := meta[key]
	if !ok {
		return 0, fmt.Errorf("metadata %s missing", key)
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("metadata %s = %q, want a positive integer", key, s)
	}
	return id, nil
}
