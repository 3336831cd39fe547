// Package app is boxoffice's composition root: the one place that turns a Config into
// connected pools, booking's parts, the payment provider, the job queue and its
// mailer, the live feed, the sessions and, last, the HTTP handler. `boxoffice serve`,
// the benchmarks and the HTTP tests all build the program through New, so that what
// is tested is what runs.
//
// The root sits on top: it hands web the parts web uses (WebDeps) and web imports
// nothing of it. Nothing but `boxoffice serve`, internal/apptest and the bench kit
// imports app (internal/layering checks it).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/booking"
	"boxoffice/internal/catalog"
	"boxoffice/internal/checkin"
	"boxoffice/internal/config"
	"boxoffice/internal/groupcommit"
	"boxoffice/internal/jobs"
	"boxoffice/internal/latency"
	"boxoffice/internal/live"
	"boxoffice/internal/mail"
	"boxoffice/internal/metrics"
	"boxoffice/internal/orderlink"
	"boxoffice/internal/payment"
	"boxoffice/internal/pending"
	"boxoffice/internal/proof"
	"boxoffice/internal/replica"
	"boxoffice/internal/session"
	"boxoffice/internal/staff"
	"boxoffice/internal/ticker"
	"boxoffice/internal/verification"
	"boxoffice/internal/waitroom"
	"boxoffice/web"
)

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

// App is the whole program.
type App struct {
	Config config.Config
	Log    *slog.Logger
	Pool   *pgxpool.Pool
	// Writes is a small pool of the primary's for the buyers' session writes and the
	// API's Idempotency-Keys, batched asynchronous commits that an admission's first
	// call and every keyed call wait on: apart from Pool and its gate, where they
	// would queue behind the sale's transactions (booking.Services.SetWrites,
	// session.Store.SetWrites).
	Writes *pgxpool.Pool
	// Replica is the streaming replica's pool (DATABASE_REPLICA_URL), nil without
	// one; Reads chooses between it and Pool for the reads that may be a second stale.
	Replica *pgxpool.Pool
	Reads   *replica.Reads
	Redis   redis.UniversalClient
	// Booking is the sale's domain, by who calls it: the buyer's flow (web), the box
	// office's desk (web's admin), the seat maps (web and the live hub) and the
	// workers' side (the job queue and Run's tidy-up).
	Booking *booking.Services
	// afterwards is the waiting-room work web does after an answer has gone out (an
	// admission extended to the hold just made), by buyer: drained before Redis closes.
	afterwards pending.Set[string]
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
	Load *latency.Meter
	// Proof is the proof of work asked before queue joins and first holds
	// (PROOF_OF_WORK), its keys derived from the admission keys.
	Proof *proof.Guard
	// Links signs the orders' access links (in the emails, read by web), with the
	// admission keys under a domain of their own.
	Links *orderlink.Signer
	// Mail sends the buyer's emails, or logs them when SMTP_URL is not set.
	Mail *mail.Mailer
	// Jobs is the job queue (River): booking queues refunds and emails on it in its
	// transactions; its workers and the periodic reconciliation run in Run.
	Jobs *jobs.Queue
	// Verify registers and confirms the addresses of verified buyers, for onsales
	// that ask for them; its links are signed with the admission keys.
	Verify *verification.Service
	// Metrics is the program's own Prometheus registry and counters: web adds the
	// HTTP series to it, and serve exposes it on METRICS_ADDR, never on the public
	// handler.
	Metrics *metrics.Metrics
	// Handler is the program's HTTP handler (web.New over WebDeps), built last.
	Handler http.Handler

	publisher *live.Publisher
	store     *session.Store
}

// New connects to PostgreSQL and Redis and builds the services and the handler, each
// step from the ones before it. It does not migrate: `serve` does that first, under a
// lock, and tests start from a migrated template.
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
	if err = a.connect(ctx, opt); err != nil {
		return a, err
	}
	if err = a.buildBooking(opt.MapMaxAge); err != nil {
		return a, err
	}
	if err = a.buildJobs(opt.JobsTestOnly); err != nil {
		return a, err
	}
	a.buildLive(opt.Queue)
	if err = a.Metrics.Watch(metrics.Sources{
		Pool: a.Pool, Redis: a.Redis, SSEClients: a.Live.Watchers, Queues: a.queues, Log: a.Log,
		BestAvailable: a.Booking.Maps.BestAvailableCounts, Load: a.Load.Level, DBGate: gateWaiting(a.Pool),
		SmallWrites: a.smallWrites,
	}); err != nil {
		return a, err
	}
	a.buildDesk()
	a.Handler, err = web.New(a.WebDeps())
	return a, err
}

// smallWrites are the batched small writes' counts by kind, for the metrics.
func (a *App) smallWrites() map[string]groupcommit.Stats {
	claims, answers := a.Booking.KeyWrites()
	return map[string]groupcommit.Stats{"session": a.store.WriteStats(), "key_claim": claims, "key_answer": answers}
}

// WebDeps are the parts of the program the HTTP handler uses. New builds a.Handler
// from them; a test that needs a second handler over the same program (with a
// registry of its own: the HTTP series are registered once per registry) builds it
// from them too.
func (a *App) WebDeps() web.Deps {
	cfg := a.Config
	return web.Deps{
		Settings: web.Settings{
			CookieSecure: cfg.CookieSecure, WebhookSecret: cfg.WebhookSecret, ProviderName: a.Provider.Name(),
			RedisPrefix: cfg.RedisPrefix, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
			PerAddress: cfg.PerAddress, Streams: cfg.Streams, TrustedProxies: cfg.TrustedProxies,
			ProofOfWork: cfg.ProofOfWork, BaseURL: cfg.BaseURL, Money: cfg.Money,
		},
		Log: a.Log, Metrics: a.Metrics, Ready: a.Ready,
		Buyer: a.Booking.Buyer, Desk: a.Booking.Desk, Maps: a.Booking.Maps, Sessions: a.Sessions, Staff: a.Staff, StaffSessions: a.StaffSessions,
		Catalog: a.Catalog, Door: a.Door, Verify: a.Verify, Queue: a.Queue, Live: a.Live, Load: a.Load,
		Proof: a.Proof, Redis: a.Redis, Links: a.Links, Afterwards: &a.afterwards,
	}
}

// queues reads the waiting room of every event whose room is on, and of every presale
// whose room is on, for /metrics: the events from the database, their rooms from
// Redis. A room that cannot be read is left out, and the error says why.
func (a *App) queues(ctx context.Context) ([]metrics.Queue, error) {
	events, err := a.Booking.Buyer.QueuedEvents(ctx)
	if err != nil {
		return nil, err
	}
	var out []metrics.Queue
	var errs []error
	for _, ev := range events {
		qe := ev.Room() // the room's own view: a paused room admits at rate 0
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
	presales, err := a.Booking.Buyer.QueuedPresales(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("presale rooms: %w", err))
	}
	for _, qe := range presales {
		eventID, _ := booking.RoomEvent(qe.ID)
		n, err := a.Queue.Counts(ctx, qe.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("event %d's presale: %w", eventID, err))
			continue
		}
		out = append(out, metrics.Queue{EventID: eventID, Presale: true, Waiting: n.Waiting, Active: n.Active})
	}
	return out, errors.Join(errs...)
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
	wg.Go(func() { a.Reads.Run(ctx) })
	a.Booking.Worker.RunTidy(ctx, a.Config.TidyInterval)
	wg.Wait()
}

// pruneLoginFailures deletes failed staff logins past the throttle's window every
// interval until ctx ends: the throttle counts only within the window, so this only
// keeps the table small. Every instance may do it; the deletes do not conflict.
func (a *App) pruneLoginFailures(ctx context.Context, interval time.Duration) {
	ticker.Every(ctx, interval, func() {
		if _, err := a.Staff.PruneFailures(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("old failed logins not pruned", "err", err)
		}
	})
}

// Close ends the live streams, waits for the work that follows answers already sent
// (Idempotency-Key answers being saved, admissions being extended; within ctx), stops the job queue if Run left it running, lets the
// payment provider finish its deliveries (within ctx), sends the seat changes still
// queued, and closes the connections, in that order: each step may still need the
// ones after it.
func (a *App) Close(ctx context.Context) error {
	var err error
	if a.Live != nil {
		a.Live.Close()
	}
	// What follows the answers that went out (their keys saved, the admissions
	// extended to their holds) is done before the pools and Redis close.
	err = a.afterwards.Drain(ctx)
	if a.Booking != nil {
		err = errors.Join(err, a.Booking.DrainIdempotent(ctx))
	}
	if a.Jobs != nil {
		err = errors.Join(err, a.Jobs.Stop(ctx))
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
	if a.Replica != nil {
		a.Replica.Close()
	}
	if a.Writes != nil {
		a.Writes.Close()
	}
	if a.Pool != nil {
		a.Pool.Close()
	}
	return err
}
