package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/payment"
)

type checkoutJSON struct {
	Email string `json:"email"`
}

type paymentInfoJSON struct {
	Provider  string            `json:"provider"`
	PayURL    string            `json:"payUrl"`
	TestCards map[string]string `json:"testCards"`
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
}

// testCards tells API users how to drive the built-in provider.
var testCards = map[string]string{
	"4242 4242 4242 4242": "succeeds",
	"4000 0000 0000 0002": "is declined",
}

func (s *server) checkout(c echo.Context) error {
	id, err := pathHoldID(c)
	if err != nil {
		return err
	}
	buyer, err := s.buyer(c)
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
	o, err := s.Booking.Checkout(c.Request().Context(), id, buyer, in.Email)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, checkoutAnswerJSON{
		OrderID: o.ID, Status: o.Status, AmountCents: o.AmountCents,
		Payment: paymentInfoJSON{
			Provider: "test", PayURL: "/api/v1/orders/" + strconv.FormatInt(o.ID, 10) + "/pay", TestCards: testCards,
		},
	})
}

func (s *server) getOrder(c echo.Context) error {
	id, err := pathID(c, "orderId")
	if err != nil {
		return err
	}
	buyer, err := s.buyer(c)
	if err != nil {
		return err
	}
	o, err := s.Booking.Order(c.Request().Context(), id, buyer)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, orderView(o))
}

func orderView(o booking.Order) orderJSON {
	out := orderJSON{
		OrderID: o.ID, EventID: o.EventID, Status: o.Status, StatusReason: o.StatusReason,
		AmountCents: o.AmountCents, Email: o.Email, Seats: seatsView(o.Seats), Tickets: []ticketJSON{},
	}
	if o.GA != nil {
		out.GAPlaces = &gaPlacesJSON{TierID: o.GA.TierID, Name: o.GA.TierName, Quantity: o.GA.Quantity, PriceCents: o.GA.PriceCents}
	}
	for _, t := range o.Tickets {
		out.Tickets = append(out.Tickets, ticketJSON{ID: t.ID, SeatID: t.SeatID, GATierID: t.GATierID, Code: t.Code})
	}
	return out
}

type payJSON struct {
	Card     string `json:"card"`
	Delivery string `json:"delivery"`
}

type payAnswerJSON struct {
	OrderID   int64  `json:"orderId"`
	PaymentID string `json:"paymentId"`
	Status    string `json:"status"`
}

// pay charges the order with the built-in test provider. The answer only says the
// payment is processing: the order is confirmed when the provider's webhook arrives,
// so clients poll GET /api/v1/orders/{id}.
func (s *server) pay(c echo.Context) error {
	id, err := pathID(c, "orderId")
	if err != nil {
		return err
	}
	buyer, err := s.buyer(c)
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
		return badRequest("invalid_delivery", `delivery is one of "", "late", "twice", "out_of_order".`)
	}
	ch, err := s.Booking.Pay(c.Request().Context(), id, buyer, in.Card, delivery)
	if err != nil {
		return err
	}
	if ev, ok := c.Get(eventContext).(booking.Event); ok { // found by the admission check
		s.leaveQueue(c.Request().Context(), ev.ID, buyer) // bought: the slot goes to the next in the queue
	}
	return c.JSON(http.StatusAccepted, payAnswerJSON{OrderID: id, PaymentID: ch.PaymentID, Status: ch.Status})
}
