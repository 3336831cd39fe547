package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

type eventJSON struct {
	ID       int64     `json:"id"`
	Slug     string    `json:"slug"`
	Name     string    `json:"name"`
	StartsAt time.Time `json:"startsAt"`
	Venue    string    `json:"venue"`
	// TimeZone is the venue's IANA zone, in which front ends show the times.
	TimeZone string    `json:"timeZone"`
	OnsaleAt time.Time `json:"onsaleAt"`
	// SalesCloseAt is when holds, checkout and payment stop (by default the start).
	SalesCloseAt time.Time `json:"salesCloseAt"`
	// WaitingRoom says that seat selection goes through the queue (POST …/queue).
	WaitingRoom bool `json:"waitingRoom"`
	// VerifiedOnly says that buyers confirm an email first (POST …/verification).
	VerifiedOnly bool `json:"verifiedOnly"`
}

type mapSeatJSON struct {
	ID         int64  `json:"id"`
	Section    string `json:"section"`
	Row        string `json:"row"`
	Number     int    `json:"number"`
	PriceCents int    `json:"priceCents"`
	Status     string `json:"status"`
	X          int    `json:"x"`
	Y          int    `json:"y"`
	Accessible bool   `json:"accessible,omitempty"`
}

type gaTierJSON struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	PriceCents int    `json:"priceCents"`
	Remaining  int    `json:"remaining"`
}

type seatMapJSON struct {
	EventID int64         `json:"eventId"`
	Seats   []mapSeatJSON `json:"seats"`
	GATiers []gaTierJSON  `json:"gaTiers"`
}

func (s *server) listEvents(c echo.Context) error {
	events, err := s.Buyer.Events(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]eventJSON, len(events))
	for i, e := range events {
		out[i] = eventJSON{ID: e.ID, Slug: e.Slug, Name: e.Name, StartsAt: e.StartsAt, Venue: e.Venue, TimeZone: e.Zone.String(),
			OnsaleAt: e.OnsaleAt, SalesCloseAt: e.SalesCloseAt, WaitingRoom: e.QueueEnabled, VerifiedOnly: e.VerifiedOnly}
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=10, s-maxage=30, stale-while-revalidate=60")
	return c.JSON(http.StatusOK, out)
}

// getSeatMap serves the map from the booking service's one-second cache; a CDN may keep
// it for a second more.
func (s *server) getSeatMap(c echo.Context) error { return s.sendMap(c, wholeMap) }

// getSeatStatuses serves the map's statuses: a letter a seat (a available, h held,
// s sold) in the order of the layout whose id comes with them.
func (s *server) getSeatStatuses(c echo.Context) error { return s.sendMap(c, mapStatuses) }

// getSeatLayout serves the map's seats without their statuses, with the layout's id.
// Asked for by its id (?v=, as the statuses give it), the answer never changes and a
// cache may keep it for good; asked for without, it is the map's current layout.
func (s *server) getSeatLayout(c echo.Context) error { return s.sendMap(c, mapLayout) }

// mapCacheControl lets a cache keep a map, or its statuses, for the second it may be
// stale anyway.
const mapCacheControl = "public, max-age=1, s-maxage=1, stale-while-revalidate=5"

func (s *server) sendMap(c echo.Context, kind bodyKind) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	m, err := s.Maps.SeatMap(c.Request().Context(), id)
	if err != nil {
		return err
	}
	body, err := s.mapBodies.body(m, kind)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", mapCacheControl)
	if kind == mapLayout {
		if c.QueryParam("v") == body.layout {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		etag := `W/"` + body.layout + `"`
		h.Set("ETag", etag)
		if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
			h.Add("Vary", "Accept-Encoding")
			return c.NoContent(http.StatusNotModified)
		}
	}
	return body.send(c)
}

// joinQueue puts the session's visitor in the event's waiting room, keeping a place
// (or admission) it already has. The token of an admission is in the answer and in
// the session; a client without the session cookie sends it back in
// X-Admission-Token. With the room off, everyone is admitted and needs no token.
// Every join into a room that is on needs a proof of work (X-Altcha, proof.go).
func (s *server) joinQueue(c echo.Context) error { return s.answerQueue(c, queueJoin) }

// getQueue says where the session's visitor stands, and keeps the place: a waiter not
// heard from for about five minutes loses it. It never joins: position 0 and not
// admitted means not in the queue (never joined, or the place was lost), and the
// client joins again.
func (s *server) getQueue(c echo.Context) error { return s.answerQueue(c, queueLook) }

func (s *server) answerQueue(c echo.Context, ask queueAsk) error {
	ev, err := eventOfPath(s, c)
	if err != nil {
		return err
	}
	if ask == queueJoin && ev.QueueEnabled {
		// A join the presale refuses is told so before it pays a proof of work.
		if _, err := s.room(c, ev); err != nil {
			return roomRefused(c, ev, err)
		}
	}
	if ask == queueJoin {
		if err := s.proveJoin(c, ev); err != nil {
			return err
		}
	}
	st, err := s.queueStatus(c, ev, ask)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, queueView(st))
}
