package benchkit

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/app"
	"boxoffice/internal/config"
)

// Server serves a handler on a loopback port until Close.
type Server struct {
	// URL is http://127.0.0.1:port.
	URL string
	srv *http.Server
}

// Serve serves h on a free loopback port.
func Serve(h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serveOn(ln, h), nil
}

func serveOn(ln net.Listener, h http.Handler) *Server {
	s := &Server{URL: "http://" + ln.Addr().String(),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}}
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on Close
	return s
}

// Close stops serving: it lets the requests going on end for five seconds, then cuts
// what is left (streams).
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close()
	}
}

// ProgramOptions say how StartProgram builds the program.
type ProgramOptions struct {
	DatabaseURL, RedisURL string
	// Env is further settings by environment variable name (DB_MAX_CONNS,
	// RATE_LIMIT, …). REDIS_PREFIX defaults to a prefix of the run's own, whose keys
	// Close deletes; PAYMENT_WEBHOOK_URL to the program's own webhook.
	Env map[string]string
	// Log receives the program's logs; nil: the format LOG_FORMAT names, to LogTo
	// (nil: nowhere).
	Log   *slog.Logger
	LogTo io.Writer
	// PoolConfig adjusts the program's PostgreSQL pool (an application_name, a
	// tracer); RedisHook is added to its Redis client.
	PoolConfig func(*pgxpool.Config)
	RedisHook  redis.Hook
	// Background runs the server's background work too (App.Run: the tidy-up, the
	// waiting room's admitter, the job queue), as `boxoffice serve` does.
	Background bool
}

// Program is the real program, built by the composition root as `boxoffice serve`
// builds it (app.New, which builds the handler too), served on a loopback port.
type Program struct {
	*app.App
	// URL is the program's origin, http://127.0.0.1:port.
	URL    string
	http   *Server
	stopBG context.CancelFunc
	bgDone chan struct{}
	owned  bool // built by StartProgram: Close closes the App too
}

// StartProgram builds the program from o and serves it.
func StartProgram(ctx context.Context, o ProgramOptions) (*Program, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	origin := "http://" + ln.Addr().String()
	env := map[string]string{
		"DATABASE_URL": o.DatabaseURL, "REDIS_URL": o.RedisURL,
		"REDIS_PREFIX":           "bench:" + strings.ToLower(rand.Text()[:8]) + ":",
		"PAYMENT_WEBHOOK_SECRET": "whsec_bench", "PAYMENT_WEBHOOK_URL": origin + "/api/v1/payments/webhook",
	}
	for k, v := range o.Env {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		ln.Close()
		return nil, err
	}
	logTo := o.LogTo
	if logTo == nil {
		logTo = io.Discard
	}
	a, err := app.New(ctx, cfg, app.Options{Log: o.Log, LogTo: logTo, PoolConfig: o.PoolConfig, RedisHook: o.RedisHook})
	if err != nil {
		ln.Close()
		return nil, err
	}
	if err := a.Redis.Ping(ctx).Err(); err != nil {
		ln.Close()
		_ = a.Close(ctx)
		return nil, fmt.Errorf("redis: %w", err)
	}
	p := serveProgram(ctx, a, ln, o.Background)
	p.owned = true
	return p, nil
}

// ServeProgram serves a program built elsewhere (internal/apptest's), with its
// background work if background; Close stops serving it and leaves it open.
func ServeProgram(ctx context.Context, a *app.App, background bool) (*Program, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serveProgram(ctx, a, ln, background), nil
}

func serveProgram(ctx context.Context, a *app.App, ln net.Listener, background bool) *Program {
	p := &Program{App: a, http: serveOn(ln, a.Handler)}
	p.URL = p.http.URL
	if a.Payments != nil {
		a.Payments.SetWebhookURL(p.URL + "/api/v1/payments/webhook")
	}
	if background {
		bg, stop := context.WithCancel(context.WithoutCancel(ctx))
		p.stopBG, p.bgDone = stop, make(chan struct{})
		go func() {
			defer close(p.bgDone)
			a.Run(bg)
		}()
	}
	return p
}

// Close stops serving and the background work; a program StartProgram built is
// closed too, its Redis keys deleted.
func (p *Program) Close() {
	p.http.Close()
	if p.stopBG != nil {
		p.stopBG()
		<-p.bgDone
	}
	if !p.owned {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	DeleteKeys(ctx, p.Redis, p.Config.RedisPrefix)
	_ = p.App.Close(ctx)
}

// Counter reads one of the program's counters from its metrics registry, summed over
// its label sets; 0 when it has none.
func (p *Program) Counter(name string) float64 {
	families, err := p.Metrics.Registry.Gather()
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// DeleteKeys deletes the Redis keys under prefix.
func DeleteKeys(ctx context.Context, rdb redis.UniversalClient, prefix string) {
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		_ = rdb.Del(ctx, keys[:n]...).Err()
		keys = keys[n:]
	}
}
