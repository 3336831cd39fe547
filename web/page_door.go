package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/static"
	"boxoffice/views"
)

// doorScript drives the front door's page; queue.js before it brings the queue's words.
var doorScript = static.URL("js/door.js")

// doorPageCache lets the CDN keep the front door's page, the same for every visitor,
// for as long as an event page: the visitor's place is its own cookie, read by the
// page's script through the API.
const doorPageCache = eventPageCache

// showDoor is the front door's waiting room (views.DoorPageView): one page for the
// whole crowd of an event, cacheable, with no session, cookie or database write. With
// the room off it still shows, and its script goes on to the seats at once (the place
// call answers admitted).
func (s *server) showDoor(c echo.Context) error {
	ev, err := s.eventBySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return err
	}
	p := page("Waiting room: " + ev.Name)
	p.Scripts = append(p.Scripts, queueScript, doorScript)
	dp := views.DoorPage{Page: p, Event: eventHeader(ev, time.Now()), PlaceURL: placeURL(ev.ID), ClaimURL: claimURL(ev.ID),
		BoardURL: boardURL(ev), SeatsURL: seatsURL(ev, ""), QueueURL: queueURL(ev), CodeURL: codeURL(ev)}
	if ev.VerifiedOnly {
		dp.VerifyURL = verifyURL(ev)
	}
	if s.ProofOfWork {
		pb := proofBox("join")
		dp.Proof = &pb
		dp.Scripts = append(dp.Scripts, proofScript)
	}
	return render(c, http.StatusOK, doorPageCache, views.DoorPageView(dp))
}

func placeURL(eventID int64) string {
	return "/api/v1/events/" + strconv.FormatInt(eventID, 10) + "/queue/place"
}
func claimURL(eventID int64) string {
	return "/api/v1/events/" + strconv.FormatInt(eventID, 10) + "/queue/claim"
}
