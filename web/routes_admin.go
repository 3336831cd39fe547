package web

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"boxoffice/internal/booking"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/staff"
	"boxoffice/views"
)

// adminRoute is one route of the admin pages and the roles that may use it (an admin
// may use every one).
type adminRoute struct {
	method, path string
	handler      echo.HandlerFunc
	roles        []staff.Role
}

// adminStreams are the admin routes that answer with server-sent events: no deadline
// and no gzip.
var adminStreams = map[string]bool{
	"/admin/events/:id/control/stream": true,
}

// Who may use an admin route.
var (
	anyStaff   = []staff.Role{staff.BoxOffice, staff.Door}
	boxOffice  = []staff.Role{staff.BoxOffice}
	door       = []staff.Role{staff.Door, staff.BoxOffice}
	adminsOnly = []staff.Role{}
)

// adminRoutes is the table of the admin pages. Every route in it is registered behind
// requireStaff with its roles, and TestAdminAuthorisation walks the router to check
// that no /admin route exists outside it (but the login and logout, adminOpen).
func (s *server) adminRoutes() []adminRoute {
	return []adminRoute{
		{http.MethodGet, "/admin", s.adminHome, anyStaff},
		{http.MethodGet, "/admin/staff", s.showStaff, adminsOnly},
		{http.MethodPost, "/admin/staff", s.addStaff, adminsOnly},
		{http.MethodPost, "/admin/staff/:id/role", s.setStaffRole, adminsOnly},
		{http.MethodPost, "/admin/staff/:id/disable", s.setStaffDisabled(true), adminsOnly},
		{http.MethodPost, "/admin/staff/:id/enable", s.setStaffDisabled(false), adminsOnly},
		{http.MethodGet, "/admin/audit", s.showAudit, adminsOnly},

		// The control room (admin_control.go).
		{http.MethodGet, "/admin/events/:id/control", s.showControl, boxOffice},
		{http.MethodGet, "/admin/events/:id/control/stream", s.streamControl, boxOffice},
		{http.MethodPost, "/admin/events/:id/control/pause", s.setQueuePaused(true), boxOffice},
		{http.MethodPost, "/admin/events/:id/control/resume", s.setQueuePaused(false), boxOffice},
		{http.MethodPost, "/admin/events/:id/control/rate", s.setQueueRate, boxOffice},
		{http.MethodPost, "/admin/events/:id/control/slots", s.setQueueSlots, boxOffice},

		// Venues and events: anyone may look, admins change.
		{http.MethodGet, "/admin/venues", s.listVenues, anyStaff},
		{http.MethodGet, "/admin/venues/new", s.newVenue, adminsOnly},
		{http.MethodPost, "/admin/venues", s.createVenue, adminsOnly},
		{http.MethodGet, "/admin/venues/:id", s.showVenue, anyStaff},
		{http.MethodPost, "/admin/venues/:id", s.updateVenue, adminsOnly},
		{http.MethodGet, "/admin/events/new", s.newEvent, adminsOnly},
		{http.MethodPost, "/admin/events", s.createEvent, adminsOnly},
		{http.MethodGet, "/admin/events/:id", s.editEvent, adminsOnly},
		{http.MethodPost, "/admin/events/:id", s.updateEvent, adminsOnly},
		{http.MethodPost, "/admin/events/:id/publish", s.publishEvent, adminsOnly},

		// The box office's seat map: sales at the window and staff holds (admin_sell.go).
		{http.MethodGet, "/admin/events/:id/sell", s.showSell, boxOffice},
		{http.MethodPost, "/admin/events/:id/sell", s.sellSeats, boxOffice},
		{http.MethodGet, "/admin/events/:id/sales/:order", s.showSale, boxOffice},
		{http.MethodPost, "/admin/events/:id/holds", s.holdSeatsForStaff, boxOffice},
		{http.MethodPost, "/admin/events/:id/holds/:hold/release", s.releaseStaffHold, boxOffice},

		{http.MethodGet, "/admin/orders", s.searchOrders, boxOffice},
		{http.MethodGet, "/admin/orders/:id", s.showAdminOrder, boxOffice},
		{http.MethodPost, "/admin/orders/:id/refund", s.refundOrder, boxOffice},
		{http.MethodPost, "/admin/orders/:id/refund/confirm", s.confirmRefund, boxOffice},
		{http.MethodGet, "/admin/till", s.showTill, boxOffice},
		{http.MethodGet, "/admin/till.csv", s.exportTill, boxOffice},
		{http.MethodPost, "/admin/orders/:id/resend", s.resendConfirmation, boxOffice},
		{http.MethodPost, "/admin/orders/:id/links/revoke", s.revokeOrderLinks, boxOffice},
		{http.MethodGet, "/admin/checkin", s.showCheckin, door},
		{http.MethodPost, "/admin/checkin", s.checkIn, door},
		{http.MethodGet, "/admin/events/:id/orders.csv", s.exportOrders, boxOffice},
		{http.MethodGet, "/admin/events/:id/checkins.csv", s.exportCheckins, boxOffice},

		// Prices (admin_pricing.go): types, fees and tax are the event's settings;
		// vouchers and access codes the box office's (admin_codes.go).
		{http.MethodGet, "/admin/events/:id/pricing", s.showPricing, adminsOnly},
		{http.MethodPost, "/admin/events/:id/pricing", s.setPricing, adminsOnly},
		{http.MethodPost, "/admin/events/:id/types", s.saveType, adminsOnly},
		{http.MethodPost, "/admin/events/:id/types/:type/pause", s.setTypePaused(true), adminsOnly},
		{http.MethodPost, "/admin/events/:id/types/:type/resume", s.setTypePaused(false), adminsOnly},
		{http.MethodGet, "/admin/events/:id/codes", s.showCodes, boxOffice},
		{http.MethodPost, "/admin/events/:id/vouchers", s.createVoucher, boxOffice},
		{http.MethodPost, "/admin/events/:id/vouchers/:code/pause", s.setCodePaused(true, true), boxOffice},
		{http.MethodPost, "/admin/events/:id/vouchers/:code/resume", s.setCodePaused(true, false), boxOffice},
		{http.MethodPost, "/admin/events/:id/access-codes", s.createAccessCode, boxOffice},
		{http.MethodPost, "/admin/events/:id/access-codes/:code/pause", s.setCodePaused(false, true), boxOffice},
		{http.MethodPost, "/admin/events/:id/access-codes/:code/resume", s.setCodePaused(false, false), boxOffice},
		{http.MethodGet, "/admin/events/:id/vouchers.csv", s.exportVouchers, boxOffice},
		{http.MethodGet, "/admin/events/:id/access-codes.csv", s.exportAccessCodes, boxOffice},
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
	session := []echo.MiddlewareFunc{noStore, middleware.BodyLimit(pageBodyLimit), loadSessions(s.StaffSessions, s.Log), s.csrf()}
	base := slices.Concat([]echo.MiddlewareFunc{timed, gz}, session)
	getHead(e, "/admin/login", s.showLogin, base...)
	e.POST("/admin/login", s.login, base...)
	e.POST("/admin/logout", s.logout, base...)
	for _, r := range s.adminRoutes() {
		mw := slices.Concat(base, []echo.MiddlewareFunc{s.requireStaff(r.roles...)})
		if adminStreams[r.path] {
			mw = slices.Concat(session, []echo.MiddlewareFunc{s.requireStaff(r.roles...)})
		}
		e.Add(r.method, r.path, r.handler, mw...)
		if r.method == http.MethodGet && !adminStreams[r.path] {
			e.Add(http.MethodHead, r.path, r.handler, mw...)
		}
	}
}

// adminHome lists the events, published or not, with the ways into each that the
// member's role allows.
func (s *server) adminHome(c echo.Context) error {
	events, published, err := s.adminEvents(c)
	if err != nil {
		return err
	}
	h := adminHomeView(adminPage(c, "Box office"), events, published)
	if currentStaff(c).Role.May(boxOffice...) {
		if h.Sales, err = s.salesDashboard(c); err != nil { // admin_dashboard.go
			return err
		}
	}
	return render(c, http.StatusOK, "no-store", views.AdminHomePage(h))
}

func adminHomeView(p views.AdminPage, events []booking.Event, published map[int64]bool) views.AdminHome {
	now := time.Now()
	h := views.AdminHome{AdminPage: p}
	for _, e := range events {
		ae := views.AdminEvent{ID: e.ID, Name: e.Name, Venue: e.Venue, When: ordertext.When(e),
			OnSale: onSaleText(e, now), Public: eventURL(e), Waiting: e.QueueEnabled, Unpublished: !published[e.ID]}
		if p.Role == string(staff.Admin) {
			ae.Edit = adminEventURL(e.ID)
		}
		if staff.Role(p.Role).May(boxOffice...) {
			ae.Sell = sellURL(e.ID, "")
		}
		h.Events = append(h.Events, ae)
	}
	return h
}
