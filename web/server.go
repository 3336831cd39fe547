// Package web is boxoffice's HTTP surface and the only package that imports Echo: the
// routes table, middleware, one file per resource, and the one error handler.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"boxoffice/internal/booking"
	"boxoffice/static"
)

// Deps is what the server needs from the rest of boxoffice.
type Deps struct {
	Booking       *booking.Service
	Sessions      *scs.SessionManager
	Ready         func(ctx context.Context) error // PostgreSQL and Redis reachable
	WebhookSecret string
	CookieSecure  bool
	Log           *slog.Logger
}

// Limits on requests.
const (
	apiBodyLimit   = "256K"           // ten seat ids fit a thousand times over
	requestTimeout = 15 * time.Second // a request never waits longer on the database
	retryAfter     = "2"              // seconds, when the database is briefly away
)

type server struct {
	Deps
}

// New returns the HTTP handler with every route.
func New(d Deps) *echo.Echo {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	s := &server{Deps: d}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError

	e.Use(middleware.RequestID())
	e.Use(middleware.RequestLoggerWithConfig(s.requestLogConfig()))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true}))
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		XSSProtection:         "0", // the old XSS auditors are gone; "1" only ever caused harm
		ContentTypeNosniff:    "nosniff",
		XFrameOptions:         "DENY",
		HSTSMaxAge:            hstsMaxAge(d.CookieSecure),
		ContentSecurityPolicy: "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
		ReferrerPolicy:        "same-origin",
	}))
	e.Use(deadline(requestTimeout))

	s.routes(e)
	return e
}

// routes is the routes table. Buyer routes load the session and check the CSRF token on
// every state-changing method; the payment webhook is the one exemption from CSRF: it
// is authenticated by its signature instead.
func (s *server) routes(e *echo.Echo) {
	e.GET("/", s.home)
	e.GET("/static/*", echo.WrapHandler(static.Handler()))
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	api := e.Group("/api/v1")
	body := middleware.BodyLimit(apiBodyLimit)
	buyer := []echo.MiddlewareFunc{noStore, body, s.loadSession, s.csrf()}

	api.GET("/session", s.getSession, buyer...)
	api.GET("/events", s.listEvents)
	api.GET("/events/:id/seatmap", s.getSeatMap)
	api.POST("/events/:id/queue", s.joinQueue, buyer...)
	api.GET("/events/:id/queue", s.getQueue, buyer...)
	api.POST("/events/:id/holds", s.createHold, buyer...)
	api.GET("/holds/:holdId", s.getHold, buyer...)
	api.DELETE("/holds/:holdId", s.releaseHold, buyer...)
	api.POST("/holds/:holdId/checkout", s.checkout, buyer...)
	api.GET("/orders/:orderId", s.getOrder, buyer...)
	api.POST("/orders/:orderId/pay", s.pay, buyer...)
	api.POST("/payments/webhook", s.paymentWebhook, noStore, body)
}

func hstsMaxAge(secure bool) int {
	if secure {
		return 365 * 24 * 3600
	}
	return 0
}

// deadline bounds the time a request may spend, through its context: a database that
// hangs turns into a 503, never a hung request. (Not Echo's Timeout middleware, which
// would also cut off streams.)
func deadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx, cancel := context.WithTimeout(c.Request().Context(), d)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			return next(c)
		}
	}
}

// noStore marks answers about one buyer as never cacheable.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "private, no-store")
		return next(c)
	}
}

func (s *server) requestLogConfig() middleware.RequestLoggerConfig {
	return middleware.RequestLoggerConfig{
		LogStatus: true, LogURI: true, LogMethod: true, LogLatency: true, LogRequestID: true, LogError: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			if v.Status >= 500 {
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("id", v.RequestID), slog.String("method", v.Method), slog.String("uri", v.URI),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency),
			}
			if v.Error != nil && v.Status >= 500 {
				attrs = append(attrs, slog.String("err", v.Error.Error()))
			}
			s.Log.LogAttrs(c.Request().Context(), level, "request", attrs...)
			return nil
		},
	}
}

func (s *server) healthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok\n")
}

func (s *server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if s.Ready != nil {
		if err := s.Ready(ctx); err != nil {
			s.Log.WarnContext(ctx, "not ready", "err", err)
			c.Response().Header().Set("Retry-After", retryAfter)
			return c.String(http.StatusServiceUnavailable, "not ready\n")
		}
	}
	return c.String(http.StatusOK, "ready\n")
}
