package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
)

type holdRequestJSON struct {
	SeatIDs  []int64 `json:"seatIds"`
	Quantity *int    `json:"quantity"`
	Section  *string `json:"section"`
	// PriceCents limits best available to one price level; absent or null: any price.
	PriceCents *int   `json:"priceCents"`
	Together   *bool  `json:"together"`
	GATierID   *int64 `json:"gaTierId"`
}

type seatJSON struct {
	ID         int64  `json:"id"`
	Section    string `json:"section"`
	Row        string `json:"row"`
	Number     int    `json:"number"`
	PriceCents int    `json:"priceCents"`
}

type gaPlacesJSON struct {
	TierID     int64  `json:"tierId"`
	Name       string `json:"name"`
	Quantity   int    `json:"quantity"`
	PriceCents int    `json:"priceCents"`
}

type holdJSON struct {
	HoldID    string        `json:"holdId"`
	Seats     []seatJSON    `json:"seats"`
	GAPlaces  *gaPlacesJSON `json:"gaPlaces,omitempty"`
	ExpiresAt time.Time     `json:"expiresAt"`
}

// parseHoldRequest decodes the body into a hold request: which of the three kinds it
// asks for is the JSON's shape (exactly one of seatIds, quantity without gaTierId, or
// gaTierId), and the rest is booking's to judge (Buyer.CheckHold), which the
// handler asks before anything else.
func parseHoldRequest(c echo.Context, eventID int64, buyer string) (booking.HoldRequest, error) {
	var in holdRequestJSON
	if err := decodeJSON(c, &in); err != nil {
		return booking.HoldRequest{}, err
	}
	req := booking.HoldRequest{EventID: eventID, Buyer: buyer, SeatIDs: in.SeatIDs, PriceCents: in.PriceCents}
	kinds := 0
	for _, sent := range []bool{in.SeatIDs != nil, in.GATierID != nil, in.Quantity != nil && in.GATierID == nil} {
		if sent {
			kinds++
		}
	}
	if kinds != 1 {
		return req, badRequest("invalid_request", `Send one of {"seatIds": [...]}, {"quantity": n}, or {"gaTierId": t, "quantity": n}.`)
	}
	if in.GATierID != nil {
		// An id is a positive whole number, as in a path: 0 would read as no tier.
		if *in.GATierID <= 0 {
			return req, badRequest("invalid_ga_tier", "gaTierId is a positive whole number.")
		}
		req.GATierID = *in.GATierID
	}
	if in.Quantity != nil {
		req.Quantity = *in.Quantity
	}
	if in.Section != nil {
		req.Section = *in.Section
	}
	if in.Together != nil {
		req.Together = *in.Together
	}
	return req, nil
}

// createHold holds seats or places. Sent with an Idempotency-Key, a repeat gets the
// first answer, the same hold, rather than a second hold. A session's first hold needs
// a proof of work (proof.go), checked before the key is taken: a refusal is never
// kept as the key's answer.
func (s *server) createHold(c echo.Context) error {
	if err := s.proveHold(c); err != nil {
		return err
	}
	return s.idempotent(c, s.createHoldOnce)
}

func (s *server) createHoldOnce(c echo.Context) error {
	eventID, err := pathID(c, "id")
	if err != nil {
		return err
	}
	buyer, err := s.buyer(c)
	if err != nil {
		return err
	}
	req, err := parseHoldRequest(c, eventID, buyer)
	if err != nil {
		return err
	}
	if err := s.Buyer.CheckHold(req); err != nil {
		return err
	}
	if err := s.limitHold(c, &req); err != nil {
		return err
	}
	c.Set(logHoldKind, req.Kind())
	h, err := s.Buyer.HoldOrAdd(c.Request().Context(), req)
	if err != nil {
		return err
	}
	s.admissionLasts(c.Request().Context(), eventID, buyer, h.ExpiresAt)
	return c.JSON(http.StatusCreated, holdView(h))
}

func holdView(h booking.Hold) holdJSON {
	return holdJSON{HoldID: h.ID.String(), Seats: seatsView(h.Seats), GAPlaces: gaPlacesView(h.GA), ExpiresAt: h.ExpiresAt.UTC()}
}

func gaPlacesView(ga *booking.GAPlaces) *gaPlacesJSON {
	if ga == nil {
		return nil
	}
	return &gaPlacesJSON{TierID: ga.TierID, Name: ga.TierName, Quantity: ga.Quantity, PriceCents: ga.PriceCents}
}

func seatsView(seats []booking.Seat) []seatJSON {
	out := make([]seatJSON, len(seats))
	for i, st := range seats {
		out[i] = seatJSON{ID: st.ID, Section: st.Section, Row: st.Row, Number: st.Number, PriceCents: st.PriceCents}
	}
	return out
}

func pathHoldID(c echo.Context) (booking.HoldID, error) {
	id, err := booking.ParseHoldID(c.Param("holdId"))
	if err != nil {
		return id, badRequest("invalid_id", "holdId looks like 7-1042.")
	}
	return id, nil
}

// pathHoldOfBuyer is the hold the path names and the session's buyer, whom booking
// checks it against.
func (s *server) pathHoldOfBuyer(c echo.Context) (booking.HoldID, string, error) {
	id, err := pathHoldID(c)
	if err != nil {
		return id, "", err
	}
	buyer, err := s.buyer(c)
	return id, buyer, err
}

func (s *server) getHold(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	return s.pricedHold(c.Request().Context(), c, id, buyer) // api_basketprice.go
}

func (s *server) releaseHold(c echo.Context) error {
	id, buyer, err := s.pathHoldOfBuyer(c)
	if err != nil {
		return err
	}
	if err := s.Buyer.Release(c.Request().Context(), id, buyer); err != nil {
		return err
	}
	s.leaveQueue(c.Request().Context(), id.Event, buyer) // done shopping: the slot goes to the next in the queue
	return c.NoContent(http.StatusNoContent)
}
