// Package payment is boxoffice's payment seam: the built-in test provider,
// which behaves like Stripe does for the test cards, and the Stripe-format
// webhook events it sends, with their signing and verification.
//
// Signatures are computed and checked by stripe-go's webhook package, so an
// endpoint that accepts events from the test provider accepts real Stripe
// events too, and the other way round.
package payment

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

// Event types boxoffice acts on. They are Stripe's names, so a real Stripe
// endpoint can be pointed at boxoffice unchanged.
const (
	// EventSucceeded confirms a payment: the order may be confirmed.
	EventSucceeded = "payment_intent.succeeded"
	// EventFailed reports a failed payment attempt: the order stays pending, with the
	// reason recorded, and its hold keeps its seats until it lapses.
	EventFailed = "payment_intent.payment_failed"
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
	Type        string    // EventSucceeded or EventFailed
	PaymentID   string    // "pi_..."
	OrderID     int64     // from metadata "order_id"
	EventID     int64     // boxoffice event (show) id, from metadata "event_id"
	AmountCents int64     // the amount charged, in euro cents
	Created     time.Time // when the provider created the event; whole seconds, as Stripe sends it
}

// Metadata keys under which a payment intent carries boxoffice's ids.
const (
	metaOrderID = "order_id"
	metaEventID = "event_id"
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
	Object intentJSON `json:"object"`
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

// paymentErrJSON is what Stripe reports on a declined test card.
type paymentErrJSON struct {
	Code        string `json:"code"`
	DeclineCode string `json:"decline_code"`
	Message     string `json:"message"`
	Type        string `json:"type"`
}

// Payload builds the JSON body of a Stripe-format event: an "event" object
// with api_version stripe.APIVersion whose data.object is the payment intent,
// in euros, with boxoffice's ids as decimal strings in its metadata.
func Payload(ev Event) ([]byte, error) {
	intent := intentJSON{
		ID:       ev.PaymentID,
		Object:   "payment_intent",
		Amount:   ev.AmountCents,
		Created:  ev.Created.Unix(),
		Currency: "eur",
		Metadata: map[string]string{
			metaOrderID: strconv.FormatInt(ev.OrderID, 10),
			metaEventID: strconv.FormatInt(ev.EventID, 10),
		},
	}
	switch ev.Type {
	case EventSucceeded:
		intent.Status = string(stripe.PaymentIntentStatusSucceeded)
		intent.AmountReceived = ev.AmountCents
	case EventFailed:
		// A failed attempt leaves the intent waiting for another card, which
		// is how Stripe reports a decline.
		intent.Status = string(stripe.PaymentIntentStatusRequiresPaymentMethod)
		intent.LastPaymentError = &paymentErrJSON{
			Code:        "card_declined",
			DeclineCode: "generic_decline",
			Message:     "Your card was declined.",
			Type:        "card_error",
		}
	default:
		return nil, fmt.Errorf("payment: payload for unknown event type %q", ev.Type)
	}
	return json.Marshal(eventJSON{
		ID:              ev.ID,
		Object:          "event",
		APIVersion:      stripe.APIVersion,
		Created:         ev.Created.Unix(),
		Data:            dataJSON{Object: intent},
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
	if typ != EventSucceeded && typ != EventFailed {
		return Event{}, fmt.Errorf("unknown event type %q", typ)
	}
	if se.ID == "" {
		return Event{}, errors.New("event without id")
	}
	if se.Data == nil || len(se.Data.Raw) == 0 {
		return Event{}, errors.New("event without data.object")
	}
	var pi stripe.PaymentIntent
	if err := json.Unmarshal(se.Data.Raw, &pi); err != nil {
		return Event{}, fmt.Errorf("data.object: %w", err)
	}
	if pi.Object != "payment_intent" || pi.ID == "" {
		return Event{}, fmt.Errorf("data.object is not a payment intent (object %q, id %q)", pi.Object, pi.ID)
	}
	orderID, err := metaID(pi.Metadata, metaOrderID)
	if err != nil {
		return Event{}, err
	}
	eventID, err := metaID(pi.Metadata, metaEventID)
	if err != nil {
		return Event{}, err
	}
	return Event{
		ID:          se.ID,
		Type:        typ,
		PaymentID:   pi.ID,
		OrderID:     orderID,
		EventID:     eventID,
		AmountCents: pi.Amount,
		Created:     time.Unix(se.Created, 0).UTC(),
	}, nil
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
