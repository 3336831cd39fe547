package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/config"
	"boxoffice/internal/payment"
)

type checkoutJSON struct {
	Email string `json:"email"`
}

// paymentInfoJSON says how to pay: who takes the money (PAYMENT_PROVIDER) and where,
// and, with the built-in test provider only, its test cards and what each does.
type paymentInfoJSON struct {
	Provider  string            `json:"provider"`
	PayURL    string            `json:"payUrl"`
	TestCards map[string]string `json:"testCards,omitempty"`
}

type checkoutAnswerJSON struct {
	OrderID     int64           `json:"orderId"`
	Status      string          `json:"status"`
	AmountCents int             `json:"amountCents"`
	Payment     paymentInfoJSON `json:"payment"`
}

type ticketJSON struct {
	ID       int64  `json:"id"`
	SeatID   int64  `json:"seatId,omitempty"`
	GATierID int64  `json:"gaTierId,omitempty"`
	Code     string `json:"code"`
}

// orderJSON is an order. Status is pending, confirmed, refund_pending, refunded or
// expired. StatusReason qualifies it: for a pending order payment_processing (wait
// for the provider), payment_unknown (the charge's answer was lost: the payment is
// being checked, and no second charge can start meanwhile) or payment_failed (pay
// again); for one that sold nothing, why (seats_unavailable, buyer_limit, …).
type orderJSON struct {
	OrderID      int64         `json:"orderId"`
	EventID      int64         `json:"eventId"`
	Status       string        `json:"status"`
	StatusReason string        `json:"statusReason,omitempty"`
	AmountCents  int           `json:"amountCents"`
	Email        string        `json:"email"`
	Seats        []seatJSON    `json:"seats"`
	GAPlaces     *gaPlacesJSON `json:"gaPlaces,omitempty"`
	Tickets      []ticketJSON  `json:"tickets"`
	Refunds      []refundJSON  `json:"refunds,omitempty"`
}

// refundJSON is a payment of the order given back: status pending or refunded.
type refundJSON struct {
	AmountCents int    `json:"amountCents"`
	Reason      string `json:"reason"`
	Status      string `json:"status"`
}

// testCards tells API users how to drive the built-in provider.
var testCards = map[string]string{
	"4242 4242 4242 4242": "succeeds",
	"4000 0000 0000 0002": "is declined",
	"4000 0000 0000 0341": "is taken, then fails (the failure comes by webhook)",
}

// checkout checks a hold out. Sent with an Idempotency-Key, a repeat gets the first
// answer. A free order answers already confirmed.
func (s *server) checkout(c echo.Context) error {
	return s.idempotent(c, s.checkoutOnce)
}

func (s *server) checkoutOnce(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	var in checkoutJSON
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if err := cleanText("email", in.Email, 254); err != nil {
		return err
	}
	if !validEmail(in.Email) {
		return badRequest("invalid_email", "email must be a plain address such as ada@example.com.")
	}
	o, err := s.Buyer.Checkout(c.Request().Context(), id, buyer, in.Email)
	if err != nil {
		return err
	}
	if fromBrowser(c) { // a new token for the order's session (renewSession)
		if err := s.renewSession(c); err != nil {
			return err
		}
	}
	if o.Status == booking.StatusConfirmed { // a free order: bought at checkout
		s.leaveQueue(c.Request().Context(), id.Event, buyer)
	}
	pay := paymentInfoJSON{Provider: s.ProviderName, PayURL: "/api/v1/orders/" + strconv.FormatInt(o.ID, 10) + "/pay"}
	if s.ProviderName == config.ProviderTest {
		pay.TestCards = testCards // real providers' cards are theirs to document
	}
	return c.JSON(http.StatusCreated, checkoutAnswerJSON{OrderID: o.ID, Status: o.Status, AmountCents: o.AmountCents, Payment: pay})
}

// pathOrderOfBuyer is the order the path names and the session's buyer, whom booking
// checks it against.
func (s *server) pathOrderOfBuyer(c echo.Context) (int64, string, error) {
	id, err := pathID(c, "orderId")
	if err != nil {
		return 0, "", err
	}
	buyer, err := s.buyer(c)
	return id, buyer, err
}

// getOrder is an order for its session, or for the holder of its access link (the
// X-Order-Token header or ?t=), who gets no session by it.
func (s *server) getOrder(c echo.Context) error {
	id, err := pathID(c, "orderId")
	if err != nil {
		return err
	}
	o, _, err := s.orderFor(c, id, s.buyer)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, orderView(o))
}

func orderView(o booking.Order) orderJSON {
	out := orderJSON{
		OrderID: o.ID, EventID: o.EventID, Status: o.Status, StatusReason: o.StatusReason,
		AmountCents: o.AmountCents, Email: o.Email, Seats: seatsView(o.Seats), GAPlaces: gaPlacesView(o.GA),
		Tickets: []ticketJSON{},
	}
	for _, t := range o.Tickets {
		out.Tickets = append(out.Tickets, ticketJSON{ID: t.ID, SeatID: t.SeatID, GATierID: t.GATierID, Code: t.Code})
	}
	for _, r := range o.Refunds {
		st := "pending"
		if r.Done {
			st = "refunded"
		}
		out.Refunds = append(out.Refunds, refundJSON{AmountCents: r.AmountCents, Reason: r.Reason, Status: st})
	}
	return out
}

type payJSON struct {
	Card     string `json:"card"`
	Delivery string `json:"delivery"`
}

// payAnswerJSON is pay's answer. Status is processing (the order is confirmed when
// the provider's webhook arrives), unknown (the charge's answer was lost: the payment
// is being checked with the provider, and the order cannot be charged again
// meanwhile) or confirmed (a free order).
type payAnswerJSON struct {
	OrderID   int64  `json:"orderId"`
	PaymentID string `json:"paymentId,omitempty"`
	Status    string `json:"status"`
	Message   string `json:"message,omitempty"`
}

// pay charges the order with the built-in test provider. The answer only says the
// payment is processing: the order is confirmed when the provider's webhook arrives,
// so clients poll GET /api/v1/orders/{id}. Sent with an Idempotency-Key, a repeat
// gets the first answer and charges nothing more.
func (s *server) pay(c echo.Context) error {
	return s.idempotent(c, s.payOnce)
}

func (s *server) payOnce(c echo.Context) error {
	id, buyer, err := s.pathOrderOfBuyer(c)
	if err != nil {
		return err
	}
	var in payJSON
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if err := cleanText("card", in.Card, 40); err != nil {
		return err
	}
	delivery, err := payment.ParseDelivery(in.Delivery)
	if err != nil {
		return badRequest("invalid_delivery",
			`delivery is one of "", "late", "twice", "out_of_order", "none", "timeout", "lost", "error".`)
	}
	res, err := s.Buyer.Pay(c.Request().Context(), id, buyer, booking.PaymentMethod{Method: in.Card, Simulate: string(delivery)})
	if err != nil {
		return err
	}
	if ev, ok := c.Get(eventContext).(booking.Event); ok { // found by the admission check
		s.leaveQueue(c.Request().Context(), ev.ID, buyer) // bought: the slot goes to the next in the queue
	}
	ans := payAnswerJSON{OrderID: id, PaymentID: res.PaymentID, Status: res.Status}
	switch res.Status {
	case booking.PayConfirmed:
		return c.JSON(http.StatusOK, ans)
	case booking.PayUnknown:
		ans.Message = "We could not confirm whether the charge went through. It is being checked with the " +
			"payment provider; the order cannot be charged twice. Follow the order for the outcome."
	}
	return c.JSON(http.StatusAccepted, ans)
}
