package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// errNothingAsked is a hold form with no seat ticked and no quantity: to htmx, the
// change event of a seat being unticked, which asks for nothing.
var errNothingAsked = badRequest("nothing_asked", "Choose at least one seat, or how many seats or places you want.")

// parseHoldForm decodes the seat page's hold forms: ticked seats (seat, repeated),
// best available (quantity, price, section, together), or general admission (ga_tier and
// ga_quantity); view is the section the page showed, to go back to. Which kind a form
// asks for is which of its fields are filled (none: errNothingAsked); what it asks is
// booking's to judge (Buyer.CheckHold), which the handler asks before anything else.
func parseHoldForm(f url.Values) (req booking.HoldRequest, view string, err error) {
	view = f.Get("view")
	if err := cleanText("view", view, 100); err != nil {
		return req, "", err
	}
	seats, qty, tier := f["seat"], f.Get("quantity"), f.Get("ga_tier")
	asked := 0
	for _, present := range []bool{len(seats) > 0, qty != "", tier != ""} {
		if present {
			asked++
		}
	}
	switch {
	case asked == 0:
		return req, view, errNothingAsked
	case asked > 1:
		return req, view, badRequest("invalid_request", "Ask for ticked seats, a number of best seats, or standing places: one at a time.")
	case tier != "":
		if req.GATierID, err = booking.ParseID(tier); err != nil {
			return req, view, badRequest("invalid_ga_tier", "That is not a standing tier of this event.")
		}
		req.Quantity, err = formNumber(f.Get("ga_quantity"), "places")
		return req, view, err
	case qty != "":
		if req.Quantity, err = formNumber(qty, "seats"); err != nil {
			return req, view, err
		}
		req.Section = f.Get("section")
		if p := f.Get("price"); p != "" {
			cents, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return req, view, badRequest("invalid_price", "Choose a price from the list, or any price.")
			}
			req.PriceCents = &cents
		}
		switch f.Get("together") {
		case "", "off", "false":
		default:
			req.Together = true
		}
		return req, view, nil
	}
	req.SeatIDs = make([]int64, 0, len(seats))
	for _, v := range seats {
		id, err := booking.ParseID(v)
		if err != nil {
			return req, view, badRequest("invalid_seat_ids", "That is not a seat of this map.")
		}
		req.SeatIDs = append(req.SeatIDs, id)
	}
	return req, view, nil
}

// formNumber decodes a form's count of seats or places: a whole number, of any size
// booking may then refuse.
func formNumber(v, what string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, badRequest("invalid_quantity", "Give the number of "+what+" as a whole number.")
	}
	return n, nil
}

// createHoldForm adds what a seat page form asks for to the buyer's basket (opening it
// when they have none), after taking out the seats of the map form they unticked.
// Without JavaScript it sends the browser back to the seat page (303), which shows the
// basket; to htmx it answers with the basket and the seats, out of band. A refusal is
// said on the page, with the status of the API's answer.
func (s *server) createHoldForm(c echo.Context) error {
	ctx := c.Request().Context()
	ev, err := s.eventBySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return he // the body limit
		}
		return badRequest("invalid_form", "The form could not be read.")
	}
	req, view, err := parseHoldForm(form)
	removals, rerr := formRemovals(form)
	if rerr != nil {
		return s.holdRefused(c, ev, view, req, rerr)
	}
	if len(removals) > 0 {
		freed, rerr := s.removeFromBasket(ctx, ev.ID, s.pageBuyer(c), removals)
		if rerr != nil || errors.Is(err, errNothingAsked) {
			return s.removedAnswer(c, ev, view, freed, rerr)
		}
	}
	if errors.Is(err, errNothingAsked) && isHTMX(c) {
		return c.NoContent(http.StatusNoContent)
	}
	if err == nil {
		err = s.Buyer.CheckHold(req)
	}
	if err != nil {
		return s.holdRefused(c, ev, view, req, err)
	}
	if err := s.proveHold(c); err != nil {
		return s.holdRefused(c, ev, view, req, proofPageError(err, "hold"))
	}
	if req.Buyer, err = s.buyer(c); err != nil {
		return s.holdRefused(c, ev, view, req, err)
	}
	req.EventID = ev.ID
	if err := s.limitHold(c, &req); err != nil {
		return s.holdRefused(c, ev, view, req, err)
	}
	h, err := s.Buyer.AddToBasket(ctx, req)
	if err != nil {
		return s.holdRefused(c, ev, view, req, err)
	}
	s.admissionLasts(ctx, ev.ID, req.Buyer, h.ExpiresAt)
	msg := views.Message{Text: heldText(h, ev.Zone)}
	seats := h.Seats
	if req.Kind() == booking.HoldKindBest {
		// What was found is what this call added, not the basket it joined.
		seats = h.Added
		found, err := s.foundView(ctx, ev.ID, view, seats)
		if err != nil {
			return err
		}
		switch {
		case !isHTMX(c):
			return c.Redirect(http.StatusSeeOther, foundURL(ev, found, seats))
		case found != view: // the page shows another part of the venue: show theirs
			c.Response().Header().Set("HX-Redirect", foundURL(ev, found, seats))
			return c.NoContent(http.StatusOK)
		}
		msg = foundMessage(s.Money, seats, h.ExpiresAt, ev.Zone)
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, seatsURL(ev, view))
	}
	ids := make([]int64, len(seats))
	for i, st := range seats {
		ids[i] = st.ID
	}
	return s.holdAnswer(c, ev, view, http.StatusOK, msg, ids, booking.SeatHeld)
}

// heldText confirms a hold in words, its end on the clocks of the event's zone loc.
func heldText(h booking.Hold, loc *time.Location) string {
	until := " Held until " + zone.Clock(h.ExpiresAt, loc) + "."
	if h.GA != nil {
		return fmt.Sprintf("%d × %s: yours for now.", h.GA.Quantity, h.GA.TierName) + until
	}
	names := make([]string, len(h.Seats))
	for i, st := range h.Seats {
		names[i] = ordertext.SeatLabel(st)
	}
	return strings.Join(names, "; ") + ": yours for now." + until
}

// holdRefused says on the seat page why a hold was refused, with the status the API
// gives the same refusal. Failures on our side go to the error handler.
func (s *server) holdRefused(c echo.Context, ev booking.Event, view string, req booking.HoldRequest, err error) error {
	ae := s.toAPIError(inZone(err, ev.Zone))
	switch {
	case errors.Is(err, booking.ErrEventNotFound), ae.Status >= 500 || ae.Status < 400:
		return err
	case errors.Is(err, booking.ErrGATierNotFound):
		ae = &apiError{Status: http.StatusUnprocessableEntity, Code: "ga_tier_not_found"}
	}
	taken, seats, terr := s.takenSeats(c.Request().Context(), ev.ID, err)
	if terr != nil {
		return terr
	}
	msg := views.Message{Error: true, Text: refusalText(ae, err, req, seats)}
	if isHTMX(c) {
		return s.holdAnswer(c, ev, view, ae.Status, msg, taken, booking.SeatHeld)
	}
	p, perr := s.seatsPage(c, ev, view, msg)
	if errors.Is(perr, errNoSection) {
		p, perr = s.seatsPage(c, ev, "", msg)
	}
	if perr != nil {
		return perr
	}
	return render(c, ae.Status, personal, views.SeatsPageView(p))
}

// takenSeats names the seats a refusal says someone else has (a
// *booking.SeatsUnavailableError), as the map shows them; none for any other error.
func (s *server) takenSeats(ctx context.Context, eventID int64, err error) ([]int64, []booking.MapSeat, error) {
	var unavailable *booking.SeatsUnavailableError
	if !errors.As(err, &unavailable) {
		return nil, nil, nil
	}
	m, merr := s.Maps.SeatMapSeats(ctx, eventID, unavailable.SeatIDs)
	if merr != nil {
		return nil, nil, merr
	}
	return unavailable.SeatIDs, booking.SeatsByID(m, unavailable.SeatIDs), nil
}

// refusalText words a refused hold for the buyer.
func refusalText(ae *apiError, err error, req booking.HoldRequest, taken []booking.MapSeat) string {
	var limit *booking.LimitError
	switch {
	case len(taken) == 1:
		return "Seat " + shortSeat(taken[0]) + " was just taken. Choose another."
	case len(taken) > 1:
		names := make([]string, len(taken))
		for i, st := range taken {
			names[i] = shortSeat(st)
		}
		return "Seats " + strings.Join(names, ", ") + " were just taken. Nothing was held; choose again."
	case errors.As(err, &limit):
		return fmt.Sprintf("You can hold or buy at most %d seats and places for this event, and you have %d already.", limit.Limit, limit.Held)
	case errors.Is(err, booking.ErrSoldOut) && req.GATierID != 0:
		return "Not that many standing places are left."
	case errors.Is(err, booking.ErrSoldOut):
		return "Not enough seats are left for that. Try fewer seats, another section, or not seated together."
	case errors.As(err, new(*booking.UnknownSeatsError)):
		return "Some of those are not seats of this event. Reload the map and choose again."
	case ae.Code == "ga_tier_not_found":
		return "That standing tier is not part of this event."
	}
	return ae.Message
}

// releaseHoldForm releases one of the session's holds: its seats are free at once.
// A hold of another session is not found (404), as in the API.
func (s *server) releaseHoldForm(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := pageHoldID(c)
	if err != nil {
		return err
	}
	buyer := s.pageBuyer(c)
	if buyer == "" {
		return booking.ErrHoldNotFound // a session that never held anything owns nothing
	}
	h, err := s.Buyer.GetHold(ctx, id, buyer)
	if err != nil && !errors.Is(err, booking.ErrHoldExpired) {
		return err
	}
	if err := s.Buyer.Release(ctx, id, buyer); err != nil {
		return err
	}
	s.leaveQueue(ctx, id.Event, buyer) // done shopping: the slot goes to the next in the queue
	ev, err := s.eventByID(ctx, id.Event)
	if err != nil {
		return err
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, seatsURL(ev, ""))
	}
	ids := make([]int64, len(h.Seats))
	for i, st := range h.Seats {
		ids[i] = st.ID
	}
	return s.holdAnswer(c, ev, "", http.StatusOK, views.Message{Text: "Released. Those seats are back on sale."}, ids, booking.SeatAvailable)
}

// holdAnswer is the htmx answer of the seat page's forms: the message, the buyer's
// holds, the seats concerned (known: what the database just said of them, which beats
// a map a moment old) and the places left, all out of band.
func (s *server) holdAnswer(c echo.Context, ev booking.Event, view string, status int, msg views.Message, seatIDs []int64, known string) error {
	ctx := c.Request().Context()
	m, err := s.Maps.SeatMapSeats(ctx, ev.ID, seatIDs) // these seats and the GA tiers: no copy of the whole map
	if err != nil {
		return err
	}
	holds, err := s.Buyer.BuyerHolds(ctx, ev.ID, s.pageBuyer(c))
	if err != nil {
		return err
	}
	quotes, err := s.basketQuotes(ctx, holds, s.pageBuyer(c))
	if err != nil {
		return err
	}
	prices, err := s.allInPrices(ctx, ev.ID)
	if err != nil {
		return err
	}
	csrf := buyerPage(c, "").CSRFToken
	panel, mine := holdPanel(s.Money, ev, view, holds, quotes, csrf, time.Now())
	style := seatStyle{mine: mine, prices: prices, money: s.Money}
	if msg.Picked != "" { // the seats concerned are the ones best available found
		style.picked = map[int64]bool{}
		for _, id := range seatIDs {
			style.picked[id] = true
		}
	}
	varyHTMX(c)
	return render(c, status, personal, views.HoldAnswerView(views.HoldAnswer{
		Message: msg, Panel: &panel,
		Seats: seatsOfMap(m, seatIDs, known, style),
		GA:    gaForms(s.Money, ev, m, csrf, s.Buyer.Config().MaxPerBuyer, prices),
	}))
}
