package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/catalog"
	"boxoffice/internal/checkin"
	"boxoffice/internal/config"
	"boxoffice/internal/dbgate"
	"boxoffice/internal/iowait"
	"boxoffice/internal/jobs"
	"boxoffice/internal/latency"
	"boxoffice/internal/live"
	"boxoffice/internal/mail"
	"boxoffice/internal/orderlink"
	"boxoffice/internal/payment"
	"boxoffice/internal/payment/stripepay"
	"boxoffice/internal/proof"
	"boxoffice/internal/redisurl"
	"boxoffice/internal/session"
	"boxoffice/internal/staff"
	"boxoffice/internal/verification"
	"boxoffice/internal/waitroom"
)

// New's steps, in its order: each uses what the ones before it built.

// connect opens the PostgreSQL pool and the Redis client.
func (a *App) connect(ctx context.Context, opt Options) error {
	var err error
	if a.Pool, err = openPool(ctx, a.Config, a.Config.DatabaseURL, opt.PoolConfig); err != nil {
		return err
	}
	if a.Writes, err = openPool(ctx, a.Config, a.Config.DatabaseURL, func(pc *pgxpool.Config) {
		if opt.PoolConfig != nil {
			opt.PoolConfig(pc)
		}
		pc.MaxConns = writesConns
		if t, ok := pc.ConnConfig.Tracer.(dbgate.Tracer); ok {
			pc.ConnConfig.Tracer = t.Inner // no gate: nothing else waits in this pool
		}
	}); err != nil {
		return err
	}
	if err = a.openReplica(ctx, opt.PoolConfig); err != nil {
		return err
	}
	// One server, or a Redis Cluster when the URL lists seed nodes (redisurl.Open).
	if a.Redis, err = redisurl.Open(a.Config.RedisURL); err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	a.Redis.AddHook(iowait.Tracer{}) // a request's Redis time, for its log line
	if opt.RedisHook != nil {
		a.Redis.AddHook(opt.RedisHook)
	}
	return nil
}

// buildBooking builds the payment provider and booking's parts (the buyer's flow, the
// desk, the seat maps and the workers' side, over one store), which publish their
// seat changes on Redis.
func (a *App) buildBooking(mapMaxAge time.Duration) error {
	cfg := a.Config
	var err error
	if a.Provider, err = newProvider(a, cfg); err != nil {
		return err
	}
	a.publisher = live.NewPublisher(a.Redis, cfg.RedisPrefix, a.Log)
	a.Booking = booking.New(a.Pool, booking.Config{
		HoldTTL: cfg.HoldTTL, MaxPerBuyer: cfg.MaxPerBuyer, MaxHeldPerClient: cfg.PerAddress.SeatsHeld, MapMaxAge: mapMaxAge,
		ReconcileAfter: cfg.ReconcileAfter, IdempotencyTTL: cfg.IdempotencyTTL, RefundKeyWindow: cfg.RefundKeyWindow,
	}, a.publisher, a.Provider, a.Log)
	a.Booking.SetWrites(a.Writes)
	a.Booking.SetCounters(a.Metrics)
	a.Booking.SetReads(a.Reads.Stale())
	return nil
}

// buildJobs builds the mailer, the load meter, the verified buyers' service and the
// job queue. The queue's workers call booking's Worker and booking queues on the
// queue: booking is built first and given the queue before any request can reach it.
func (a *App) buildJobs(testOnly bool) error {
	cfg := a.Config
	var err error
	a.Mail, err = mail.New(mail.Config{
		Host: cfg.SMTP.Host, Port: cfg.SMTP.Port, ImplicitTLS: cfg.SMTP.ImplicitTLS, RequireTLS: cfg.SMTP.RequireTLS,
		Username: cfg.SMTP.Username, Password: cfg.SMTP.Password, From: cfg.MailFrom,
	}, a.Log)
	if err != nil {
		return err
	}
	a.Load = latency.New(cfg.LatencyBound)
	a.Verify = verification.New(a.Pool, cfg.AdmissionKeys, verification.Options{})
	a.Links = orderlink.New(cfg.AdmissionKeys)
	a.Jobs, err = jobs.New(a.Pool, a.Booking.Worker, a.Mail, jobs.Config{
		Workers: cfg.JobWorkers, EmailWorkers: cfg.EmailWorkers, ReconcileInterval: cfg.ReconcileInterval,
		Site:        mail.Site{BaseURL: cfg.BaseURL, MaxPerBuyer: cfg.MaxPerBuyer, Links: a.Links, Money: cfg.Money},
		StopTimeout: cfg.ShutdownTimeout / 2, TestOnly: testOnly,
		Busy: func() bool { return a.Load.Level() >= emailEaseLevel }, EmailWait: cfg.EmailWait,
		OnSale: a.Load.Active, SaleRate: cfg.EmailSaleRate, Verifications: a.Verify,
		PollOnly: cfg.DB.Pooler == config.PoolerTransaction, // no LISTEN through a transaction pooler
	}, a.Log)
	if err != nil {
		return err
	}
	a.Booking.SetJobs(a.Jobs)
	a.Verify.SetJobs(a.Jobs)
	return nil
}

// buildLive builds the live hub, which keeps booking's seat map cache current, and
// the waiting room, which reads booking's events and stock and the load meter.
func (a *App) buildLive(qopt waitroom.Options) {
	cfg := a.Config
	a.Live = live.NewHub(a.Redis, cfg.RedisPrefix, a.Log, live.HubOptions{
		Apply: a.Booking.Maps.ApplySeatChanges, Reset: a.Booking.Maps.ResyncSeatMap, Unwatched: a.Booking.Maps.SeatMapUnwatched,
		Repair: a.Booking.Maps.SeatMapDrift,
	})
	a.Queue = waitroom.New(a.Redis, cfg.RedisPrefix, cfg.AdmissionKeys, waitroom.Hooks{
		Events: func(ctx context.Context) ([]waitroom.Event, error) {
			events, err := a.Booking.Buyer.QueuedEvents(ctx)
			out := make([]waitroom.Event, len(events))
			for i, ev := range events {
				out[i] = ev.Room()
			}
			if err != nil {
				return out, err
			}
			presales, err := a.Booking.Buyer.QueuedPresales(ctx) // their own rooms (booking/presaleroom.go)
			return append(out, presales...), err
		},
		Stock: func(ctx context.Context, roomID int64) (waitroom.Stock, error) {
			eventID, presale := booking.RoomEvent(roomID)
			stock := a.Booking.Maps.Stock
			if presale {
				stock = a.Booking.Maps.PresaleStock
			}
			st, err := stock(ctx, eventID)
			return waitroom.Stock{Unsold: st.Unsold, Free: st.Free}, err
		},
		// A presale's admissions count as its event's.
		Admitted: func(roomID int64, n int) { a.Metrics.QueueAdmitted(roomEvent(roomID), n) },
		Lapsed:   func(roomID int64, lapsed, reused int) { a.Metrics.QueueLapsed(roomEvent(roomID), lapsed, reused) },
		Load:     a.Load.Level,
	}, a.Log, qopt)
}

// buildDesk builds the sessions, the staff's accounts, the catalogue, the door and
// the proof of work: the rest of what the handler uses.
func (a *App) buildDesk() {
	cfg := a.Config
	a.store = session.NewStore(a.Pool)
	a.store.SetWrites(a.Writes)
	a.Sessions = session.Buyers(a.store, cfg.CookieSecure)
	a.StaffSessions = session.Staff(session.NewUncachedStore(a.Pool), cfg.CookieSecure, cfg.StaffIdleTimeout, cfg.StaffLifetime)
	staffPolicy := staff.DefaultPolicy()
	staffPolicy.Hashes, staffPolicy.HashWait = cfg.StaffLoginHashes, cfg.StaffLoginWait
	a.Staff = staff.NewWith(a.Pool, staffPolicy)
	a.Catalog = catalog.New(a.Pool)
	a.Door = checkin.New(a.Pool)
	secrets := make([][]byte, len(cfg.AdmissionKeys))
	for i, k := range cfg.AdmissionKeys {
		secrets[i] = k.Secret
	}
	a.Proof = proof.New(a.Redis, cfg.RedisPrefix, secrets, cfg.ProofMaxNumber)
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

// NewLogger is the logger cfg asks for, writing to w (stderr when nil).
func NewLogger(cfg config.Config, w io.Writer) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// gateWaiting reads the pool's gate, nil when the pool has none (a tracer of a test's
// or a benchmark's own).
func gateWaiting(pool *pgxpool.Pool) func() (int, int, int) {
	if g := dbgate.Of(pool); g != nil {
		return g.Waiting
	}
	return nil
}

// writesConns is the size of the pool for the batched small writes (App.Writes): one
// connection, which the session, claim and answer batches take in turn. Each batch is
// one short statement; what a second or third connection would add is PostgreSQL
// backends busy beside the sale's pool, and on 2 cores (make onsale, without the
// shop's steps) three made every round trip of the sale's transactions 1.5 times as
// long and the sale sell out at 141-150 s, where one gave 112 s against 119 s for the
// code before, side by side.
const writesConns = 1

// openPool connects to PostgreSQL with short connect timeouts, so that a database that
// is down turns requests into quick 503s rather than hangs.
func openPool(ctx context.Context, cfg config.Config, url string, adjust func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if cfg.DB.ExecMode != "" {
		pc.ConnConfig.DefaultQueryExecMode = execModes[cfg.DB.ExecMode]
	}
	pc.MaxConns = cfg.DBMaxConns
	pc.ConnConfig.ConnectTimeout = 3 * time.Second
	pc.HealthCheckPeriod = 5 * time.Second
	// A request's waits for a connection and its round trips, for its log line; holds
	// first in the queue for a connection (dbgate).
	pc.ConnConfig.Tracer = dbgate.Tracer{Inner: iowait.Tracer{}, Gate: &dbgate.Gate{}}
	if adjust != nil {
		adjust(pc)
	}
	return pgxpool.NewWithConfig(ctx, pc)
}

// roomEvent is the event of a waiting room id: its own, or its presale's.
func roomEvent(roomID int64) int64 {
	id, _ := booking.RoomEvent(roomID)
	return id
}
