package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// options are the command-line flags.
type options struct {
	clients  int
	duration time.Duration
	warmup   time.Duration
	only     string
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
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("holdbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.clients, "clients", 32, "concurrent clients (HTTP clients, and pgbench -c)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each measurement")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "load before each measured time, not counted")
	fs.StringVar(&o.only, "only", "all", "what to measure: api, pgbench, best, confirm, arrive or all, or a list such as api,pgbench")
	fs.IntVar(&o.seats, "seats", 50000, "seats of each event (sections of 50 rows of 50)")
	fs.IntVar(&o.pgSeats, "pgbench-seats", 250000, "seats of pgbench's events: enough that its clients' walks (warm-up and measured) never run out at ~15,000 claims/s")
	fs.IntVar(&o.confirmOrders, "confirm-orders", 8000, "pending orders made through the API before the confirm measurement (its clients stop if they pay them all)")
	fs.IntVar(&o.confirmPgOrders, "confirm-pgbench-orders", 100000, "pending orders made in SQL for pgbench's side of the confirm measurement")
	fs.IntVar(&o.held, "held", 20000, "cheapest seats held before the second best-available run")
	fs.IntVar(&o.pool, "pool", 16, "the server's PostgreSQL pool size (MaxConns)")
	fs.IntVar(&o.threads, "pgbench-threads", 2, "pgbench -j")
	fs.StringVar(&o.out, "out", "", "also write the report (markdown) to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write CPU profiles of the measured API windows to files starting with this path")
	fs.BoolVar(&o.queries, "queries", false, "count PostgreSQL and Redis round trips per request (adds a little overhead)")
	fs.StringVar(&o.logTo, "log", "", "where the server's JSON request log goes: a file path; empty formats it and throws it away")
	fs.BoolVar(&o.keep, "keep", false, "leave the database boxoffice_bench behind")
	fs.IntVar(&o.rounds, "rounds", 1, "repeat the measurements this many times, alternating, and report each ratio and the median")
	fs.BoolVar(&o.settle, "settle", true, "after creating the events, wait (up to 3 min) until the planner's statistics know them, as when events are created long before their sale (holdbench never runs ANALYZE); -settle=false measures events the statistics may not know yet")
	fs.BoolVar(&o.decompose, "decompose", false, "also run, with pgbench, the SQL the server sends for an exact hold (with -only api or all)")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "give up after this long altogether")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var errs []error
	if o.clients < 1 || o.clients > 1000 {
		errs = append(errs, errors.New("-clients: want 1 to 1000"))
	}
	if o.duration < time.Second {
		errs = append(errs, errors.New("-duration: want at least 1s (pgbench counts whole seconds)"))
	}
	if o.warmup < 0 {
		errs = append(errs, errors.New("-warmup: want 0 or more"))
	}
	for w := range strings.SplitSeq(o.only, ",") {
		switch w {
		case "all", "api", "pgbench", "best", "confirm", "arrive":
		default:
			errs = append(errs, fmt.Errorf("-only %q: want api, pgbench, best, confirm, arrive or all, or a list such as api,pgbench", o.only))
		}
	}
	if o.seats < 100 || o.pgSeats < 100 {
		errs = append(errs, errors.New("-seats, -pgbench-seats: want at least 100"))
	}
	if o.wants("best") && (o.held < 0 || o.held >= o.seats) {
		errs = append(errs, errors.New("-held: want 0 or more and fewer than -seats"))
	}
	if o.wants("confirm") && (o.confirmOrders < o.clients || o.confirmPgOrders < o.clients) {
		errs = append(errs, errors.New("-confirm-orders, -confirm-pgbench-orders: want at least -clients"))
	}
	if o.rounds < 1 || o.rounds > 20 {
		errs = append(errs, errors.New("-rounds: want 1 to 20"))
	}
	if o.pool < 1 || o.threads < 1 || o.threads > o.clients {
		errs = append(errs, errors.New("-pool and -pgbench-threads: want 1 or more, threads at most -clients"))
	}
	return o, errors.Join(errs...)
}

func (o options) wants(what string) bool {
	for w := range strings.SplitSeq(o.only, ",") {
		if w == "all" || w == what {
			return true
		}
	}
	return false
}

// run is the whole benchmark; everything it starts ends before it returns.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	opts, err := parseOptions(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	adminURL, redisURL := getenv("DATABASE_URL"), getenv("REDIS_URL")
	if adminURL == "" || redisURL == "" {
		return errors.New("DATABASE_URL and REDIS_URL must be set: run it through `make bench`")
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()

	rep := &report{
		Started: time.Now(), Command: strings.TrimSpace("holdbench " + strings.Join(args, " ")),
		CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: loadAverage(), Opts: opts,
	}
	unlock, err := lockRun(ctx, adminURL)
	if err != nil {
		return err
	}
	defer unlock()
	benchURL, err := createBenchDB(ctx, adminURL)
	if err != nil {
		return err
	}
	if !opts.keep {
		defer func() {
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer dcancel()
			if err := dropBenchDB(dctx, adminURL); err != nil {
				fmt.Fprintln(os.Stderr, "holdbench: drop database:", err)
			}
		}()
	}
	srv, err := startServer(ctx, benchURL, redisURL, opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	rep.PGVersion = srv.pgVersion(ctx)
	rep.PgbenchVersion = pgbenchVersion(ctx)
	rep.Revision = gitRevision(ctx)
	fmt.Fprintf(os.Stderr, "holdbench: serving on %s; load average %s\n", srv.URL, rep.LoadBefore)

	if err := measure(ctx, srv, opts, rep); err != nil {
		return err
	}
	rep.LoadAfter = loadAverage()
	rep.Finished = time.Now()
	text := rep.markdown()
	if _, err := io.WriteString(stdout, text); err != nil {
		return err
	}
	if opts.out != "" {
		return os.WriteFile(opts.out, []byte(text), 0o644)
	}
	return nil
}

// gitRevision names the code measured: the commit, and whether tracked files differ
// from it (others edit the same working tree).
func gitRevision(ctx context.Context) string {
	head, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(head))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		if n := strings.Count(string(st), "\n"); n > 0 {
			rev += fmt.Sprintf(" + uncommitted changes to %d tracked files", n)
		}
	}
	return rev
}

func step(msg string) {
	fmt.Fprintf(os.Stderr, "holdbench: %s (load average %s)\n", msg, loadAverage())
}

// loadAverage is the 1, 5 and 15 minute load averages, or "n/a".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}
