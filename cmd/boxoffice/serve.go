package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/app"
	"boxoffice/internal/config"
	"boxoffice/internal/demo"
	"boxoffice/migrations"
)

// serve runs the server until ctx ends: it migrates, builds the program through the
// composition root, starts its background work, and serves the handler (and the
// metrics on a listener of their own) until shutdown.
func serve(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, log, err := prepare(ctx, getenv)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, cfg, app.Options{Log: log})
	if err != nil {
		return err
	}
	stopBG, bgDone := background(ctx, a)
	ln, msrv, err := listen(cfg, a)
	if err != nil {
		stopBG()
		<-bgDone
		return errors.Join(err, a.Close(context.WithoutCancel(ctx)))
	}
	srv := httpServer(cfg.HTTP, a.Handler)
	// Shutdown waits for connections to go idle, and a live stream never does: end
	// the streams as shutdown begins.
	srv.RegisterOnShutdown(a.Live.Close)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	announce(stdout, cfg, ln.Addr(), msrv)

	select {
	case err = <-served: // the listener failed
	case <-ctx.Done():
		log.Info("shutting down")
	}
	// One deadline for all of it: the background work (the job queue finishing its
	// jobs, the admitter, the tidy-up) stops while the connections drain, not after,
	// and what Close still has to do (webhook deliveries, queued seat changes) gets
	// what is left of SHUTDOWN_TIMEOUT.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	stopBG()
	err = errors.Join(err, srv.Shutdown(sctx))
	if msrv != nil {
		err = errors.Join(err, msrv.Shutdown(sctx))
	}
	<-bgDone
	return errors.Join(err, a.Close(sctx))
}

// prepare loads the configuration, warns of development secrets and migrates the
// database.
func prepare(ctx context.Context, getenv func(string) string) (config.Config, *slog.Logger, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return cfg, nil, err
	}
	log := app.NewLogger(cfg, nil)
	for _, name := range cfg.DevSecrets() { // production refuses them (config.Load)
		log.Warn(name + " not set: using the development secret, which is public")
	}
	// The migration lock is a session lock, which a transaction pooler cannot keep:
	// through one, serve migrates only where DATABASE_MIGRATE_URL names the primary.
	if cfg.DB.MigrateURL == "" {
		log.Info("not migrating: DATABASE_URL goes through a transaction pooler; run boxoffice migrate against the primary first, or set DATABASE_MIGRATE_URL")
		return cfg, log, nil
	}
	if n, err := migrations.Up(ctx, cfg.DB.MigrateURL); err != nil {
		return cfg, nil, err
	} else if n > 0 {
		log.Info("migrated", "applied", n)
	}
	return cfg, log, nil
}

// background runs the program's background work (App.Run) until stop; done closes
// once it has stopped.
func background(ctx context.Context, a *app.App) (stop context.CancelFunc, done <-chan struct{}) {
	bg, stop := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		a.Run(bg)
	}()
	return stop, finished
}

// listen opens the public listener on ADDR and, with METRICS_ADDR, serves the metrics
// on a listener of their own, never a route of the public handler: they tell anyone
// who can read them how the sale goes.
func listen(cfg config.Config, a *app.App) (net.Listener, *http.Server, error) {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, nil, err
	}
	if cfg.MetricsAddr == "" {
		return ln, nil, nil
	}
	mln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	msrv := httpServer(cfg.HTTP, a.Metrics.ServeMux())
	msrv.Addr = mln.Addr().String()
	go func() {
		if err := msrv.Serve(mln); !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("the metrics listener stopped", "err", err)
		}
	}()
	return ln, msrv, nil
}

// announce tells the operator where the server serves, where its email goes and where
// its metrics are.
func announce(stdout io.Writer, cfg config.Config, addr net.Addr, msrv *http.Server) {
	_, port, _ := net.SplitHostPort(addr.String())
	fmt.Fprintf(stdout, "boxoffice is serving on http://localhost:%s (Ctrl-C stops it)\n", port)
	if cfg.SMTP.Enabled() {
		fmt.Fprintf(stdout, "email goes through %s, from %s; its links start %s\n", cfg.SMTP, cfg.MailFrom, cfg.BaseURL)
	} else {
		fmt.Fprintln(stdout, "email is written to the log, not sent: set SMTP_URL to send it")
	}
	if msrv != nil {
		fmt.Fprintf(stdout, "metrics: http://%s/metrics (not public)\n", msrv.Addr)
	}
}

// httpServer is a listener's server with the limits that cut slow clients off: a
// request's headers, the whole request and an idle connection each get their time,
// and headers their size. No write timeout: live streams and exports write for as
// long as they need, and a request's work is bounded by its own deadline (web).
func httpServer(l config.HTTPLimits, h http.Handler) *http.Server {
	return &http.Server{
		Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes,
	}
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

// seedPool is the pool the seeding commands write through, on DATABASE_URL.
func seedPool(ctx context.Context, getenv func(string) string) (*pgxpool.Pool, error) {
	url := getenv("DATABASE_URL")
	if url == "" {
		return nil, errors.New("DATABASE_URL is not set")
	}
	return pgxpool.New(ctx, url)
}

func seed(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	pool, err := seedPool(ctx, getenv)
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
	if err := seedOnsale(ctx, pool, stdout, time.Now()); err != nil {
		return err
	}
	return seedAdmin(ctx, pool, getenv, stdout)
}

// seedOnsale loads the waiting room's demo event, its onsale a few minutes from now.
// At a later start its onsale has passed: it is moved to a few minutes from then,
// unless someone holds or bought something of it, which is never taken away (the
// event then stays on sale, its room still on, and the seed says so). Moving it
// before its own onsale is left alone: a second `make run` within the five minutes
// keeps the countdown running.
func seedOnsale(ctx context.Context, pool *pgxpool.Pool, stdout io.Writer, now time.Time) error {
	spec := demo.OnsaleSpec(now)
	id, created, err := demo.Ensure(ctx, pool, spec)
	if err != nil {
		return err
	}
	onsale, moved := spec.OnsaleAt, false
	if !created {
		if onsale, moved, err = demo.Reschedule(ctx, pool, id, spec.OnsaleAt); err != nil {
			return err
		}
	}
	room := fmt.Sprintf("waiting room on: %d shoppers at a time, %g admitted a second", spec.Queue.Slots, spec.Queue.Rate)
	when := onsale.UTC().Format("15:04:05 MST")
	switch {
	case created:
		fmt.Fprintf(stdout, "onsale demo event %q created (id %d, %d seats; %s); on sale at %s, in %s\n",
			spec.Slug, id, spec.Seats(), room, when, onsale.Sub(now).Round(time.Second))
	case moved:
		fmt.Fprintf(stdout, "onsale demo event %q (id %d) goes on sale again at %s, in %s (%s)\n",
			spec.Slug, id, when, onsale.Sub(now).Round(time.Second), room)
	case onsale.After(now):
		fmt.Fprintf(stdout, "onsale demo event %q (id %d) goes on sale at %s, in %s\n",
			spec.Slug, id, when, onsale.Sub(now).Round(time.Second))
	default:
		fmt.Fprintf(stdout, "onsale demo event %q (id %d) on sale since %s, left as it is: someone holds or bought tickets of it, or its sale is over\n",
			spec.Slug, id, onsale.UTC().Format("2 Jan 15:04 MST"))
	}
	return nil
}
