package web

import (
	"net/http"
	"slices"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"boxoffice/internal/booking"
	"boxoffice/internal/staff"
	"boxoffice/internal/wording"
	"boxoffice/views"
)

// adminRoute is one route of the admin pages and the roles that may use it (an admin
// may use every one).
type adminRoute struct {
	method, path string
	handler      echo.HandlerFunc
	roles        []staff.Role
}

// Who may use an admin route.
var (
	anyStaff   = []staff.Role{staff.BoxOffice, staff.Door}
	boxOffice  = []staff.Role{staff.BoxOffice}
	door       = []staff.Role{staff.Door, staff.BoxOffice}
	adminsOnly = []staff.Role{}
)

// adminRoutes is the table of the admin pages. Every route in it is registered behind
// requireStaff with its roles, and TestAdminRoutesGuarded walks the router to check
// that no /admin route exists outside it (but the login and logout, adminOpen).
func (s *server) adminRoutes() []adminRoute {
	return []adminRoute{
		{http.MethodGet, "/admin", s.adminHome, anyStaff},
		{http.MethodGet, "/admin/orders", s.searchOrders, boxOffice},
		{http.MethodGet, "/admin/orders/:id", s.showAdminOrder, boxOffice},
		{http.MethodPost, "/admin/orders/:id/refund", s.refundOrder, boxOffice},
		{http.MethodPost, "/admin/orders/:id/resend", s.resendConfirmation, boxOffice},
		{http.MethodGet, "/admin/checkin", s.showCheckin, door},
		{http.MethodPost, "/admin/checkin", s.checkIn, door},
		{http.MethodGet, "/admin/events/:id/orders.csv", s.exportOrders, boxOffice},
		{http.MethodGet, "/admin/events/:id/checkins.csv", s.exportCheckins, boxOffice},
	}
}

// adminOpen are the /admin routes reachable without a staff session.
var adminOpen = map[string]bool{
	"GET /admin/login":   true,
	"HEAD /admin/login":  true,
	"POST /admin/login":  true,
	"POST /admin/logout": true,
}

// routeAdmin registers the admin pages: a staff session (never cached), CSRF on every
// state-changing method, never stored by a cache, then the role check.
func (s *server) routeAdmin(e *echo.Echo, timed, gz echo.MiddlewareFunc) {
	base := []echo.MiddlewareFunc{timed, gz, noStore, middleware.BodyLimit(pageBodyLimit),
		loadSessions(s.StaffSessions, s.Log), s.csrf()}
	getHead(e, "/admin/login", s.showLogin, base...)
	e.POST("/admin/login", s.login, base...)
	e.POST("/admin/logout", s.logout, base...)
	for _, r := range s.adminRoutes() {
		mw := slices.Concat(base, []echo.MiddlewareFunc{s.requireStaff(r.roles...)})
		e.Add(r.method, r.path, r.handler, mw...)
		if r.method == http.MethodGet {
			e.Add(http.MethodHead, r.path, r.handler, mw...)
		}
	}
}

// adminHome lists the events, with the ways into each that the member's role allows.
func (s *server) adminHome(c echo.Context) error {
	events, err := s.Booking.Events(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, "no-store", adminHomeView(adminPage(c, "Box office"), events))
}

func adminHomeView(p views.AdminPage, events []booking.Event) templ.Component {
	now := time.Now()
	h := views.AdminHome{AdminPage: p}
	for _, e := range events {
		h.Events = append(h.Events, views.AdminEvent{ID: e.ID, Name: e.Name, Venue: e.Venue, When: wording.When(e),
			OnSale: onSaleText(e, now), Public: eventURL(e), Waiting: e.QueueEnabled})
	}
	return views.AdminHomePage(h)
}
