package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
)

// options are the flags of the benchmarks that measure the program (holds, confirm,
// best, arrive); each adds its own to the common ones.
type options struct {
	clients  int
	duration time.Duration
	warmup   time.Duration
	seats    int
	pgSeats  int
	// confirmOrders and confirmPgOrders are the pending orders made ready for the
	// confirm measurement's API and pgbench sides.
	confirmOrders   int
	confirmPgOrders int
	held            int
	pool            int
	threads         int
	out             string
	cpuProfile      string
	queries         bool
	logTo           string
	keep            bool
	timeout         time.Duration
	rounds          int
	settle          bool
	decompose       bool
	// pooler and execMode put a transaction pooler between the program and the
	// bench database (server.go: programURL).
	pooler   string
	execMode string
	// client is the arrivals' HTTP client (arriveclient.go).
	client string
}

// benchmark is one of the benchmarks that measure the program on the bench database.
type benchmark interface {
	// flags adds the benchmark's own flags.
	flags(fs *flag.FlagSet, o *options)
	// check says what is wrong with the options for it.
	check(o options) []error
	// describe is the report's line on what the benchmark measures with o.
	describe(o options) string
	// sessions is how many buyer sessions a round takes.
	sessions(o options) int
	// prepare makes what one round measures (its events), before any round runs, and
	// returns the events the planner's statistics must know and the round itself.
	prepare(ctx context.Context, srv *server, o options) ([]event, roundFunc, error)
}

// roundFunc measures one round, adding its rows to the report; tag marks them when
// there are several rounds (" (2)").
type roundFunc func(ctx context.Context, r *runner, tag string) error

// runner is what every round of a run shares.
type runner struct {
	srv      *server
	cl       *apiClient
	sessions []buyer
	o        options
	rep      *report
}

// programCommand is the subcommand that runs b.
func programCommand(name, summary string, b benchmark) benchkit.Command {
	return benchkit.Command{Name: name, Summary: summary, Run: func(ctx context.Context, args []string, env benchkit.Env) error {
		o, err := parseOptions(name, b, args, env)
		if err != nil {
			return err
		}
		return runBenchmark(ctx, name, b, o, args, env)
	}}
}

func parseOptions(name string, b benchmark, args []string, env benchkit.Env) (options, error) {
	var o options
	fs := benchkit.FlagSet("bench", name, env)
	fs.IntVar(&o.clients, "clients", 32, "concurrent clients (HTTP clients, and pgbench -c)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each measurement")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "load before each measured time, not counted")
	fs.IntVar(&o.pool, "pool", 16, "the server's PostgreSQL pool size (MaxConns)")
	fs.StringVar(&o.out, "out", "", "also write the report (markdown) to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write CPU profiles of the measured API windows to files starting with this path")
	fs.BoolVar(&o.queries, "queries", false, "count PostgreSQL and Redis round trips per request (adds a little overhead)")
	fs.StringVar(&o.logTo, "log", "", "where the server's JSON request log goes: a file path; empty formats it and throws it away")
	fs.BoolVar(&o.keep, "keep", false, "leave the database boxoffice_bench behind")
	fs.IntVar(&o.rounds, "rounds", 1, "repeat the measurement this many times and report each ratio and the median")
	fs.BoolVar(&o.settle, "settle", true, "after creating the events, wait (up to 3 min) until the planner's statistics know them, as when events are created long before their sale (the benchmark never runs ANALYZE); -settle=false measures events the statistics may not know yet")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "give up after this long altogether")
	fs.StringVar(&o.pooler, "pooler", "", "host:port of a PgBouncer in transaction mode that forwards any database to DATABASE_URL's server: the program connects through it (DATABASE_POOLER=transaction), the setup and pgbench directly")
	fs.StringVar(&o.execMode, "exec-mode", "", "the program's DATABASE_EXEC_MODE (pgx's query exec mode); empty: the program's default")
	b.flags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	errs := b.check(o)
	if o.clients < 1 || o.clients > 1000 {
		errs = append(errs, errors.New("-clients: want 1 to 1000"))
	}
	if o.duration < time.Second {
		errs = append(errs, errors.New("-duration: want at least 1s (pgbench counts whole seconds)"))
	}
	if o.warmup < 0 {
		errs = append(errs, errors.New("-warmup: want 0 or more"))
	}
	if o.rounds < 1 || o.rounds > 20 {
		errs = append(errs, errors.New("-rounds: want 1 to 20"))
	}
	if o.pool < 1 {
		errs = append(errs, errors.New("-pool: want 1 or more"))
	}
	return o, errors.Join(errs...)
}

// pgbenchFlags are the flags of the benchmarks whose ceiling pgbench measures.
func pgbenchFlags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.threads, "pgbench-threads", 2, "pgbench -j")
}

func checkPgbench(o options) []error {
	if o.threads < 1 || o.threads > o.clients {
		return []error{errors.New("-pgbench-threads: want 1 or more, at most -clients")}
	}
	return nil
}

// runBenchmark is the whole run; everything it starts ends before it returns.
func runBenchmark(ctx context.Context, name string, b benchmark, o options, args []string, env benchkit.Env) error {
	adminURL, redisURL := env.Getenv("DATABASE_URL"), env.Getenv("REDIS_URL")
	if adminURL == "" || redisURL == "" {
		return errors.New("DATABASE_URL and REDIS_URL must be set: run it through `make bench`")
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	rep := &report{
		Started: time.Now(), Title: "bench " + name, Command: strings.TrimSpace("bench " + name + " " + strings.Join(args, " ")),
		CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: benchkit.LoadAverage(), Opts: o,
		notes: []string{b.describe(o)},
	}
	db, err := benchkit.CreateDB(ctx, adminURL, benchDB, os.Stderr)
	if err != nil {
		return err
	}
	defer func() {
		if err := db.Close(o.keep); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	}()
	srv, err := startServer(ctx, db.URL, redisURL, o)
	if err != nil {
		return err
	}
	defer srv.Close()
	rep.PGVersion = srv.pgVersion(ctx)
	rep.PgbenchVersion = benchkit.ToolVersion(ctx, "pgbench")
	rep.Revision = benchkit.Revision(ctx)
	fmt.Fprintf(os.Stderr, "bench: serving on %s; load average %s\n", srv.URL, rep.LoadBefore)

	if err := measure(ctx, srv, b, o, rep); err != nil {
		return err
	}
	rep.LoadAfter = benchkit.LoadAverage()
	rep.Finished = time.Now()
	text := rep.markdown()
	if _, err := io.WriteString(env.Stdout, text); err != nil {
		return err
	}
	if o.out != "" {
		return os.WriteFile(o.out, []byte(text), 0o644)
	}
	return nil
}

// measure prepares every round of b, creates the sessions they take and, with
// -settle, waits until the planner's statistics know every event, as they do when
// events are created long before their sale; then it runs the rounds.
func measure(ctx context.Context, srv *server, b benchmark, o options, rep *report) error {
	cl := newAPIClient(srv.URL, o.clients)
	defer cl.Close()
	var settle []event
	rounds := make([]roundFunc, o.rounds)
	for i := range rounds {
		evs, run, err := b.prepare(ctx, srv, o)
		if err != nil {
			return err
		}
		settle, rounds[i] = append(settle, evs...), run
	}
	step(fmt.Sprintf("created the events of %d round(s)", o.rounds))
	r := &runner{srv: srv, cl: cl, o: o, rep: rep}
	if need := b.sessions(o); need > 0 {
		step(fmt.Sprintf("creating %d sessions through GET /api/v1/session", need))
		t := time.Now()
		var err error
		if r.sessions, err = cl.createSessions(ctx, need, o.clients); err != nil {
			return err
		}
		rep.SessionSetup, rep.Sessions = time.Since(t), need
	}
	if o.settle && len(settle) > 0 {
		step("waiting for the planner's statistics to know every event")
		t := time.Now()
		known, err := srv.waitPlannerKnows(ctx, settle, 3*time.Minute)
		if err != nil {
			return err
		}
		rep.Settled, rep.SettleFailed = time.Since(t), !known
	}
	for i, run := range rounds {
		tag := ""
		if o.rounds > 1 {
			tag = fmt.Sprintf(" (%d)", i+1)
			step(fmt.Sprintf("round %d of %d", i+1, o.rounds))
		}
		if err := run(ctx, r, tag); err != nil {
			return err
		}
	}
	return nil
}

// profileName is the suffix of a measured window's CPU profile: the measurement and
// the round.
func profileName(what, tag string) string {
	return "-" + what + strings.NewReplacer(" (", "-round", ")", "").Replace(tag)
}

func step(msg string) {
	fmt.Fprintf(os.Stderr, "bench: %s (load average %s)\n", msg, benchkit.LoadAverage())
}
