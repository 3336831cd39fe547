package web

import (
	"slices"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"boxoffice/static"
)

// routes is the routes table: every route of the program and its middleware, by
// surface. Global middleware (request id, log, recover, secure headers) is in New.
//
//   - public pages: no session, no cookie, cacheable by a CDN; GET and HEAD.
//   - buyer pages: the session, CSRF on every state-changing method (a form field or
//     the X-CSRF-Token header htmx sends), never cached.
//   - the live stream: public seat changes over SSE; no deadline, no gzip, no body.
//   - the JSON API under /api/v1: the session and CSRF for buyer calls; the payment
//     webhook is the one exemption from CSRF, authenticated by its signature instead.
func (s *server) routes(e *echo.Echo) {
	timed := deadline(requestTimeout)
	// Pages, assets and the big JSON (the seat map, the events) go out compressed: a
	// 2,500-seat section is 780 KB of markup and 38 KB gzipped. The buyer's API calls
	// answer a few hundred bytes and do without: Echo's middleware resets a compressor
	// for every answer it wraps, whatever the size, and at an onsale those resets take
	// 13 % of the server's CPU (docs/BENCHMARKS.md).
	gz := middleware.GzipWithConfig(middleware.GzipConfig{Level: 5, MinLength: 1024})

	// Plumbing.
	e.GET("/static/*", echo.WrapHandler(static.Handler()), gz)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	// Public pages.
	public := []echo.MiddlewareFunc{timed, gz}
	getHead(e, "/", s.home, public...)
	// public:
	getHead(e, "/events/:slug", s.showEvent, public...)
	getHead(e, "/events/:slug/door", s.showDoor, public...) // the front door's page (page_door.go)

	// Buyer pages.
	buyerPage := []echo.MiddlewareFunc{timed, gz, noStore, middleware.BodyLimit(pageBodyLimit), s.loadSession, s.csrf()}
	// Seat selection and checkout are limited per buyer and, while the event's waiting
	// room is on, need an admission (admission.go).
	seatPage := func(find eventOf) []echo.MiddlewareFunc {
		return slices.Concat([]echo.MiddlewareFunc{s.step}, buyerPage, []echo.MiddlewareFunc{s.rateLimit, s.admission(find), rateChecked})
	}
	// buyer pages:
	e.GET("/events/:slug/queue", s.showQueue, slices.Concat([]echo.MiddlewareFunc{s.pageLookSlots}, buyerPage)...)
	e.POST("/events/:slug/queue", s.joinQueueForm, buyerPage...) // with a proof of work (proof.go)
	e.GET("/events/:slug/seats", s.showSeats, seatPage(eventOfSlug)...)
	e.POST("/events/:slug/holds", s.createHoldForm, seatPage(eventOfSlug)...)
	e.POST("/holds/:holdId/release", s.releaseHoldForm, buyerPage...)
	e.POST("/holds/:holdId/seats/:seatId/remove", s.removeSeatForm, buyerPage...) // page_basket.go
	e.POST("/holds/:holdId/seats/:seatId/type", s.setTypeForm, buyerPage...)      // page_basketprice.go
	e.POST("/holds/:holdId/ga-types", s.setGATypesForm, buyerPage...)             // page_basketprice.go
	e.POST("/holds/:holdId/voucher", s.voucherForm, buyerPage...)
	getHead(e, "/holds/:holdId/checkout", s.showCheckout, seatPage(eventOfHold)...)
	e.POST("/holds/:holdId/checkout", s.submitCheckout, seatPage(eventOfHold)...)
	// An order's page and files: its session or its access link (order_access.go).
	orderPage := slices.Concat([]echo.MiddlewareFunc{orderPrivacy}, buyerPage)
	getHead(e, "/orders/:orderId", s.showOrder, orderPage...)
	getHead(e, "/orders/:orderId"+pdfSuffix, s.ticketsPDF, orderPage...)
	getHead(e, "/orders/:orderId"+icsSuffix, s.eventICS, orderPage...)
	getHead(e, ticketsPath, s.showFindTickets, buyerPage...) // tickets.go
	e.POST(ticketsPath, s.submitFindTickets, buyerPage...)

	// The live stream: no deadline, session or CSRF; no gzip (see stream.go).
	e.GET("/events/:slug/stream", s.streams.streamSeats)

	// The JSON API.
	// (No middleware on the group itself: Echo would then answer every unknown method
	// under it 404 instead of 405.)
	api := e.Group("/api/v1")
	body := middleware.BodyLimit(apiBodyLimit)
	buyer := []echo.MiddlewareFunc{timed, noStore, body, s.loadSession, s.csrf()}
	api.GET("/session", s.getSession, buyer...)
	api.GET("/challenge", s.getChallenge, timed, noStore) // a proof of work to solve (proof.go)
	api.GET("/events", s.listEvents, timed, gz)
	api.GET("/events/:id/seatmap", s.getSeatMap, timed) // gzipped by itself: seatmap_body.go
	api.GET("/events/:id/seatmap/statuses", s.getSeatStatuses, timed)
	api.GET("/events/:id/seatmap/layout", s.getSeatLayout, timed)
	api.POST("/events/:id/queue", s.joinQueue, buyer...)
	api.GET("/events/:id/queue", s.getQueue, slices.Concat([]echo.MiddlewareFunc{s.lookSlots}, buyer)...)
	api.GET("/events/:id/queue/board", s.getBoard, timed)
	// No session but verified buyers', and no deadline of their own: every call an
	// arrival may make bounds itself (queue_place.go).
	place := []echo.MiddlewareFunc{noStore, body, s.placeSession, s.csrf()}
	api.GET(placeRoute, s.getPlace, place...)
	api.POST(placeRoute, s.takePlace, place...)
	api.POST("/events/:id/queue/claim", s.claimPlace, buyer...)
	seatCall := func(find eventOf) []echo.MiddlewareFunc {
		return slices.Concat([]echo.MiddlewareFunc{s.step}, buyer, []echo.MiddlewareFunc{s.rateLimit, s.admission(find), rateChecked})
	}
	api.POST("/events/:id/holds", s.createHold, seatCall(eventOfPath)...)
	api.GET("/holds/:holdId", s.getHold, buyer...)
	api.DELETE("/holds/:holdId", s.releaseHold, buyer...)
	api.POST("/holds/:holdId/seats", s.addHoldSeats, seatCall(eventOfHold)...) // api_basket.go
	api.DELETE("/holds/:holdId/seats/:seatId", s.removeHoldSeat, buyer...)
	api.PUT("/holds/:holdId/seats/:seatId", s.setSeatType, buyer...) // api_basketprice.go
	api.PUT("/holds/:holdId/ga-types", s.setGATypes, buyer...)
	api.PUT("/holds/:holdId/voucher", s.setVoucher, buyer...)
	api.DELETE("/holds/:holdId/voucher", s.clearVoucher, buyer...)
	api.POST("/holds/:holdId/checkout", s.checkout, seatCall(eventOfHold)...)
	api.GET("/orders/:orderId", s.getOrder, slices.Concat([]echo.MiddlewareFunc{orderPrivacy}, buyer)...)
	api.POST("/order-links", s.postOrderLinks, buyer...) // tickets.go
	api.POST("/orders/:orderId/pay", s.pay, seatCall(eventOfOrder)...)
	api.POST("/payments/webhook", s.paymentWebhook, timed, noStore, body)
	s.routeVerify(e, buyerPage, buyer)  // verified buyers' registration (verify.go)
	s.routePresale(e, buyerPage, buyer) // access codes (presale.go)

	// The admin pages (routes_admin.go): staff sessions and roles.
	s.routeAdmin(e, timed, gz)
}

// getHead routes GET and HEAD of a path to one handler: net/http drops the body of a
// HEAD answer, so the headers (ETag, Cache-Control, length) are those of the GET.
func getHead(e *echo.Echo, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	e.GET(path, h, m...)
	e.HEAD(path, h, m...)
}
