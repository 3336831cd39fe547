package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/benchkit"
)

// sseDB is the database the SSE benchmark owns: dropped at the start of every run.
const sseDB = "boxoffice_ssebench"

// sseSlug names the benchmark's event.
const sseSlug = "ssebench"

type sseOptions struct {
	clients    int
	rate       int
	warmup     time.Duration
	duration   time.Duration
	seats      int
	sides      string
	cpuProfile string
}

// sseEvent is the event whose seats change, and the range of its seat ids.
type sseEvent struct {
	id, lo, hi int64
}

// runSSE is `bench sse`: it measures the live seat stream's fan-out: thousands of SSE
// clients on loopback while an event's seats change a hundred times a second,
// boxoffice's stream next to a minimal net/http hub measured in the same run.
//
//	boxoffice  the program as its composition root builds it, serving GET
//	           /events/{slug}/stream: its live hub (one Redis subscription, 100 ms
//	           batches) feeding the seat map cache, the seats sent as the seat page's
//	           out-of-band HTML
//	minimal    a bare net/http server with its own go-redis subscription, a log of
//	           changes and per client a 100 ms tick writing the changed seat ids
//
// Changes go out through the live publisher on a real event of a fresh database
// (boxoffice_ssebench, next to DATABASE_URL's). The clients run in a child process
// (this same program), so that the server's memory per stream is measured alone: the
// growth of its Go heap and stacks, and of its RSS, from one client to all of them,
// divided by their number. Latency is from the moment a version reached the clients
// process through its own Redis subscription to the moment a client read the event
// carrying it. Each client comes from an address of its own (X-Forwarded-For, as
// through the reference proxy), as viewers do.
func runSSE(ctx context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("bench", "sse", env)
	var o sseOptions
	var co clientOpts
	role := fs.String("role", "", "internal: clients (the child process)")
	fs.IntVar(&o.clients, "clients", 5000, "SSE clients per side")
	fs.IntVar(&o.rate, "rate", 100, "seat changes per second")
	fs.DurationVar(&o.warmup, "warmup", 3*time.Second, "traffic before measuring")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "measured time per side")
	fs.IntVar(&o.seats, "seats", 50000, "seats of the event")
	fs.StringVar(&o.sides, "sides", "boxoffice,minimal", "sides to measure, in order: boxoffice, minimal")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the server process's CPU profile of the measured time to this file, after the side's name")
	fs.StringVar(&co.url, "url", "", "internal: the stream URL")
	fs.StringVar(&co.prefix, "prefix", "", "internal: the Redis prefix")
	fs.Int64Var(&co.event, "event", 0, "internal: the event id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	redisURL := env.Getenv("REDIS_URL")
	if *role == "clients" {
		co.n, co.redisURL, co.warmup, co.duration = o.clients, redisURL, o.warmup, o.duration
		return runClients(ctx, co, env.Stdin, env.Stdout)
	}
	adminURL := env.Getenv("DATABASE_URL")
	if adminURL == "" || redisURL == "" {
		return errors.New("DATABASE_URL and REDIS_URL must be set (make bench-sse sets them up)")
	}
	if o.rate < 1 || o.clients < 1 {
		return errors.New("-rate and -clients: want at least 1")
	}
	benchkit.RaiseFileLimit()
	fmt.Fprintf(env.Stdout, "bench sse: creating %s with an event of %d seats\n", sseDB, o.seats)
	db, err := benchkit.CreateDB(ctx, adminURL, sseDB, env.Stderr)
	if err != nil {
		return err
	}
	defer db.Close(false) //nolint:errcheck // best effort
	ev, err := createSSEEvent(ctx, db.URL, o.seats)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "bench sse: %d clients per side, %d changes/s, %v warm-up + %v measured, %d cores (GOMAXPROCS %d)\n\n",
		o.clients, o.rate, o.warmup, o.duration, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	var rows []sseResult
	for name := range strings.SplitSeq(o.sides, ",") {
		r, err := measureSide(ctx, o, name, db.URL, redisURL, ev)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rows = append(rows, r)
		sseReport(env.Stdout, rows, o.duration)
	}
	return nil
}

// createSSEEvent creates the benchmark's event and reads its seat ids' range: its
// seats are made in one COPY, so their ids are one run.
func createSSEEvent(ctx context.Context, dbURL string, seats int) (sseEvent, error) {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return sseEvent{}, err
	}
	defer pool.Close()
	var ev sseEvent
	if ev.id, err = benchkit.CreateEvent(ctx, pool, benchkit.Event{Slug: sseSlug, Seats: seats}); err != nil {
		return ev, err
	}
	err = pool.QueryRow(ctx, "SELECT min(id), max(id) FROM seats WHERE event_id = $1", ev.id).Scan(&ev.lo, &ev.hi)
	return ev, err
}

// measureSide starts one side under a Redis prefix of its own, measures it and stops
// it.
func measureSide(ctx context.Context, o sseOptions, name, dbURL, redisURL string, ev sseEvent) (sseResult, error) {
	prefix := "ssebench:" + rand.Text()[:8] + ":"
	var s sseSide
	var err error
	switch name {
	case "boxoffice":
		s, err = startBoxoffice(ctx, dbURL, redisURL, prefix)
	case "minimal":
		s, err = startMinimal(ctx, redisURL, prefix, ev.id)
	default:
		err = fmt.Errorf("unknown side %q", name)
	}
	if err != nil {
		return sseResult{}, err
	}
	defer s.close()
	return measureStreams(ctx, o, s, redisURL, prefix, ev)
}

// sseResult is one side's figures.
type sseResult struct {
	name           string
	clients        clientReport
	heapPerStream  float64 // bytes of Go heap per stream
	stackPerStream float64 // bytes of goroutine stacks per stream
	rssPerStream   float64
	serverCPU      float64 // seconds over the measured time
}

// measureStreams runs one side: the clients process, the publisher, the memory
// readings.
func measureStreams(ctx context.Context, o sseOptions, s sseSide, redisURL, prefix string, ev sseEvent) (sseResult, error) {
	r := sseResult{name: s.name}
	cctx, cancel := context.WithTimeout(ctx, o.warmup+o.duration+3*time.Minute)
	defer cancel()
	cp, err := startClientsProcess(cctx, o, s.url, prefix, ev.id)
	if err != nil {
		return r, err
	}
	defer cp.cmd.Wait() //nolint:errcheck // waited for below; this is for early returns
	if _, err := cp.expect("one"); err != nil {
		return r, err
	}
	heap0, stack0, rss0 := benchkit.Memory()
	if _, err := io.WriteString(cp.in, "go\n"); err != nil {
		return r, err
	}
	ready, err := cp.expect("ready")
	if err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "bench sse: %s: %s (connected, failed)\n", s.name, ready)

	pctx, stopPub := context.WithCancel(ctx)
	defer stopPub()
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		publish(pctx, redisURL, prefix, ev, o.rate)
	}()
	if !benchkit.Sleep(ctx, o.warmup) {
		return r, ctx.Err()
	}
	cpu0 := benchkit.ProcessCPU()
	if o.cpuProfile != "" {
		f, err := os.Create(s.name + "-" + o.cpuProfile)
		if err != nil {
			return r, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return r, err
		}
		defer pprof.StopCPUProfile()
	}
	if !benchkit.Sleep(ctx, o.duration/2) {
		return r, ctx.Err()
	}
	heap1, stack1, rss1 := benchkit.Memory()
	if err := json.NewDecoder(cp.out).Decode(&r.clients); err != nil {
		return r, fmt.Errorf("clients process report: %w", err)
	}
	r.serverCPU = (benchkit.ProcessCPU() - cpu0).Seconds()
	stopPub()
	<-pubDone
	if err := cp.cmd.Wait(); err != nil {
		return r, fmt.Errorf("clients process: %w", err)
	}
	n := float64(max(r.clients.Connected-1, 1))
	r.heapPerStream, r.stackPerStream, r.rssPerStream = float64(heap1-heap0)/n, float64(stack1-stack0)/n, float64(rss1-rss0)/n
	return r, nil
}

// clientsProcess is the child process that runs the clients, and the pipes the two
// talk through.
type clientsProcess struct {
	cmd *exec.Cmd
	in  io.Writer
	out *bufio.Reader
}

func startClientsProcess(ctx context.Context, o sseOptions, url, prefix string, eventID int64) (*clientsProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "sse", "-role=clients", "-url="+url, "-prefix="+prefix,
		"-event="+strconv.FormatInt(eventID, 10), "-clients="+strconv.Itoa(o.clients),
		"-warmup="+o.warmup.String(), "-duration="+o.duration.String())
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &clientsProcess{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

// expect reads the child's next line, which must start with prefix.
func (cp *clientsProcess) expect(prefix string) (string, error) {
	line, err := cp.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("clients process: want %q: %w", prefix, err)
	}
	if !strings.HasPrefix(line, prefix) {
		return "", fmt.Errorf("clients process said %q, want %q", line, prefix)
	}
	return strings.TrimSpace(line), nil
}

// publish announces rate single-seat changes a second on random seats until ctx ends.
func publish(ctx context.Context, redisURL, prefix string, ev sseEvent, rate int) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	p := benchkit.NewPublisher(rdb, prefix)
	defer p.Close()
	benchkit.Every(ctx, time.Second/time.Duration(rate), func() {
		p.SeatsChanged(ctx, ev.id, []int64{ev.lo + mrand.Int64N(ev.hi-ev.lo+1)})
	})
}

// sseReport prints the sides measured so far. Memory is per stream (KB); CPU is in
// cores (CPU seconds per second) of the server process and of the clients process.
func sseReport(w io.Writer, rows []sseResult, measured time.Duration) {
	secs := measured.Seconds()
	fmt.Fprintf(w, "%-15s %7s %6s %9s %7s %8s %8s %8s %8s %7s %7s %9s %9s %8s %8s %8s\n",
		"side", "clients", "ended", "events/s", "MB/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "resets", "unknown",
		"heap KB", "stack KB", "RSS KB", "srv CPU", "cli CPU")
	for _, r := range rows {
		c := r.clients
		fmt.Fprintf(w, "%-15s %7d %6d %9.0f %7.1f %8.1f %8.1f %8.1f %8.1f %7d %7d %9.1f %9.1f %8.1f %7.2fc %7.2fc\n",
			r.name, c.Connected, c.Ended, float64(c.Events)/secs, float64(c.Bytes)/secs/1e6, c.P50, c.P90, c.P99, c.Max, c.Resets, c.Unknown,
			r.heapPerStream/1024, r.stackPerStream/1024, r.rssPerStream/1024, r.serverCPU/secs, c.CPU/secs)
	}
	fmt.Fprintln(w)
}
