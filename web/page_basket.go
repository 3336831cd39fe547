package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/views"
)

// removeSeatURL is the form post that takes one seat out of a hold.
func removeSeatURL(id booking.HoldID, seatID int64) string {
	return "/holds/" + id.String() + "/seats/" + strconv.FormatInt(seatID, 10) + "/remove"
}

// formRemovals are the seats the map form showed as the buyer's (mine) and that are
// no longer ticked (keep): the seats the buyer took out by unticking them. A seat the
// page never showed as theirs (another tab just added it) is never among them.
func formRemovals(f url.Values) ([]int64, error) {
	var out []int64
	for _, v := range f["mine"] {
		if slices.Contains(f["keep"], v) {
			continue
		}
		id, err := booking.ParseID(v)
		if err != nil {
			return nil, badRequest("invalid_seat_ids", "That is not a seat of this map.")
		}
		out = append(out, id)
	}
	return out, nil
}

// removeFromBasket takes these seats out of whichever of the buyer's holds has them;
// a seat no hold of theirs has any more is already out. It returns the seats freed.
func (s *server) removeFromBasket(ctx context.Context, eventID int64, buyer string, seatIDs []int64) ([]int64, error) {
	holds, err := s.Buyer.BuyerHolds(ctx, eventID, buyer)
	if err != nil {
		return nil, err
	}
	var freed []int64
	for _, seat := range seatIDs {
		for _, h := range holds {
			if !slices.ContainsFunc(h.Seats, func(st booking.Seat) bool { return st.ID == seat }) {
				continue
			}
			if _, err := s.Buyer.RemoveSeat(ctx, h.ID, buyer, seat); err != nil {
				return freed, err
			}
			freed = append(freed, seat)
		}
	}
	return freed, nil
}

// removeSeatForm takes one seat out of one of the session's holds: the Remove button
// of a basket line. Without JavaScript it sends the browser back to the seat page; to
// htmx it answers as the other seat page forms do. A hold of another session is not
// found (404), as in the API.
func (s *server) removeSeatForm(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := pageHoldID(c)
	if err != nil {
		return err
	}
	seat, err := booking.ParseID(c.Param("seatId"))
	if err != nil {
		return booking.ErrSeatNotInHold
	}
	buyer := s.pageBuyer(c)
	if buyer == "" {
		return booking.ErrHoldNotFound // a session that never held anything owns nothing
	}
	released, err := s.Buyer.RemoveSeat(ctx, id, buyer, seat)
	if err != nil {
		return err
	}
	if released {
		s.leaveQueue(ctx, id.Event, buyer) // done shopping: the slot goes to the next in the queue
	}
	ev, err := s.eventByID(ctx, id.Event)
	if err != nil {
		return err
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, seatsURL(ev, ""))
	}
	return s.holdAnswer(c, ev, "", http.StatusOK, views.Message{Text: "Removed from your basket. That seat is back on sale."}, []int64{seat}, booking.SeatAvailable)
}

// removedAnswer answers a map form that took seats out of the basket (freed) and asked
// for nothing more, or whose removal failed (err).
func (s *server) removedAnswer(c echo.Context, ev booking.Event, view string, freed []int64, err error) error {
	if err != nil {
		return s.holdRefused(c, ev, view, booking.HoldRequest{}, err)
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, seatsURL(ev, view))
	}
	msg := views.Message{Text: "Removed from your basket. That seat is back on sale."}
	if len(freed) > 1 {
		msg.Text = "Removed from your basket. Those seats are back on sale."
	}
	return s.holdAnswer(c, ev, view, http.StatusOK, msg, freed, booking.SeatAvailable)
}
