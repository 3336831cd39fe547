// Package stripepay is boxoffice's Stripe adapter: a booking.Provider that charges
// with PaymentIntents, looks them up and refunds them through stripe-go.
//
// The mapping is thin because booking's provider interface follows Stripe's shape:
//
//   - Charge creates and confirms a PaymentIntent in euros, for the PaymentMethod id
//     the buyer gave (ChargeRequest.Method, "pm_…"), with the charge's key as its
//     Idempotency-Key and, with the order and show ids, in its metadata;
//   - LookUp retrieves the PaymentIntent by id, or searches for it by the key in its
//     metadata when the id never reached us;
//   - Refund creates a Refund of the PaymentIntent with the refund's key as its
//     Idempotency-Key and in its metadata;
//   - LookUpRefund retrieves the Refund by id, or finds it among its PaymentIntent's
//     refunds by the key in its metadata (which outlives Stripe's 24 hours of the
//     Idempotency-Key).
//
// Stripe's webhooks are verified and read by the payment package (payment.Verify),
// which the test provider's events share: the metadata keys written here are the ones
// it reads.
//
// It imports booking, payment and stripe-go only.
package stripepay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/stripe/stripe-go/v82"

	"boxoffice/internal/booking"
	"boxoffice/internal/payment"
)

// Name is the provider's name in boxoffice's records.
const Name = "stripe"

// Metadata keys under which a PaymentIntent (or Refund) carries boxoffice's ids and
// keys are payment's, which payment.Verify reads back from Stripe's webhooks; the
// reason for a refund is ours alone (Stripe's own reason field takes three values).
const (
	metaOrderID    = payment.MetaOrderID
	metaEventID    = payment.MetaEventID
	metaPaymentKey = payment.MetaPaymentKey
	metaRefundKey  = payment.MetaRefundKey
	metaReason     = "reason"
)

// currency is the one boxoffice sells in.
const currency = "eur"

// Config configures the adapter.
type Config struct {
	// SecretKey is the account's secret API key ("sk_live_…", "sk_test_…").
	SecretKey string
	// URL is the API's base address; empty is Stripe's own. Tests point it at a
	// local fake.
	URL string
	// MaxNetworkRetries bounds stripe-go's own retries of a call that failed on the
	// way (a connection error, a 5xx Stripe says to retry); they reuse the call's
	// idempotency key, so they never charge twice. Nil is stripe-go's default (2).
	MaxNetworkRetries *int64
	// HTTPClient makes the calls; nil is stripe-go's default (80 s timeout). Calls
	// also end with their context.
	HTTPClient *http.Client
	// Logger receives stripe-go's log lines; nil logs nothing.
	Logger *slog.Logger
}

// Provider charges, looks up and refunds through Stripe. It is safe for concurrent
// use.
type Provider struct {
	sc *stripe.Client
}

// The adapter as booking sees it.
var _ booking.Provider = (*Provider)(nil)

// New returns the adapter. It calls nothing until used.
func New(cfg Config) (*Provider, error) {
	if cfg.SecretKey == "" {
		return nil, errors.New("stripepay: no secret key")
	}
	bc := &stripe.BackendConfig{
		HTTPClient:        cfg.HTTPClient,
		MaxNetworkRetries: cfg.MaxNetworkRetries,
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if cfg.Logger != nil {
		bc.LeveledLogger = slogLogger{cfg.Logger}
	}
	if cfg.URL != "" {
		bc.URL = stripe.String(strings.TrimRight(cfg.URL, "/"))
	}
	return &Provider{sc: stripe.NewClient(cfg.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(bc)))}, nil
}

// Name is "stripe".
func (p *Provider) Name() string { return Name }

// Charge creates and confirms a PaymentIntent for req.Method, a PaymentMethod id, at
// most once per req.Key. A method that would need the buyer's action (3-D Secure)
// fails at once rather than waiting for a step boxoffice has no page for.
//
// A card error is ErrCardDeclined, a refused payment method ErrInvalidCard and any
// other refusal of the request (4xx but a conflict) ErrNotCharged; a network error,
// a 5xx or a conflict on the key leave the outcome unknown and are returned as they
// are.
func (p *Provider) Charge(ctx context.Context, req booking.ChargeRequest) (booking.ChargeResult, error) {
	if req.Key == "" || req.OrderID <= 0 || req.EventID <= 0 || req.AmountCents <= 0 {
		return booking.ChargeResult{}, fmt.Errorf("%w: charge needs a key and positive order id, event id and amount, got %q, %d, %d, %d",
			booking.ErrNotCharged, req.Key, req.OrderID, req.EventID, req.AmountCents)
	}
	if req.Method == "" {
		return booking.ChargeResult{}, fmt.Errorf("%w: no payment method", booking.ErrInvalidCard)
	}
	params := &stripe.PaymentIntentCreateParams{
		Amount:                stripe.Int64(req.AmountCents),
		Currency:              stripe.String(currency),
		PaymentMethod:         stripe.String(req.Method),
		PaymentMethodTypes:    []*string{stripe.String("card")},
		Confirm:               stripe.Bool(true),
		ErrorOnRequiresAction: stripe.Bool(true),
		Metadata: map[string]string{
			metaOrderID:    strconv.FormatInt(req.OrderID, 10),
			metaEventID:    strconv.FormatInt(req.EventID, 10),
			metaPaymentKey: req.Key,
		},
	}
	params.Context = ctx
	params.SetIdempotencyKey(req.Key)
	pi, err := p.sc.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return chargeError(err)
	}
	res := booking.ChargeResult{PaymentID: pi.ID, State: booking.PaymentProcessing}
	switch intentState(pi.Status) {
	case booking.PaymentSucceeded:
		res.State = booking.PaymentSucceeded
	case booking.PaymentFailed:
		return res, fmt.Errorf("%w: payment intent %s is %s", booking.ErrCardDeclined, pi.ID, pi.Status)
	}
	return res, nil
}

// chargeError sorts a failed PaymentIntent creation into booking's definite failures,
// or leaves it unknown.
func chargeError(err error) (booking.ChargeResult, error) {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return booking.ChargeResult{}, fmt.Errorf("stripe: charge: %w", err) // the network: unknown
	}
	var res booking.ChargeResult
	if se.PaymentIntent != nil {
		res.PaymentID = se.PaymentIntent.ID // the failed attempt, which the failure webhook names
	}
	switch {
	case se.HTTPStatusCode == 0 || se.HTTPStatusCode >= 500:
		// Stripe may have charged before failing to answer.
		return booking.ChargeResult{}, fmt.Errorf("stripe: charge: %w", err)
	case se.HTTPStatusCode == http.StatusConflict || se.Type == stripe.ErrorTypeIdempotency:
		// The key is in use by a request still running, or was used with other
		// parameters: that first request may have charged.
		return booking.ChargeResult{}, fmt.Errorf("stripe: charge: %w", err)
	case se.Type == stripe.ErrorTypeCard:
		return res, fmt.Errorf("%w: %w", booking.ErrCardDeclined, err)
	case se.Type == stripe.ErrorTypeInvalidRequest && strings.HasPrefix(se.Param, "payment_method"):
		return res, fmt.Errorf("%w: %w", booking.ErrInvalidCard, err)
	default:
		return res, fmt.Errorf("%w: %w", booking.ErrNotCharged, err)
	}
}

// LookUp retrieves the PaymentIntent ref.PaymentID or, without one, searches for the
// one whose metadata carries ref.Key. A PaymentIntent Stripe does not know is
// PaymentNotFound.
//
// Stripe's search is eventually consistent (an intent is usually searchable within a
// minute of its creation), so a lookup by key is only conclusive for charges older
// than that; reconciliation looks up only payments that have been quiet for longer.
func (p *Provider) LookUp(ctx context.Context, ref booking.PaymentRef) (booking.PaymentStatus, error) {
	var pi *stripe.PaymentIntent
	switch {
	case ref.PaymentID != "":
		params := &stripe.PaymentIntentRetrieveParams{}
		params.Context = ctx
		params.AddExpand("latest_charge")
		var err error
		pi, err = p.sc.V1PaymentIntents.Retrieve(ctx, ref.PaymentID, params)
		if isNotFound(err) {
			return booking.PaymentStatus{PaymentID: ref.PaymentID, State: booking.PaymentNotFound}, nil
		}
		if err != nil {
			return booking.PaymentStatus{}, fmt.Errorf("stripe: look up %s: %w", ref.PaymentID, err)
		}
	case ref.Key != "":
		params := &stripe.PaymentIntentSearchParams{}
		params.Context = ctx
		params.Query = fmt.Sprintf("metadata['%s']:'%s'", metaPaymentKey, quote(ref.Key))
		params.AddExpand("data.latest_charge")
		for found, err := range p.sc.V1PaymentIntents.Search(ctx, params) {
			if err != nil {
				return booking.PaymentStatus{}, fmt.Errorf("stripe: look up key %s: %w", ref.Key, err)
			}
			// One key makes one intent (it is the creation's idempotency key).
			pi = found
			break
		}
		if pi == nil {
			return booking.PaymentStatus{State: booking.PaymentNotFound}, nil
		}
	default:
		return booking.PaymentStatus{}, errors.New("stripe: look up needs a payment id or a key")
	}
	st := booking.PaymentStatus{PaymentID: pi.ID, State: intentState(pi.Status), AmountCents: pi.Amount}
	if pi.LatestCharge != nil {
		st.RefundedCents = pi.LatestCharge.AmountRefunded
	}
	return st, nil
}

// Refund refunds req.AmountCents of the PaymentIntent req.PaymentID, at most once per
// req.Key.
func (p *Provider) Refund(ctx context.Context, req booking.RefundRequest) (booking.RefundResult, error) {
	if req.Key == "" || req.PaymentID == "" || req.AmountCents <= 0 {
		return booking.RefundResult{}, fmt.Errorf("stripe: refund needs a key, a payment and a positive amount, got %q, %q, %d",
			req.Key, req.PaymentID, req.AmountCents)
	}
	params := &stripe.RefundCreateParams{
		PaymentIntent: stripe.String(req.PaymentID),
		Amount:        stripe.Int64(req.AmountCents),
		Metadata: map[string]string{
			metaOrderID:   strconv.FormatInt(req.OrderID, 10),
			metaEventID:   strconv.FormatInt(req.EventID, 10),
			metaRefundKey: req.Key,
		},
	}
	if req.Reason != "" {
		params.Metadata[metaReason] = req.Reason // Stripe's own reason field takes three fixed values
	}
	params.Context = ctx
	params.SetIdempotencyKey(req.Key)
	r, err := p.sc.V1Refunds.Create(ctx, params)
	if err != nil {
		return booking.RefundResult{}, fmt.Errorf("stripe: refund %s: %w", req.PaymentID, err)
	}
	return booking.RefundResult{RefundID: r.ID, State: refundState(r.Status)}, nil
}

// LookUpRefund retrieves the Refund ref.RefundID or, without one, lists the refunds of
// the PaymentIntent ref.PaymentID for the one whose metadata carries ref.Key. Listing
// (unlike search) is consistent at once: a refund made is listed. A Refund Stripe
// does not know is RefundNotFound.
func (p *Provider) LookUpRefund(ctx context.Context, ref booking.RefundRef) (booking.RefundStatus, error) {
	if ref.RefundID != "" {
		params := &stripe.RefundRetrieveParams{}
		params.Context = ctx
		r, err := p.sc.V1Refunds.Retrieve(ctx, ref.RefundID, params)
		if isNotFound(err) {
			return booking.RefundStatus{RefundID: ref.RefundID, State: booking.RefundNotFound}, nil
		} else if err != nil {
			return booking.RefundStatus{}, fmt.Errorf("stripe: look up refund %s: %w", ref.RefundID, err)
		}
		return booking.RefundStatus{RefundID: r.ID, State: refundState(r.Status), AmountCents: r.Amount}, nil
	}
	if ref.PaymentID == "" || ref.Key == "" {
		return booking.RefundStatus{}, errors.New("stripe: refund look up needs a refund id, or a payment and a key")
	}
	params := &stripe.RefundListParams{PaymentIntent: stripe.String(ref.PaymentID)}
	params.Context = ctx
	for r, err := range p.sc.V1Refunds.List(ctx, params) {
		if isNotFound(err) {
			break // no such PaymentIntent, so no refund of it
		} else if err != nil {
			return booking.RefundStatus{}, fmt.Errorf("stripe: look up refund key %s: %w", ref.Key, err)
		}
		if r.Metadata[metaRefundKey] == ref.Key {
			return booking.RefundStatus{RefundID: r.ID, State: refundState(r.Status), AmountCents: r.Amount}, nil
		}
	}
	return booking.RefundStatus{State: booking.RefundNotFound}, nil
}

// intentState maps a PaymentIntent's status to booking's.
func intentState(s stripe.PaymentIntentStatus) booking.PaymentState {
	switch s {
	case stripe.PaymentIntentStatusSucceeded:
		return booking.PaymentSucceeded
	case stripe.PaymentIntentStatusRequiresPaymentMethod, stripe.PaymentIntentStatusCanceled:
		return booking.PaymentFailed // declined, or given up: nothing taken
	default: // processing, requires_action, requires_confirmation, requires_capture
		return booking.PaymentProcessing
	}
}

// refundState maps a Refund's status to booking's.
func refundState(s stripe.RefundStatus) booking.RefundState {
	switch s {
	case stripe.RefundStatusSucceeded:
		return booking.RefundSucceeded
	case stripe.RefundStatusFailed, stripe.RefundStatusCanceled:
		return booking.RefundFailed
	default: // pending, requires_action
		return booking.RefundPending
	}
}

// isNotFound reports Stripe's answer for an object it has no record of. Both the
// status and the code are required: a 404 from anything else on the way (a proxy, a
// wrong URL) must not read as "nothing was charged".
func isNotFound(err error) bool {
	var se *stripe.Error
	return errors.As(err, &se) && se.HTTPStatusCode == http.StatusNotFound && se.Code == stripe.ErrorCodeResourceMissing
}

// quote escapes a value for a single-quoted search query string.
func quote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

// slogLogger hands stripe-go's log lines to slog. Its errors are the calls' errors,
// which the caller reports, so they are warnings here.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Debugf(f string, v ...any) { s.l.Debug("stripe: " + fmt.Sprintf(f, v...)) }
func (s slogLogger) Infof(f string, v ...any)  { s.l.Debug("stripe: " + fmt.Sprintf(f, v...)) }
func (s slogLogger) Warnf(f string, v ...any)  { s.l.Warn("stripe: " + fmt.Sprintf(f, v...)) }
func (s slogLogger) Errorf(f string, v ...any) { s.l.Warn("stripe: " + fmt.Sprintf(f, v...)) }
