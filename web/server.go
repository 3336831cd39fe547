package web

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo-contrib/echoprometheus"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/booking"
	"boxoffice/internal/catalog"
	"boxoffice/internal/checkin"
	"boxoffice/internal/config"
	"boxoffice/internal/iowait"
	"boxoffice/internal/latency"
	"boxoffice/internal/live"
	"boxoffice/internal/metrics"
	"boxoffice/internal/money"
	"boxoffice/internal/orderlink"
	"boxoffice/internal/pending"
	"boxoffice/internal/proof"
	"boxoffice/internal/staff"
	"boxoffice/internal/verification"
	"boxoffice/internal/waitroom"
)

// Limits on requests.
const (
	apiBodyLimit   = "256K"           // ten seat ids fit a thousand times over
	pageBodyLimit  = "64K"            // a form of seat ticks
	requestTimeout = 15 * time.Second // a request never waits longer on the database
	retryAfter     = "2"              // seconds, when the database is briefly away
)

// Deps are what the handler uses of the program, built by the composition root
// (internal/app). Every pointer, func and interface field is required: New refuses
// Deps with one left nil, naming it, so that a handler never starts without a part
// that only some request would find missing.
type Deps struct {
	Settings
	Log *slog.Logger
	// Metrics is the program's registry and counters: New adds the HTTP series to
	// it, and the control room reads the holds refused with 409 from it.
	Metrics *metrics.Metrics
	// Ready reports whether the program's stores answer, for /readyz.
	Ready func(ctx context.Context) error
	// Buyer is booking's buyer's flow, Desk its box office, Maps its seat maps.
	Buyer *booking.Buyer
	Desk  *booking.Desk
	Maps  *booking.Maps
	// Sessions are the buyers' sessions; Staff and StaffSessions the box office's
	// accounts and their logins.
	Sessions      *scs.SessionManager
	Staff         *staff.Service
	StaffSessions *scs.SessionManager
	// Catalog is venues, layouts and events, for the admin pages.
	Catalog *catalog.Service
	// Door checks tickets in.
	Door *checkin.Service
	// Verify registers and confirms verified buyers' emails (verify.go).
	Verify *verification.Service
	// Queue is the waiting room in front of onsales.
	Queue *waitroom.Room
	// Live is the process's one live hub: every seat stream is a watcher of it.
	Live *live.Hub
	// Load hears how long the sale's steps take (step): the waiting room admits
	// slower while they are past their bound.
	Load *latency.Meter
	// Proof issues and checks the proof of work asked, while ProofOfWork, before a
	// queue join and a session's first hold (proof.go).
	Proof *proof.Guard
	// Redis keeps the rate limits' counts, shared by every instance.
	Redis redis.UniversalClient
	// Links signs and reads the orders' access links (order_access.go).
	Links *orderlink.Signer
	// Afterwards runs the waiting-room work that follows an answer once the answer is
	// out (an admission extended to the hold just made), by buyer; the program drains
	// it before it closes Redis.
	Afterwards *pending.Set[string]
}

// Settings are the configured values the handler reads.
type Settings struct {
	CookieSecure  bool
	WebhookSecret string
	// ProviderName names the payment provider whose webhooks arrive ("test",
	// "stripe"): its events are recorded under it.
	ProviderName string
	// RedisPrefix goes before the rate limits' keys.
	RedisPrefix string
	// RateLimit and RateBurst bound each buyer's seat calls; PerAddress bounds what
	// one client address may do; Streams bound the live seat streams.
	RateLimit, RateBurst int
	PerAddress           config.PerAddress
	Streams              config.StreamLimits
	// TrustedProxies are the networks whose X-Forwarded-For is believed (clientAddr).
	TrustedProxies []*net.IPNet
	// ProofOfWork asks the proof of work before queue joins and first holds.
	ProofOfWork bool
	// BaseURL is the site's public address, which the orders' access links start with.
	BaseURL string
	// Money writes and reads the shop's amounts (SHOP_LOCALE); the zero value is
	// euros the English way.
	Money money.Shop
}

// missing names the required Deps left nil.
func (d Deps) missing() []string {
	var out []string
	v := reflect.ValueOf(d)
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Pointer, reflect.Func, reflect.Interface:
			if f.IsNil() {
				out = append(out, v.Type().Field(i).Name)
			}
		}
	}
	if d.ProviderName == "" {
		out = append(out, "ProviderName")
	}
	return out
}

// server carries what the handlers use of the program.
type server struct {
	Deps
	streams *seatStreams
	// events keeps events for a second, for every page, stream and check that names
	// one (eventByID, eventBySlug); limiter bounds each buyer's seat calls.
	events *eventCache
	boards *ttlCache[int64, waitroom.Board] // the events' queue boards, by id
	// presales keeps the events' presales for a second (presaleroom.go).
	presales *ttlCache[int64, booking.Presale]
	// allIn keeps the events' first prices (page_seatprice.go).
	allIn *ttlCache[int64, booking.AllInPrices]
	// mapBodies keeps the seat maps' encoded answers (seatmap_body.go).
	mapBodies mapBodies
	limiter   *rateLimiter
	// looks bounds the waiting pages' looks served at once, lookWait how long one
	// waits for a slot (lookSlots; 0: maxLookWait).
	looks    chan struct{}
	lookWait time.Duration
	// orderLinks signs and reads the orders' access links (order_access.go).
	orderLinks orderLinks
}

// New returns the HTTP handler of the whole program: every route, its middleware and
// the one error handler. Echo stays inside this package. It fails only on Deps with
// a required part missing, or on metrics that cannot be registered.
func New(d Deps) (http.Handler, error) {
	s, err := newServer(d)
	if err != nil {
		return nil, err
	}
	e, err := s.handler()
	if err != nil {
		return nil, err
	}
	return e, nil
}

// newServer checks d and builds the server the handlers run on.
func newServer(d Deps) (*server, error) {
	if m := d.missing(); len(m) > 0 {
		return nil, fmt.Errorf("web.New: Deps without %s: every part is required", strings.Join(m, ", "))
	}
	s := &server{
		Deps:   d,
		looks:  make(chan struct{}, 2*runtime.GOMAXPROCS(0)),
		events: newEventCache(), boards: newTTLCache[int64, waitroom.Board](boardTTL),
		allIn:      newTTLCache[int64, booking.AllInPrices](allInTTL),
		presales:   newTTLCache[int64, booking.Presale](eventCacheTTL),
		limiter:    newRateLimiter(d.Redis, d.RedisPrefix, d.RateLimit, d.RateBurst, d.Log),
		orderLinks: orderLinks{sign: d.Links, base: d.BaseURL},
	}
	s.limiter.perAddress = perAddressLimits(d.PerAddress)
	s.streams = newSeatStreams(StreamOptions{
		Hub: d.Live, Fragments: s.seatFragments, SessionCookie: d.Sessions.Cookie.Name, Log: s.Log,
		Event: func(ctx context.Context, slug string) (int64, error) {
			ev, err := s.eventBySlug(ctx, slug)
			return ev.ID, err
		},
		Known:         sessionKnown(d.Sessions),
		MaxPerSession: d.Streams.PerSession, MaxPerIP: d.Streams.PerAddress, MaxStreams: d.Streams.Max,
	})
	return s, nil
}

// handler is the server's routes, their middleware and the one error handler.
func (s *server) handler() (*echo.Echo, error) {
	// Outside the request logger, which hands errors to handleError: by the time the
	// counts are taken, the status is the one that went out.
	countHTTP, err := httpMetrics(s.Metrics.Registry)
	if err != nil {
		return nil, fmt.Errorf("web.New: HTTP metrics: %w", err)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = clientAddr(s.TrustedProxies)
	e.HTTPErrorHandler = s.handleError

	e.Use(middleware.RequestID())
	e.Use(countHTTP)
	e.Use(tally)
	e.Use(middleware.RequestLoggerWithConfig(s.requestLogConfig()))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true}))
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		XSSProtection:         "0", // the old XSS auditors are gone; "1" only ever caused harm
		ContentTypeNosniff:    "nosniff",
		XFrameOptions:         "DENY",
		HSTSMaxAge:            hstsMaxAge(s.CookieSecure),
		ContentSecurityPolicy: contentSecurityPolicy,
		ReferrerPolicy:        "same-origin",
	}))

	s.routes(e)
	return e, nil
}

// clientAddr finds a request's client address (rate limits, stream limits): the
// connection's, or the X-Forwarded-For entry that a proxy on loopback (the reference
// nginx, the onsale simulator) or in TRUSTED_PROXIES (a CDN's edges, a load
// balancer's network) put there, read from the right past every trusted hop. A
// client cannot name its own address, nor can a neighbour on a private network, and
// a CDN's thousands of clients do not share the edge's.
func clientAddr(trusted []*net.IPNet) echo.IPExtractor {
	trust := []echo.TrustOption{echo.TrustLoopback(true), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		trust = append(trust, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(trust...)
}

// sessionKnown reports whether a buyer session token is one the server issued and
// still keeps, for the live stream's counts. A value of another shape than scs's
// tokens (32 random bytes, base64url: 43 characters) is not looked up.
func sessionKnown(sm *scs.SessionManager) func(ctx context.Context, token string) bool {
	return func(ctx context.Context, token string) bool {
		if len(token) != 43 {
			return false
		}
		var found bool
		var err error
		if cs, ok := sm.Store.(scs.CtxStore); ok {
			_, found, err = cs.FindCtx(ctx, token)
		} else {
			_, found, err = sm.Store.Find(token)
		}
		return err == nil && found
	}
}

// httpMetrics counts requests and their latencies into reg, by route pattern
// (c.Path(), "/events/:slug") and status: never by the raw URL, which anyone can vary
// without end. Unrouted requests (404s) share the empty route, and the Host header,
// which a client chooses too, is left out.
func httpMetrics(reg prometheus.Registerer) (echo.MiddlewareFunc, error) {
	return echoprometheus.MiddlewareConfig{
		Namespace:                 metrics.Namespace,
		Subsystem:                 "http",
		Registerer:                reg,
		DoNotUseRequestPathFor404: true,
		LabelFuncs: map[string]echoprometheus.LabelValueFunc{
			"host": func(echo.Context, error) string { return "" },
		},
		StatusCodeResolver: func(c echo.Context, err error) int {
			if c.Response().Committed {
				return c.Response().Status
			}
			if err != nil {
				return http.StatusInternalServerError
			}
			return c.Response().Status
		},
	}.ToMiddleware()
}

// contentSecurityPolicy allows nothing but this origin: no inline script or style, no
// eval. htmx is configured to need neither (views.htmxConfig).
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

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

// step times a step of the sale (a hold, a checkout, a payment: the seat calls that
// change something) for the waiting room's governor: from when the request reaches
// its route to its answer, refusals and errors included, since a buyer waits for
// those too.
func (s *server) step(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if m := c.Request().Method; m == http.MethodGet || m == http.MethodHead {
			return next(c)
		}
		start := time.Now()
		err := next(c)
		s.Load.Step(time.Since(start))
		return err
	}
}

// noStore marks answers about one buyer as never cacheable.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "private, no-store")
		return next(c)
	}
}

// tally gives the request a tally of its waits for connections and its round trips
// (package spent), which its log line carries.
func tally(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, _ := iowait.With(c.Request().Context())
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// logHoldKind is the context key under which a hold call leaves its kind
// (booking.HoldRequest.Kind) for its request's log line.
const logHoldKind = "log.holdKind"

func (s *server) requestLogConfig() middleware.RequestLoggerConfig {
	return middleware.RequestLoggerConfig{
		LogStatus: true, LogURI: true, LogMethod: true, LogLatency: true, LogRequestID: true, LogError: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			switch {
			case v.Status >= 500:
				level = slog.LevelError
			case v.Status < 400 && quietRoutes[c.Path()]:
				level = slog.LevelDebug
			}
			if !s.Log.Enabled(c.Request().Context(), level) {
				return nil
			}
			attrs := []slog.Attr{
				slog.String("id", v.RequestID), slog.String("method", v.Method), slog.String("uri", redactURI(v.URI)),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency),
			}
			if v.Error != nil && v.Status >= 500 {
				attrs = append(attrs, slog.String("err", v.Error.Error()))
			}
			if kind, ok := c.Get(logHoldKind).(string); ok {
				attrs = append(attrs, slog.String("hold", kind))
			}
			if t := iowait.From(c.Request().Context()); t != nil && !t.Empty() {
				pg, trips := t.PG()
				rd, cmds := t.Redis()
				attrs = append(attrs, slog.Duration("db_wait", t.Acquire()), slog.Duration("db", pg), slog.Int("db_trips", trips),
					slog.Duration("redis", rd), slog.Int("redis_trips", cmds),
					slog.Duration("db_batched", t.Batched()))
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
	if err := s.Ready(ctx); err != nil {
		s.Log.WarnContext(ctx, "not ready", "err", err)
		c.Response().Header().Set("Retry-After", retryAfter)
		return c.String(http.StatusServiceUnavailable, "not ready\n")
	}
	return c.String(http.StatusOK, "ready\n")
}
