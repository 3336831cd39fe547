package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/benchkit"
)

// benchDB is the database the program benchmarks own: dropped at the start of every
// run.
const benchDB = "boxoffice_bench"

// serverApp is the application_name of the server's connections, so that their
// backends can be told from pgbench's and the setup's.
const serverApp = "bench-server"

// server is the program under measurement, plus a small pool of the benchmark's own
// for setup and counting.
type server struct {
	*benchkit.Program
	setup *pgxpool.Pool
	trace *tracer // nil unless -queries
	logf  *os.File
}

// programEnv is the program's settings beyond its database and Redis: the pool's
// size, and JSON logs as in production (their formatting is paid for even when they
// are thrown away). The per-buyer limit still runs (its Redis round trip is part of
// a hold's cost) but never refuses: each benchmark session holds far faster than a
// person would. No proof of work before joins and first holds: each arrival would
// solve one, and the benchmark's clients would measure their own hashing.
func programEnv(o options) map[string]string {
	env := map[string]string{"DB_MAX_CONNS": strconv.Itoa(o.pool), "LOG_FORMAT": "json",
		"RATE_LIMIT": "1000000", "RATE_BURST": "1000000", "PROOF_OF_WORK": "off",
		// Every benchmark buyer comes from loopback: the limits per address would
		// take them for one household.
		"ADDRESS_SESSIONS_PER_HOUR": "off", "ADDRESS_JOINS_PER_HOUR": "off",
		"ADDRESS_HOLDS_PER_MINUTE": "off", "ADDRESS_SEATS_HELD": "off"}
	if o.pooler != "" {
		env["DATABASE_POOLER"] = "transaction"
	}
	if o.execMode != "" {
		env["DATABASE_EXEC_MODE"] = o.execMode
	}
	return env
}

// programURL is the bench database's URL as the program uses it: through -pooler
// when set (the pooler forwards any database name to the same server).
func programURL(dbURL string, o options) (string, error) {
	if o.pooler == "" {
		return dbURL, nil
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	u.Host = o.pooler
	return u.String(), nil
}

// startServer builds the program as `boxoffice serve` does, through the composition
// root, with its background work (the tidy-up every 2 s); only the pool's size and
// name, and with -queries the tracers, are the benchmark's.
func startServer(ctx context.Context, dbURL, redisURL string, o options) (s *server, err error) {
	s = &server{}
	var logw io.Writer = io.Discard
	if o.logTo != "" {
		if s.logf, err = os.Create(o.logTo); err != nil {
			return nil, err
		}
		logw = s.logf
	}
	progURL, err := programURL(dbURL, o)
	if err != nil {
		return nil, err
	}
	po := benchkit.ProgramOptions{DatabaseURL: progURL, RedisURL: redisURL, Env: programEnv(o), LogTo: logw, Background: true,
		PoolConfig: func(pc *pgxpool.Config) {
			pc.ConnConfig.RuntimeParams["application_name"] = serverApp
			if o.queries {
				// Beside the program's own (the request log's tally), not instead of it.
				pc.ConnConfig.Tracer = multitracer.New(pc.ConnConfig.Tracer, s.trace)
			}
		}}
	if o.queries {
		s.trace = newTracer()
		po.RedisHook = s.trace
	}
	prog, err := benchkit.StartProgram(ctx, po)
	if err == nil {
		err = s.open(ctx, prog, dbURL)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// open takes prog as the server measured and opens the setup's pool beside it, on
// dbURL: the database itself, even when the program goes through a pooler.
func (s *server) open(ctx context.Context, prog *benchkit.Program, dbURL string) error {
	s.Program = prog
	sc, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	sc.MaxConns = 4
	sc.ConnConfig.RuntimeParams["application_name"] = "bench-setup"
	s.setup, err = pgxpool.NewWithConfig(ctx, sc)
	return err
}

// Close stops the program and closes the pools.
func (s *server) Close() {
	if s.Program != nil {
		s.Program.Close()
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

// newEvent creates an event of seats seats and loads its seat ids.
func (s *server) newEvent(ctx context.Context, slug string, seats int) (event, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	slug = fmt.Sprintf("%s-%d", slug, time.Now().UnixNano())
	id, err := benchkit.CreateEvent(ctx, s.setup, benchkit.Event{Slug: slug, Seats: seats})
	if err != nil {
		return event{}, err
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

// newEvents creates an event for each slug, of the seats at the same place in seats.
func (s *server) newEvents(ctx context.Context, slugs []string, seats ...int) ([]event, error) {
	evs := make([]event, len(slugs))
	for i, slug := range slugs {
		var err error
		if evs[i], err = s.newEvent(ctx, slug, seats[i]); err != nil {
			return nil, err
		}
	}
	return evs, nil
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
	// yet, and such a plan can run for minutes.
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
			VALUES ($1, 'bench-setup', $2, now() + interval '1 hour') RETURNING id`, id, held).Scan(&hold)
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

// sessionTokens copies the session tokens into bench_tokens, numbered from 1, for
// the pgbench scripts that look sessions up; it returns how many there are (at least 1).
func (s *server) sessionTokens(ctx context.Context) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.setup, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS bench_tokens`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE bench_tokens AS
			SELECT row_number() OVER (ORDER BY token)::int AS i, token FROM sessions`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `ALTER TABLE bench_tokens ADD PRIMARY KEY (i)`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM bench_tokens`).Scan(&n)
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

// backends lists the server processes of the bench database's connections named app
// (none if they cannot be read).
func (s *server) backends(app string) func(context.Context) []int {
	return func(ctx context.Context) []int {
		rows, err := s.setup.Query(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1`, app)
		if err != nil {
			return nil
		}
		pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
		out := make([]int, len(pids))
		for i, p := range pids {
			out[i] = int(p)
		}
		return out
	}
}
