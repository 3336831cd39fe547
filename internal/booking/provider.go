package booking

import (
	"context"
	"errors"
	"time"
)

// What booking needs of a payment provider. The domain owns these types; the adapters
// (internal/payment's test provider; a Stripe adapter, later) implement Provider and
// turn their webhooks into PaymentEvents, so booking imports no provider's package.
//
// The shape follows Stripe's, so that an adapter is a thin mapping: Charge is a
// PaymentIntent created and confirmed with an Idempotency-Key and the keys in its
// metadata; LookUp is a PaymentIntent retrieved by id, or searched by the metadata key
// when the id never reached us; Refund is a Refund created with an Idempotency-Key;
// LookUpRefund is a Refund retrieved by id, or found among its PaymentIntent's refunds
// by the key in its metadata.

// Provider takes, looks up and refunds payments. Each call that moves money carries an
// idempotency key: the provider acts at most once per key and answers a repeat with the
// first answer, so retrying after a lost answer never charges or refunds twice.
type Provider interface {
	// Name names the provider in the records ("test", "stripe"): payments and webhook
	// events are unique per provider.
	Name() string
	// Charge charges an order. Its answer is one of three:
	//   - no error: the provider took the charge under PaymentID; whether it succeeds
	//     comes later, by webhook (or a lookup);
	//   - an error wrapping ErrCardDeclined, ErrInvalidCard or ErrNotCharged: nothing
	//     was charged, for certain (the result may still name the failed attempt);
	//   - any other error: the outcome is unknown (a timeout, a 5xx, a lost answer),
	//     and the charge may have gone through.
	Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error)
	// LookUp reports where a payment stands, found by the provider's payment id or,
	// when that never reached us, by the charge's idempotency key. A payment the
	// provider has no record of is PaymentNotFound: nothing was charged. An error means
	// the provider could not say.
	LookUp(ctx context.Context, ref PaymentRef) (PaymentStatus, error)
	// Refund refunds a payment, at most once per req.Key while the provider keeps the
	// key (Stripe: 24 hours; after that a repeat makes a second refund). A pending
	// answer is confirmed later by the refund's webhook (or a lookup).
	Refund(ctx context.Context, req RefundRequest) (RefundResult, error)
	// LookUpRefund reports where one refund stands, found by the provider's refund id
	// or, when that never reached us, among the payment's refunds by the key it was
	// asked for under (kept with it, as Refund keeps it), however long ago. A refund
	// the provider has no record of is RefundNotFound: none was made under that key.
	// An error means the provider could not say.
	LookUpRefund(ctx context.Context, ref RefundRef) (RefundStatus, error)
}

// Definite charge failures: an error from Provider.Charge that wraps one of these
// means nothing was charged, so the order's payment claim is given up and the buyer
// may pay again. Every other error leaves the outcome unknown.
var (
	// ErrCardDeclined: the card (or other method) was declined.
	ErrCardDeclined = errors.New("card declined")
	// ErrInvalidCard: the card number (or method) is not one the provider accepts.
	ErrInvalidCard = errors.New("invalid card number")
	// ErrNotCharged: the provider refused the request before charging (closed, bad
	// request).
	ErrNotCharged = errors.New("payment not taken")
)

// ChargeRequest asks a provider to charge an order.
type ChargeRequest struct {
	// Key is the attempt's idempotency key, unique per attempt; the provider also
	// keeps it with the payment (Stripe: in its metadata), where lookups and webhooks
	// find it.
	Key              string
	OrderID, EventID int64 // carried in the payment's metadata, and back in its events
	AmountCents      int64 // euro cents, positive
	// Method is how the buyer pays: a card number for the test provider, a
	// PaymentMethod id for Stripe.
	Method string
	// Simulate is for the test provider only: what it should do (its delivery modes,
	// payment.Delivery). Real providers ignore it.
	Simulate string
}

// ChargeResult is a provider's answer to a charge that it took.
type ChargeResult struct {
	PaymentID string       // the provider's id, "pi_…"
	State     PaymentState // PaymentProcessing, or PaymentSucceeded when already known
}

// PaymentRef names a payment at the provider: by its id when known, else by the
// idempotency key of the charge that made it.
type PaymentRef struct {
	PaymentID string
	Key       string
}

// PaymentState is where a payment stands at the provider.
type PaymentState string

// Payment states at the provider.
const (
	PaymentProcessing PaymentState = "processing" // taken, outcome not yet known
	PaymentSucceeded  PaymentState = "succeeded"  // the money is taken
	PaymentFailed     PaymentState = "failed"     // declined or failed; nothing taken
	PaymentNotFound   PaymentState = "not_found"  // no such payment: nothing was charged
)

// PaymentStatus is a provider's answer to a lookup.
type PaymentStatus struct {
	PaymentID     string
	State         PaymentState
	AmountCents   int64 // charged
	RefundedCents int64 // of it, refunded (refunds that succeeded)
}

// RefundRequest asks a provider to refund a payment.
type RefundRequest struct {
	Key              string // the refund's idempotency key, kept with the refund (metadata)
	PaymentID        string // the provider's payment id
	OrderID, EventID int64  // carried in the refund's metadata, and back in its events
	AmountCents      int64
	Reason           string // booking's reason, for the provider's records
}

// RefundState is where a refund stands at the provider.
type RefundState string

// Refund states at the provider. A refund may fail after it succeeded (Stripe says so
// of some payment methods): succeeded is not final.
const (
	RefundPending   RefundState = "pending"
	RefundSucceeded RefundState = "succeeded"
	RefundFailed    RefundState = "failed"
	RefundNotFound  RefundState = "not_found" // lookups only: no such refund was made
)

// RefundResult is a provider's answer to a refund.
type RefundResult struct {
	RefundID string // the provider's id, "re_…"
	State    RefundState
}

// RefundRef names a refund at the provider: by its id when known, else by the
// idempotency key it was asked for under, among the refunds of PaymentID.
type RefundRef struct {
	RefundID  string
	PaymentID string
	Key       string
}

// RefundStatus is a provider's answer to a refund lookup.
type RefundStatus struct {
	RefundID    string
	State       RefundState
	AmountCents int64
}

// PaymentEventKind says what a provider event reports.
type PaymentEventKind string

// Kinds of provider events booking acts on.
const (
	KindPaymentSucceeded PaymentEventKind = "payment.succeeded"
	KindPaymentFailed    PaymentEventKind = "payment.failed"
	KindRefundSucceeded  PaymentEventKind = "refund.succeeded"
	KindRefundFailed     PaymentEventKind = "refund.failed"
)

// PaymentEvent is a verified provider event (a webhook, or a lookup's answer applied as
// if it were one), reduced to what booking acts on.
type PaymentEvent struct {
	// ID is the provider's event id, the same on every redelivery: booking acts on an
	// event once.
	ID         string
	Kind       PaymentEventKind
	PaymentID  string // the provider's payment id
	PaymentKey string // the charge's idempotency key, when the payment carries it
	RefundID   string // refund events: the provider's refund id
	RefundKey  string // refund events: the refund's idempotency key, when carried
	OrderID    int64
	EventID    int64 // the show
	// AmountCents is the payment's amount (payment events) or the refund's (refund
	// events).
	AmountCents int64
	Created     time.Time
}
