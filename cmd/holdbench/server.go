package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/app"
	"boxoffice/internal/config"
	"boxoffice/internal/demo"
	"boxoffice/migrations"
	"boxoffice/web"
)

// benchDB is the database the benchmark owns: dropped at the start of every run.
const benchDB = "boxoffice_bench"

// serverApp is the application_name of the server's connections, so that their
// backends can be told from pgbench's and the setup's.
const serverApp = "holdbench-server"

// runLockKey is the advisory lock a holdbench run holds on the admin database from
// start to end: two runs at once would drop each other's database and share two cores.
const runLockKey int64 = 0x686f6c64_62656e63 // "holdbenc"

// lockRun waits until no other holdbench run is going on against this PostgreSQL, and
// returns the function that lets the next one go.
func lockRun(ctx context.Context, adminURL string) (release func(), err error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("admin connection: %w", err)
	}
	release = func() { conn.Close(context.WithoutCancel(ctx)) }
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", runLockKey).Scan(&got); err != nil {
		release()
		return nil, err
	}
	if !got {
		fmt.Fprintln(os.Stderr, "holdbench: another holdbench run is going on; waiting for it to end")
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", runLockKey); err != nil {
			release()
			return nil, fmt.Errorf("waiting for the other run: %w", err)
		}
	}
	return release, nil
}

// createBenchDB drops any boxoffice_bench left over, creates it afresh next to the
// admin database, migrates it and returns its URL. Commits stay durable, as in
// production and in the baseline.
func createBenchDB(ctx context.Context, adminURL string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("DATABASE_URL: want a postgres:// URL")
	}
	if err := dropBenchDB(ctx, adminURL); err != nil {
		return "", err
	}
	if err := adminExec(ctx, adminURL, "CREATE DATABASE "+benchDB); err != nil {
		return "", err
	}
	u.Path = "/" + benchDB
	if _, err := migrations.Up(ctx, u.String()); err != nil {
		return "", err
	}
	return u.String(), nil
}

func dropBenchDB(ctx context.Context, adminURL string) error {
	return adminExec(ctx, adminURL, "DROP DATABASE IF EXISTS "+benchDB+" WITH (FORCE)")
}

func adminExec(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("admin connection: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// server is boxoffice wired as cmd/boxoffice serve wires it, listening on loopback,
// plus a small pool of the benchmark's own for setup and counting.
type server struct {
	URL    string
	dbURL  string
	pool   *pgxpool.Pool // the server's
	setup  *pgxpool.Pool // the benchmark's
	rdb    *redis.Client
	prefix string
	trace  *tracer // nil unless -queries
	logf   *os.File
	http   *http.Server
	stopBG context.CancelFunc
	app    *app.App
}

func startServer(ctx context.Context, dbURL, redisURL string, opts options) (s *server, err error) {
	s = &server{dbURL: dbURL, prefix: "holdbench:" + rand.Text()[:8] + ":"}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	var logw io.Writer = io.Discard
	if opts.logTo != "" {
		if s.logf, err = os.Create(opts.logTo); err != nil {
			return s, err
		}
		logw = s.logf
	}
	// JSON, as in production (LOG_FORMAT below): the formatting is paid for even when
	// it is thrown away.

	sc, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return s, err
	}
	sc.MaxConns = 4
	sc.ConnConfig.RuntimeParams["application_name"] = "holdbench-setup"
	if s.setup, err = pgxpool.NewWithConfig(ctx, sc); err != nil {
		return s, err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return s, err
	}
	s.URL = "http://" + ln.Addr().String()
	// The program as cmd/boxoffice serve builds it, through the same composition root;
	// only the pool's size and name, and the tracers, are the benchmark's.
	cfg, err := config.Load(func(k string) string {
		return map[string]string{
			"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "REDIS_PREFIX": s.prefix,
			"DB_MAX_CONNS": strconv.Itoa(opts.pool), "PAYMENT_WEBHOOK_SECRET": "whsec_holdbench",
			"PAYMENT_WEBHOOK_URL": s.URL + "/api/v1/payments/webhook", "LOG_FORMAT": "json",
			// The per-buyer limit still runs (its Redis round trip is part of a hold's
			// cost) but never refuses: each benchmark session holds far faster than a
			// person would.
			"RATE_LIMIT": "1000000", "RATE_BURST": "1000000",
			// No proof of work before joins and first holds: each arrival would solve
			// one, and the benchmark's clients would measure their own hashing.
			"PROOF_OF_WORK": "off",
		}[k]
	})
	if err != nil {
		return s, err
	}
	aopt := app.Options{
		LogTo: logw,
		PoolConfig: func(pc *pgxpool.Config) {
			pc.ConnConfig.RuntimeParams["application_name"] = serverApp
			if opts.queries {
				// Beside the program's own (the request log's tally), not instead of it.
				pc.ConnConfig.Tracer = multitracer.New(pc.ConnConfig.Tracer, s.trace)
			}
		},
	}
	if opts.queries {
		s.trace = newTracer()
		aopt.RedisHook = s.trace
	}
	if s.app, err = app.New(ctx, cfg, aopt); err != nil {
		return s, err
	}
	s.pool, s.rdb = s.app.Pool, s.app.Redis
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return s, fmt.Errorf("redis: %w", err)
	}
	handler := web.New(s.app)
	// The background work of a production server runs too: the tidy-up every 2 s.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	s.stopBG = stopBG
	go s.app.Run(bg)

	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go s.http.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on Close
	return s, nil
}

// Close stops the server and its background work, deletes its Redis keys and closes
// the pools.
func (s *server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.http != nil {
		_ = s.http.Shutdown(ctx)
	}
	if s.stopBG != nil {
		s.stopBG()
	}
	if s.rdb != nil {
		var cursor uint64
		for {
			keys, next, err := s.rdb.Scan(ctx, cursor, s.prefix+"*", 1000).Result()
			if err != nil {
				break
			}
			if len(keys) > 0 {
				s.rdb.Del(ctx, keys...)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	if s.app != nil {
		_ = s.app.Close(ctx)
	}
	if s.setup != nil {
		s.setup.Close()
	}
	if s.logf != nil {
		_ = s.logf.Close()
	}
}

func (s *server) pgVersion(ctx context.Context) string {
	var v string
	if err := s.setup.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "unknown"
	}
	return v
}

// event is a fresh event of the benchmark: its id and seat ids.
type event struct {
	ID      int64
	SeatIDs []int64
	MinID   int64
	MaxID   int64
	Held    int // seats held by the setup before the measurement
	// next is the exact holds' walk through SeatIDs (exactKind), shared by the clients.
	next *atomic.Int64
}

// newEvent creates an event of seats seats with demo.BigSpec and loads its seat ids.
func (s *server) newEvent(ctx context.Context, slug string, seats int) (event, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	slug = fmt.Sprintf("%s-%d", slug, time.Now().UnixNano())
	id, err := demo.Create(ctx, s.setup, demo.BigSpec(slug, seats, time.Now()))
	if err != nil {
		return event{}, fmt.Errorf("create event: %w", err)
	}
	ev := event{ID: id, next: new(atomic.Int64)}
	rows, err := s.setup.Query(ctx, "SELECT id FROM seats WHERE event_id = $1 ORDER BY id", id)
	if err != nil {
		return ev, err
	}
	if ev.SeatIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return ev, err
	}
	if len(ev.SeatIDs) == 0 {
		return ev, errors.New("the event has no seats")
	}
	ev.MinID, ev.MaxID = ev.SeatIDs[0], ev.SeatIDs[len(ev.SeatIDs)-1]
	return ev, nil
}

// holdCheapest holds the event's held cheapest seats (by price, rank, id) for one setup
// buyer for an hour, in one UPDATE. Nothing is vacuumed or analyzed afterwards:
// autovacuum runs as it would.
func (s *server) holdCheapest(ctx context.Context, ev *event, held int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	id := ev.ID
	ev.Held = held
	// The cheapest seats are picked first and claimed by id: a statement joining a fresh
	// event's seats to a subquery gets planned on statistics that do not know the event
	// yet, and one such plan ran for minutes.
	rows, err := s.setup.Query(ctx, `SELECT id FROM seats
		WHERE event_id = $1 AND held_by IS NULL AND sold_at IS NULL
		ORDER BY price_cents, rank, id LIMIT $2`, id, held)
	if err != nil {
		return err
	}
	cheapest, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.setup, func(tx pgx.Tx) error {
		var hold int64
		err := tx.QueryRow(ctx, `INSERT INTO holds (event_id, buyer, seat_count, expires_at)
			VALUES ($1, 'holdbench-setup', $2, now() + interval '1 hour') RETURNING id`, id, held).Scan(&hold)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE seats SET held_by = $2, hold_expires_at = now() + interval '1 hour'
			WHERE event_id = $1 AND id = ANY($3::bigint[])`, id, hold, cheapest)
		if err == nil && tag.RowsAffected() != int64(held) {
			err = fmt.Errorf("held %d seats, want %d", tag.RowsAffected(), held)
		}
		return err
	})
	return err
}

// sessionTokens copies the session tokens into holdbench_tokens, numbered from 1, for
// the pgbench scripts that look sessions up; it returns how many there are (at least 1).
func (s *server) sessionTokens(ctx context.Context) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.setup, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS holdbench_tokens`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE holdbench_tokens AS
			SELECT row_number() OVER (ORDER BY token)::int AS i, token FROM sessions`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `ALTER TABLE holdbench_tokens ADD PRIMARY KEY (i)`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM holdbench_tokens`).Scan(&n)
	})
	return max(n, 1), err
}

// heldSeats counts the event's seats held now, the setup's included.
func (s *server) heldSeats(ctx context.Context, eventID int64) (int, error) {
	var n int
	err := s.setup.QueryRow(ctx, `SELECT count(*) FROM seats
		WHERE event_id = $1 AND held_by IS NOT NULL AND hold_expires_at > now()`, eventID).Scan(&n)
	return n, err
}

// backendPIDs lists the server processes of the bench database's connections named
// app.
func (s *server) backendPIDs(ctx context.Context, app string) ([]int, error) {
	rows, err := s.setup.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, app)
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	out := make([]int, len(pids))
	for i, p := range pids {
		out[i] = int(p)
	}
	return out, err
}

// trimVersion keeps the first line of a tool's --version answer.
func trimVersion(b []byte) string {
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}
