// Package apptest builds the real program for a test: a fresh database with the demo
// event, a Redis key prefix of its own, the settings a test runs with, and app.New,
// the production composition root, handler and all (Program.Handler, Program.Serve).
// web's whole-program tests use it from package web_test.
package apptest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/app"
	"boxoffice/internal/config"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
	"boxoffice/internal/mail/mailtest"
	"boxoffice/internal/waitroom"
)

// WebhookSecret signs the test payment provider's webhooks.
const WebhookSecret = "whsec_test_secret"

// Options change what New builds; the zero value is the demo event with test settings.
type Options struct {
	// Env is settings on top of the test defaults, by environment variable name.
	Env map[string]string
	// DBURL rewrites the database URL the program uses (a proxy in front, say); the
	// demo event is created before, through the direct URL.
	DBURL func(t testing.TB, url string) string
	// PoolConfig adjusts the program's pool, after the test's short connect timeout.
	PoolConfig func(*pgxpool.Config)
	// Log receives the program's logs; nil discards them.
	Log *slog.Logger
	// Queue tunes the waiting room (a fast admitter tick). The admitter runs only if
	// the test starts it (Program.RunQueue).
	Queue waitroom.Options
	// Beside builds a second instance of that program: the same database, demo event,
	// Redis and key prefix, as a second app server behind a load balancer would run.
	Beside *Program
	// RedisURL names the Redis the program uses (a private Redis Cluster, say) under the
	// prefix "test:", instead of REDIS_URL's under a prefix of the test's own.
	RedisURL string
	// Mail sends the program's email to the test mail catcher (the mailpit that make
	// test starts), where Program.Mail reads it; otherwise email is logged. Either
	// way, email goes out only while the test runs the job queue (Program.RunJobs).
	Mail bool
}

// Program is the program under test; its Handler is the one `boxoffice serve` serves.
type Program struct {
	*app.App
	// EventID is the demo event: ~2,000 seats and a GA tier.
	EventID int64
	// Prefix is the Redis key prefix of this program alone.
	Prefix string
	// Mail is the mail catcher the program sends to (Options.Mail), nil otherwise.
	// Send each test's orders to an address of its own (mailtest.Address).
	Mail *mailtest.Catcher
}

// New builds the program on a fresh database and closes it when the test ends.
func New(t testing.TB, o Options) *Program {
	t.Helper()
	ctx := context.Background()
	url, eventID, redisURL, prefix := where(t, o)
	env := map[string]string{
		"DATABASE_URL": url, "REDIS_URL": redisURL,
		"REDIS_PREFIX": prefix, "PAYMENT_WEBHOOK_SECRET": WebhookSecret, "PAYMENT_LATE_DELAY": "300ms",
		// A test's steps run beside others' on a loaded machine, slow enough at
		// times to look like a pressing sale: its confirmations wait a second at
		// most, not production's minutes (jobs' own tests cover the wait).
		"EMAIL_WAIT": "1s",
		// The proof of work before joins and first holds is off: the tests that
		// exercise it turn it on (web/proof_test.go); the rest would each solve it.
		"PROOF_OF_WORK": "off",
		// Every test's buyers come from one address, loopback: the limits per address
		// are off unless a test turns them on (an empty value: the default).
		"ADDRESS_SESSIONS_PER_HOUR": "off", "ADDRESS_JOINS_PER_HOUR": "off",
		"ADDRESS_HOLDS_PER_MINUTE": "off", "ADDRESS_SEATS_HELD": "off",
	}
	var catcher *mailtest.Catcher
	if o.Mail {
		catcher = mailtest.New(t)
		env["SMTP_URL"] = catcher.SMTPURL
	}
	for k, v := range o.Env {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// Tests run beside others on a loaded machine, where a Redis call now and then
	// takes longer than the waiting room's production limit of 1 s (at 300 ms a board
	// read can answer 503); a test about the limit sets its own.
	if o.Queue.Timeout == 0 {
		o.Queue.Timeout = 2 * time.Second
	}
	a, err := app.New(ctx, cfg, app.Options{Log: log, Queue: o.Queue, JobsTestOnly: true, PoolConfig: func(pc *pgxpool.Config) {
		pc.ConnConfig.ConnectTimeout = 2 * time.Second
		if o.PoolConfig != nil {
			o.PoolConfig(pc)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return &Program{App: a, EventID: eventID, Prefix: prefix, Mail: catcher}
}

// where makes or finds the database (with the demo event), the Redis and the key
// prefix the program is to use.
func where(t testing.TB, o Options) (url string, eventID int64, redisURL, prefix string) {
	t.Helper()
	if b := o.Beside; b != nil {
		return b.Config.DatabaseURL, b.EventID, b.Config.RedisURL, b.Prefix
	}
	ctx := context.Background()
	url = dbtest.URL(t)
	setup, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	eventID, err = demo.Create(ctx, setup, demo.DemoSpec(time.Now()))
	setup.Close()
	if err != nil {
		t.Fatal(err)
	}
	if o.DBURL != nil {
		url = o.DBURL(t, url)
	}
	if o.RedisURL != "" {
		return url, eventID, o.RedisURL, "test:"
	}
	rdb, prefix := dbtest.Redis(t)
	return url, eventID, "redis://" + rdb.Options().Addr + "/" + strconv.Itoa(rdb.Options().DB), prefix
}

// Serve serves the program's handler on a loopback port until the test ends (and
// before the program closes), the test payment provider's webhooks sent to it, and
// returns its URL.
func (p *Program) Serve(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(p.Handler)
	t.Cleanup(srv.Close) // cleanups run last-in first-out: before the program closes
	if p.Payments != nil {
		p.Payments.SetWebhookURL(srv.URL + "/api/v1/payments/webhook")
	}
	return srv.URL
}

// RunJobs works the job queue (refunds, emails, reconciliation), as App.Run does in a
// server, until the test ends (and before the program closes). Without it, jobs are
// queued and stay queued.
func (p *Program) RunJobs(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Jobs.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// WaitJobs waits until every refund and email queued so far has been worked (done,
// cancelled or given up), and fails the test, naming the job still busy and its
// errors, if that takes over 30 seconds. The test must be running the queue.
func (p *Program) WaitJobs(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Jobs.WaitIdle(ctx); err != nil {
		t.Fatalf("apptest: %v", err)
	}
}

// RunQueue runs the waiting room's admitter, as App.Run does in a server, until the
// test ends (and before the program closes).
func (p *Program) RunQueue(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Queue.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}
