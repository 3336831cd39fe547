// Package app is boxoffice's composition root: the one place that turns a Config into
// connected pools, the booking service, the payment provider, the job queue and its
// mailer, the live feed and the session manager. `boxoffice serve`, the benchmarks and
// the HTTP tests all build the program through New, so that what is tested is what
// runs.
//
// The HTTP handler is the last step, web.New(app), and lives in web rather than here:
// web's own tests build an App, and a root that imported web could not be imported by
// them.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/booking"
	"boxoffice/internal/catalog"
	"boxoffice/internal/checkin"
	"boxoffice/internal/config"
	"boxoffice/internal/dbgate"
	"boxoffice/internal/jobs"
	"boxoffice/internal/live"
	"boxoffice/internal/load"
	"boxoffice/internal/mail"
	"boxoffice/internal/metrics"
	"boxoffice/internal/orderlink"
	"boxoffice/internal/payment"
	"boxoffice/internal/payment/stripepay"
	"boxoffice/internal/session"
	"boxoffice/internal/spent"
	"boxoffice/internal/staff"
	"boxoffice/internal/verification"
	"boxoffice/internal/waitroom"
)

// The program's cookies, by their names over plain HTTP; CookieName gives the name
// each goes by.
const (
	SessionCookie = "boxoffice_session" // the buyer's session
	StaffCookie   = "boxoffice_staff"   // a staff login, sent only to /admin over plain HTTP
	CSRFCookie    = "boxoffice_csrf"    // the CSRF token's double
	// StaffDeviceCookie holds a browser's known-device tokens for staff logins, sent
	// only to /admin/login over plain HTTP.
	StaffDeviceCookie = "boxoffice_staff_device"
)

// CookieName is the name a cookie goes by. With secure cookies it carries the
// __Host- prefix, which browsers accept only from this very host, over HTTPS, for
// Path=/ and without a Domain: no other site, not even a subdomain or a neighbour on
// the same registrable domain, can plant or overwrite it (a planted session is a
// session fixation; a planted CSRF cookie with its matching token is a forgery).
func CookieName(name string, secure bool) string {
	if secure {
		return "__Host-" + name
	}
	return name
}

// emailEaseLevel is the load level (Load.Level: the sale's steps' p95 over
// LATENCY_BOUND) at or above which confirmation emails wait (EMAIL_WAIT): a fifth of
// the bound, 50 ms at the default, the tail a hold aims for (docs/BENCHMARKS.md). At
// half the bound, emails would step aside only just before the waiting room cuts its
// rate: an onsale at 44 arrivals a second stays under a half, and the confirmations
// would run beside the whole sale at a quarter of the server's CPU. On a quiet day the
// steps are far under a fifth (and the meter says 0 under 20 steps in its window), so
// emails go at once.
const emailEaseLevel = 0.2

// Options adjust how New builds the program, for benchmarks and tests. The zero value
// is production.
type Options struct {
	// Log receives every log line; nil means the format cfg.LogFormat names, on stderr.
	Log *slog.Logger
	// LogTo is where the default logger writes (nil: nowhere but stderr).
	LogTo io.Writer
	// PoolConfig adjusts the pool before it connects (an application_name, a tracer,
	// shorter timeouts).
	PoolConfig func(*pgxpool.Config)
	// RedisHook, if set, is added to the Redis client (a benchmark's tracer).
	RedisHook redis.Hook
	// MapMaxAge overrides how stale an unwatched seat map may be served.
	MapMaxAge time.Duration
	// Queue tunes the waiting room (a fast admitter tick in tests).
	Queue waitroom.Options
	// JobsTestOnly starts the job queue's maintenance (the periodic reconciliation)
	// at once instead of after a random delay, for tests.
	JobsTestOnly bool
}

// App is the whole program but its HTTP handler.
type App struct {
	Config  config.Config
	Log     *slog.Logger
	Pool    *pgxpool.Pool
	Redis   *redis.Client
	Booking *booking.Service
	// Provider is the payment provider booking charges with (PAYMENT_PROVIDER): the
	// test provider, which is then Payments too, or the Stripe adapter.
	Provider booking.Provider
	// Payments is the built-in test provider, nil unless PAYMENT_PROVIDER=test.
	Payments *payment.TestProvider
	Sessions *scs.SessionManager
	// Staff is the box office's accounts and audit log; StaffSessions their logins,
	// kept apart from buyers' and never cached in memory.
	Staff         *staff.Service
	StaffSessions *scs.SessionManager
	// Catalog creates and changes venues, layouts and events (the admin pages).
	Catalog *catalog.Service
	// Door checks tickets in at the door.
	Door *checkin.Service
	// Live is the process's one subscription hub for seat changes: it keeps the seat
	// map cache current and feeds every open seat map.
	Live *live.Hub
	// Queue is the waiting room in front of onsales whose room is on; its admitter
	// runs in Run.
	Queue *waitroom.Room
	// Load measures the sale's steps (holds, checkouts, payments; the web server
	// notes them); the waiting room admits slower while they are past LATENCY_BOUND.
	// Nil with LATENCY_BOUND=off.
	Load *load.Meter
	// Mail sends the buyer's emails, or logs them when SMTP_URL is not set.
	Mail *mail.Mailer
	// Jobs is the job queue (River): booking queues refunds and emails on it in its
	// transactions; its workers and the periodic reconciliation run in Run.
	Jobs *jobs.Queue
	// Verify registers and confirms the addresses of verified buyers, for onsales
	// that ask for them; its links are signed with the admission keys.
	Verify *verification.Service
	// Links signs the orders' access links (in the emails, read by web), with the
	// admission keys under a domain of their own.
	Links *orderlink.Signer
	// Metrics is the program's own Prometheus registry and counters: web adds the
	// HTTP series to it, and serve exposes it on METRICS_ADDR, never on the public
	// handler.
	Metrics *metrics.Metrics

	publisher *live.Publisher
	store     *session.Store
}

// New connects to PostgreSQL and Redis and builds the services. It does not migrate:
// `serve` does that first, under a lock, and tests start from a migrated template.
func New(ctx context.Context, cfg config.Config, opt Options) (a *App, err error) {
	a = &App{Config: cfg, Log: opt.Log, Metrics: metrics.New()}
	if a.Log == nil {
		a.Log = NewLogger(cfg, opt.LogTo)
	}
	defer func() {
		if err != nil {
			_ = a.Close(context.WithoutCancel(ctx))
		}
	}()
	if a.Pool, err = openPool(ctx, cfg, opt.PoolConfig); err != nil {
		return a, err
	}
	ropt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return a, fmt.Errorf("REDIS_URL: %w", err)
	}
	// Calls end at their context's deadline, not only at the read timeout (seconds): a
	// Redis that hangs must turn into quick fallbacks (the rate limiter lets calls
	// through, the queue says it is paused), never into hung requests.
	ropt.ContextTimeoutEnabled = true
	a.Redis = redis.NewClient(ropt)
	a.Redis.AddHook(spent.Tracer{}) // a request's Redis time, for its log line
	if opt.RedisHook != nil {
		a.Redis.AddHook(opt.RedisHook)
	}

	if a.Provider, err = newProvider(a, cfg); err != nil {
		return a, err
	}
	a.publisher = live.NewPublisher(a.Redis, cfg.RedisPrefix, a.Log)
	a.Booking = booking.New(a.Pool, booking.Config{
		HoldTTL: cfg.HoldTTL, MaxPerBuyer: cfg.MaxPerBuyer, MaxHeldPerClient: cfg.PerAddress.SeatsHeld, MapMaxAge: opt.MapMaxAge,
		ReconcileAfter: cfg.ReconcileAfter, IdempotencyTTL: cfg.IdempotencyTTL, RefundKeyWindow: cfg.RefundKeyWindow,
	}, a.publisher, a.Provider, a.Log)
	a.Booking.SetCounters(a.Metrics)

	// The queue's workers call the booking service and booking queues on the queue:
	// booking is built first and given the queue before any request can reach it.
	a.Mail, err = mail.New(mail.Config{
		Host: cfg.SMTP.Host, Port: cfg.SMTP.Port, ImplicitTLS: cfg.SMTP.ImplicitTLS, RequireTLS: cfg.SMTP.RequireTLS,
		Username: cfg.SMTP.Username, Password: cfg.SMTP.Password, From: cfg.MailFrom,
	}, a.Log)
	if err != nil {
		return a, err
	}
	a.Load = load.New(cfg.LatencyBound)
	a.Verify = verification.New(a.Pool, verificationKeys(cfg), verification.Options{})
	a.Links = orderlink.New(verificationKeys(cfg))
	a.Jobs, err = jobs.New(a.Pool, a.Booking, a.Mail, jobs.Config{
		Workers: cfg.JobWorkers, EmailWorkers: cfg.EmailWorkers, ReconcileInterval: cfg.ReconcileInterval,
		Site:        mail.Site{BaseURL: cfg.BaseURL, MaxPerBuyer: cfg.MaxPerBuyer, Links: a.Links},
		StopTimeout: cfg.ShutdownTimeout / 2, TestOnly: opt.JobsTestOnly,
		Busy: func() bool { return a.Load.Level() >= emailEaseLevel }, EmailWait: cfg.EmailWait,
		OnSale: a.Load.Active, SaleRate: cfg.EmailSaleRate, Verifications: a.Verify,
	}, a.Log)
	if err != nil {
		return a, err
	}
	a.Booking.SetJobs(a.Jobs)
	a.Verify.SetJobs(a.Jobs)

	a.Live = live.NewHub(a.Redis, cfg.RedisPrefix, a.Log, live.HubOptions{
		Apply: a.Booking.ApplySeatChanges, Reset: a.Booking.ResyncSeatMap, Unwatched: a.Booking.SeatMapUnwatched,
	})

	keys := make([]waitroom.Key, len(cfg.AdmissionKeys))
	for i, k := range cfg.AdmissionKeys {
		keys[i] = waitroom.Key{ID: k.ID, Secret: k.Secret}
	}
	a.Queue = waitroom.New(a.Redis, cfg.RedisPrefix, keys, waitroom.Hooks{
		Events: func(ctx context.Context) ([]waitroom.Event, error) {
			events, err := a.Booking.QueuedEvents(ctx)
			out := make([]waitroom.Event, len(events))
			for i, ev := range events {
				out[i] = QueueEvent(ev)
			}
			return out, err
		},
		Stock: func(ctx context.Context, eventID int64) (waitroom.Stock, error) {
			st, err := a.Booking.Stock(ctx, eventID)
			return waitroom.Stock{Unsold: st.Unsold, Free: st.Free}, err
		},
		Admitted: a.Metrics.QueueAdmitted,
		Load:     a.Load.Level,
	}, a.Log, opt.Queue)
	if err := a.Metrics.Watch(metrics.Sources{
		Pool: a.Pool, Redis: a.Redis, SSEClients: a.Live.Watchers, Queues: a.queues, Log: a.Log,
		BestAvailable: a.Booking.BestAvailableCounts, Load: a.Load.Level, DBGate: gateWaiting(a.Pool),
	}); err != nil {
		return a, err
	}

	a.store = session.NewStore(a.Pool)
	a.Sessions = scs.New()
	a.Sessions.Store = a.store
	a.Sessions.Codec = session.NewCodec()
	a.Sessions.Lifetime = 24 * time.Hour
	a.Sessions.Cookie.Name = CookieName(SessionCookie, cfg.CookieSecure)
	a.Sessions.Cookie.HttpOnly = true
	a.Sessions.Cookie.SameSite = http.SameSiteLaxMode
	a.Sessions.Cookie.Secure = cfg.CookieSecure

	staffPolicy := staff.DefaultPolicy()
	staffPolicy.Hashes, staffPolicy.HashWait = cfg.StaffLoginHashes, cfg.StaffLoginWait
	a.Staff = staff.NewWith(a.Pool, staffPolicy)
	a.Catalog = catalog.New(a.Pool)
	a.Door = checkin.New(a.Pool)
	a.StaffSessions = scs.New()
	a.StaffSessions.Store = session.NewUncachedStore(a.Pool)
	a.StaffSessions.IdleTimeout = cfg.StaffIdleTimeout
	a.StaffSessions.Lifetime = cfg.StaffLifetime
	a.StaffSessions.Cookie.Name = CookieName(StaffCookie, cfg.CookieSecure)
	if !cfg.CookieSecure {
		a.StaffSessions.Cookie.Path = "/admin" // __Host- cookies are Path=/ (its default)
	}
	a.StaffSessions.Cookie.HttpOnly = true
	a.StaffSessions.Cookie.SameSite = http.SameSiteStrictMode
	a.StaffSessions.Cookie.Secure = cfg.CookieSecure
	return a, nil
}

// verificationKeys are the admission keys, which also sign the verified buyers' links
// (under a domain string of their own, so that neither kind of token passes for the
// other).
func verificationKeys(cfg config.Config) []verification.Key {
	keys := make([]verification.Key, len(cfg.AdmissionKeys))
	for i, k := range cfg.AdmissionKeys {
		keys[i] = verification.Key{ID: k.ID, Secret: k.Secret}
	}
	return keys
}

// newProvider builds the payment provider cfg names; the test provider is also kept
// in a.Payments, for its test-only controls.
func newProvider(a *App, cfg config.Config) (booking.Provider, error) {
	switch cfg.PaymentProvider {
	case config.ProviderStripe:
		p, err := stripepay.New(stripepay.Config{SecretKey: cfg.StripeSecretKey, URL: cfg.StripeAPIURL, Logger: a.Log})
		if err != nil {
			return nil, fmt.Errorf("PAYMENT_PROVIDER=stripe: %w", err)
		}
		return p, nil
	case config.ProviderTest, "":
		a.Payments = payment.NewTestProvider(payment.Config{
			Secret: cfg.WebhookSecret, WebhookURL: cfg.WebhookURL, LateDelay: cfg.PaymentLate,
			Default: payment.Delivery(cfg.PaymentDelivery), Logger: a.Log,
		})
		return a.Payments, nil
	default:
		return nil, fmt.Errorf("PAYMENT_PROVIDER=%q: want test or stripe", cfg.PaymentProvider)
	}
}

// QueueEvent is what the waiting room knows of an event: the one place that maps the
// event's stored queue settings to the room's.
func QueueEvent(ev booking.Event) waitroom.Event {
	rate := ev.QueueRate
	if ev.QueuePaused {
		rate = 0 // the room's pause: nobody admitted, the queue kept
	}
	return waitroom.Event{ID: ev.ID, OnsaleAt: ev.OnsaleAt, Settings: waitroom.Settings{
		Enabled: ev.QueueEnabled, Slots: ev.QueueSlots, Rate: rate, TokenTTL: ev.QueueTokenTTL,
	}}
}

// queues reads the waiting room of every event whose room is on, for /metrics: the
// events from the database, their rooms from Redis. An event whose room cannot be read
// is left out, and the error says why.
func (a *App) queues(ctx context.Context) ([]metrics.Queue, error) {
	events, err := a.Booking.QueuedEvents(ctx)
	if err != nil {
		return nil, err
	}
	var out []metrics.Queue
	var errs []error
	for _, ev := range events {
		qe := QueueEvent(ev) // the room's own view: a paused room admits at rate 0
		if !qe.Settings.Enabled {
			continue
		}
		n, err := a.Queue.Counts(ctx, ev.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("event %d: %w", ev.ID, err))
			continue
		}
		out = append(out, metrics.Queue{EventID: ev.ID, Waiting: n.Waiting, Active: n.Active,
			Rate: qe.Settings.Rate, Limit: a.Queue.Limited(qe.Settings).Rate})
	}
	return out, errors.Join(errs...)
}

// NewLogger is the logger cfg asks for, writing to w (stderr when nil).
func NewLogger(cfg config.Config, w io.Writer) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// gateWaiting reads the pool's gate, nil when the pool has none (a tracer of a test's
// or a benchmark's own).
func gateWaiting(pool *pgxpool.Pool) func() (int, int, int) {
	if g := dbgate.Of(pool); g != nil {
		return g.Waiting
	}
	return nil
}

// openPool connects to PostgreSQL with short connect timeouts, so that a database that
// is down turns requests into quick 503s rather than hangs.
func openPool(ctx context.Context, cfg config.Config, adjust func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	pc.MaxConns = cfg.DBMaxConns
	pc.ConnConfig.ConnectTimeout = 3 * time.Second
	pc.HealthCheckPeriod = 5 * time.Second
	// A request's waits for a connection and its round trips, for its log line; holds
	// first in the queue for a connection (dbgate).
	pc.ConnConfig.Tracer = dbgate.Tracer{Inner: spent.Tracer{}, Gate: &dbgate.Gate{}}
	if adjust != nil {
		adjust(pc)
	}
	return pgxpool.NewWithConfig(ctx, pc)
}

// Ready reports whether PostgreSQL and Redis answer.
func (a *App) Ready(ctx context.Context) error {
	return errors.Join(a.Pool.Ping(ctx), a.Redis.Ping(ctx).Err())
}

// Run does the background work of a server until ctx ends: the tidy-up of lapsed holds,
// the removal of expired sessions and of old failed staff logins, the waiting room's
// admitter (which works on one instance at a time and stands by on the others), and
// the job queue's workers (on every instance; River elects one to queue the periodic
// reconciliation). It returns once all of them have stopped.
func (a *App) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { a.store.Cleanup(ctx, 5*time.Minute) })
	wg.Go(func() { a.pruneLoginFailures(ctx, 10*time.Minute) })
	wg.Go(func() { a.Queue.Run(ctx) })
	wg.Go(func() { a.Jobs.Run(ctx) })
	a.Booking.RunTidy(ctx, a.Config.TidyInterval)
	wg.Wait()
}

// pruneLoginFailures deletes failed staff logins past the throttle's window every
// interval until ctx ends: the throttle counts only within the window, so this only
// keeps the table small. Every instance may do it; the deletes do not conflict.
func (a *App) pruneLoginFailures(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := a.Staff.PruneFailures(ctx); err != nil && ctx.Err() == nil {
				a.Log.Warn("old failed logins not pruned", "err", err)
			}
		}
	}
}

// Close ends the live streams, stops the job queue if Run left it running, lets the
// payment provider finish its deliveries (within ctx), sends the seat changes still
// queued, and closes the connections, in that order: each step may still need the
// ones after it.
func (a *App) Close(ctx context.Context) error {
	var err error
	if a.Live != nil {
		a.Live.Close()
	}
	if a.Jobs != nil {
		err = a.Jobs.Stop(ctx)
	}
	if a.Payments != nil {
		err = errors.Join(err, a.Payments.Close(ctx))
	}
	if a.publisher != nil {
		a.publisher.Close()
	}
	if a.Redis != nil {
		err = errors.Join(err, a.Redis.Close())
	}
	if a.Pool != nil {
		a.Pool.Close()
	}
	return err
}
