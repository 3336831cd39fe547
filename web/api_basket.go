package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
)

// The basket calls of the JSON API: seats added to and removed from a hold that is
// still being filled (its checkout has not begun). POST /events/{id}/holds stays as it
// was, a new hold each call; these change one.

// addSeatsJSON is the body of POST /holds/{holdId}/seats.
type addSeatsJSON struct {
	SeatIDs []int64 `json:"seatIds"`
}

// addHoldSeats adds exact seats to one of the session's holds, all or nothing, and
// answers with the whole hold (its expiry unchanged). Sent with an Idempotency-Key, a
// repeat gets the first answer.
func (s *server) addHoldSeats(c echo.Context) error {
	return s.idempotent(c, s.addHoldSeatsOnce)
}

func (s *server) addHoldSeatsOnce(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	var in addSeatsJSON
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if len(in.SeatIDs) == 0 {
		return badRequest("invalid_request", `Send {"seatIds": [...]} with at least one seat.`)
	}
	req := booking.HoldRequest{EventID: id.Event, Buyer: buyer, SeatIDs: in.SeatIDs}
	if err := s.Buyer.CheckHold(req); err != nil {
		return err
	}
	if err := s.limitHold(c, &req); err != nil {
		return err
	}
	c.Set(logHoldKind, "add")
	h, err := s.Buyer.AddSeats(c.Request().Context(), id, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, holdView(h))
}

// removeHoldSeat frees one seat of one of the session's holds (204); the other seats
// stay. A hold emptied is released.
func (s *server) removeHoldSeat(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	seat, err := pathID(c, "seatId")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	released, err := s.Buyer.RemoveSeat(ctx, id, buyer, seat)
	if err != nil {
		return err
	}
	if released {
		s.leaveQueue(ctx, id.Event, buyer) // done shopping: the slot goes to the next in the queue
	}
	return c.NoContent(http.StatusNoContent)
}
