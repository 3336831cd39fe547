package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/static"
	"boxoffice/views"
)

// publicPage may be kept by the CDN for a minute and served stale while it refetches.
const publicPage = "public, max-age=30, s-maxage=60, stale-while-revalidate=300"

func page(title string) views.Page {
	return views.Page{Title: title, CSSURL: static.URL("css/app.css")}
}

func (s *server) home(c echo.Context) error {
	events, err := s.Booking.Events(c.Request().Context())
	if err != nil {
		return err
	}
	h := views.Home{Page: page("On sale")}
	for _, e := range events {
		h.Events = append(h.Events, views.EventCard{
			Name: e.Name, Venue: e.Venue,
			When:       e.StartsAt.UTC().Format("Mon 2 Jan 2006, 15:04 MST"),
			OnSale:     "On sale from " + e.OnsaleAt.UTC().Format("2 Jan 2006, 15:04 MST"),
			SeatMapURL: "/api/v1/events/" + strconv.FormatInt(e.ID, 10) + "/seatmap",
		})
	}
	return render(c, http.StatusOK, publicPage, views.HomePage(h))
}
