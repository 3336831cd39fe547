package web

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/payment"
)

// maxWebhookBody bounds a provider event; real ones are a few kilobytes.
const maxWebhookBody = 64 << 10

type webhookAnswerJSON struct {
	Received bool   `json:"received"`
	Outcome  string `json:"outcome"`
}

// paymentWebhook is the provider's signed callback: payment successes and failures,
// and refund updates. A bad, stale or altered signature is a 400 that changes nothing.
// payment verifies it and turns it into booking's own event; an event is acted on
// once however often it arrives; a 503 (database away) makes the provider deliver it
// again later.
func (s *server) paymentWebhook(c echo.Context) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxWebhookBody+1))
	if err != nil {
		return jsonError(err)
	}
	if len(body) > maxWebhookBody {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: "Webhook body too large."}
	}
	ev, err := payment.Verify(body, c.Request().Header.Get(payment.SignatureHeader), s.WebhookSecret)
	if err != nil {
		return err
	}
	outcome, err := s.Buyer.ApplyPayment(c.Request().Context(), s.ProviderName, ev.Booking())
	if err != nil {
		return err
	}
	s.Log.InfoContext(c.Request().Context(), "payment event", "event", ev.ID, "type", ev.Type, "order", ev.OrderID, "outcome", outcome)
	return c.JSON(http.StatusOK, webhookAnswerJSON{Received: true, Outcome: string(outcome)})
}
