package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/booking"
	"boxoffice/internal/config"
	"boxoffice/internal/demo"
	"boxoffice/internal/live"
	"boxoffice/internal/payment"
	"boxoffice/internal/session"
	"boxoffice/migrations"
	"boxoffice/web"
)

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// openPool connects to PostgreSQL with short connect timeouts, so that a database that
// is down turns requests into quick 503s rather than hangs.
func openPool(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	pc.MaxConns = cfg.DBMaxConns
	pc.ConnConfig.ConnectTimeout = 3 * time.Second
	pc.HealthCheckPeriod = 5 * time.Second
	return pgxpool.NewWithConfig(ctx, pc)
}

func serve(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg, os.Stderr)
	if cfg.WebhookSecret == config.DevWebhookSecret {
		log.Warn("PAYMENT_WEBHOOK_SECRET not set: using the development secret")
	}
	if n, err := migrations.Up(ctx, cfg.DatabaseURL); err != nil {
		return err
	} else if n > 0 {
		log.Info("migrated", "applied", n)
	}
	pool, err := openPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	ropt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(ropt)
	defer rdb.Close()

	provider := payment.NewTestProvider(payment.Config{
		Secret: cfg.WebhookSecret, WebhookURL: cfg.WebhookURL, LateDelay: cfg.PaymentLate,
		Default: payment.Delivery(cfg.PaymentDelivery), Logger: log,
	})
	publisher := live.NewPublisher(rdb, cfg.RedisPrefix, log)
	defer publisher.Close()
	svc := booking.New(pool, booking.Config{HoldTTL: cfg.HoldTTL, MaxPerBuyer: cfg.MaxPerBuyer},
		publisher, provider, log)

	store := session.NewStore(pool)
	sm := scs.New()
	sm.Store = store
	sm.Lifetime = 24 * time.Hour
	sm.Cookie.Name = "boxoffice_session"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = cfg.CookieSecure

	handler := web.New(web.Deps{
		Booking: svc, Sessions: sm, WebhookSecret: cfg.WebhookSecret, CookieSecure: cfg.CookieSecure, Log: log,
		Ready: func(ctx context.Context) error {
			return errors.Join(pool.Ping(ctx), rdb.Ping(ctx).Err())
		},
	})

	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	go svc.RunTidy(bg, cfg.TidyInterval)
	go store.Cleanup(bg, 5*time.Minute)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	fmt.Fprintf(stdout, "boxoffice is serving on http://localhost:%s (Ctrl-C stops it)\n", port)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	stopBG()
	err = srv.Shutdown(sctx)
	if cerr := provider.Close(sctx); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

func migrate(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	url := getenv("DATABASE_URL")
	if url == "" {
		return errors.New("DATABASE_URL is not set")
	}
	n, err := migrations.Up(ctx, url)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrations applied: %d\n", n)
	return nil
}

func seed(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	url := getenv("DATABASE_URL")
	if url == "" {
		return errors.New("DATABASE_URL is not set")
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	spec := demo.DemoSpec(time.Now())
	id, created, err := demo.Ensure(ctx, pool, spec)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(stdout, "demo event %q created (id %d, %d seats)\n", spec.Slug, id, spec.Seats())
	} else {
		fmt.Fprintf(stdout, "demo event %q already there (id %d)\n", spec.Slug, id)
	}
	return nil
}
