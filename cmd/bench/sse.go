// Command ssebench measures the live seat stream's fan-out: thousands of SSE clients on
// loopback while an event's seats change a hundred times a second, boxoffice's stream
// next to a minimal net/http hub measured in the same run (absolute numbers drift
// between runs on shared machines; ratios taken side by side do not).
//
//	boxoffice  the program as internal/app builds it, a live.Hub (one Redis
//	           subscription, 100 ms batches) feeding the seat map cache, and web's
//	           stream handler sending seats as the page's out-of-band HTML
//	boxoffice-small  the same with state-only fragments, to tell markup from fan-out
//	minimal    a bare net/http server with its own go-redis subscription, a log of
//	           changes and per client a 100 ms tick writing the changed seat ids
//
// Changes go out through live.Publisher on a real event of a fresh database
// (boxoffice_ssebench, next to DATABASE_URL's). The clients run in a child process (this
// same program), so that the server's memory per stream is measured alone: the growth
// of its Go heap and stacks, and of its RSS, from one client to all of them, divided by
// their number. Latency is from the moment a version reached the clients process
// through its own Redis subscription to the moment a client read the event carrying it.
//
// DATABASE_URL and REDIS_URL name the services; `make bench-sse` sets them up.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/live"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ssebench:", err)
		os.Exit(1)
	}
}

type options struct {
	clients    int
	rate       int
	warmup     time.Duration
	duration   time.Duration
	seats      int
	sides      string
	cpuProfile string
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("ssebench", flag.ContinueOnError)
	var o options
	var co clientOpts
	role := fs.String("role", "", "internal: clients (the child process)")
	fs.IntVar(&o.clients, "clients", 5000, "SSE clients per side")
	fs.IntVar(&o.rate, "rate", 100, "seat changes per second")
	fs.DurationVar(&o.warmup, "warmup", 3*time.Second, "traffic before measuring")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "measured time per side")
	fs.IntVar(&o.seats, "seats", 50000, "seats of the event")
	fs.StringVar(&o.sides, "sides", "boxoffice,boxoffice-small,minimal", "sides to measure, in order: boxoffice, boxoffice-small (state-only fragments), minimal")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the server process's CPU profile of the measured time to this file")
	fs.StringVar(&co.url, "url", "", "internal: the stream URL")
	fs.StringVar(&co.prefix, "prefix", "", "internal: the Redis prefix")
	fs.Int64Var(&co.event, "event", 0, "internal: the event id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	redisURL := os.Getenv("REDIS_URL")
	if *role == "clients" {
		co.n, co.redisURL, co.warmup, co.duration = o.clients, redisURL, o.warmup, o.duration
		return runClients(ctx, co, stdin, stdout)
	}
	adminURL := os.Getenv("DATABASE_URL")
	if adminURL == "" || redisURL == "" {
		return errors.New("DATABASE_URL and REDIS_URL must be set (make bench-sse sets them up)")
	}
	raiseFileLimit()

	fmt.Fprintf(stdout, "ssebench: creating %s with an event of %d seats\n", benchDB, o.seats)
	dbURL, eventID, err := createBenchDB(ctx, adminURL, o.seats)
	if err != nil {
		return err
	}
	defer dropBenchDB(context.WithoutCancel(ctx), adminURL) //nolint:errcheck // best effort
	lo, hi, err := seatRange(ctx, dbURL, eventID)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ssebench: %d clients per side, %d changes/s, %v warm-up + %v measured, %d cores (GOMAXPROCS %d)\n\n",
		o.clients, o.rate, o.warmup, o.duration, runtime.NumCPU(), runtime.GOMAXPROCS(0))

	var rows []result
	for _, name := range strings.Split(o.sides, ",") {
		prefix := "ssebench:" + rand.Text()[:8] + ":"
		var s side
		switch name {
		case "boxoffice":
			s, err = startBoxoffice(ctx, dbURL, redisURL, prefix, eventID, false)
		case "boxoffice-small":
			s, err = startBoxoffice(ctx, dbURL, redisURL, prefix, eventID, true)
			s.name = name
		case "minimal":
			s, err = startMinimal(ctx, redisURL, prefix, eventID)
		default:
			err = fmt.Errorf("unknown side %q", name)
		}
		if err != nil {
			return err
		}
		r, err := measure(ctx, o, s, redisURL, prefix, eventID, lo, hi)
		s.close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rows = append(rows, r)
		report(stdout, rows, o.duration)
	}
	return nil
}

// result is one side's figures.
type result struct {
	name           string
	clients        clientReport
	heapPerStream  float64 // bytes of Go heap per stream
	stackPerStream float64 // bytes of goroutine stacks per stream
	rssPerStream   float64
	serverCPU      float64 // seconds over the measured time
}

// measure runs one side: the clients process, the publisher, the memory readings.
func measure(ctx context.Context, o options, s side, redisURL, prefix string, eventID, lo, hi int64) (result, error) {
	r := result{name: s.name}
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	cctx, cancel := context.WithTimeout(ctx, o.warmup+o.duration+3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, self, "-role=clients", "-url="+s.url, "-prefix="+prefix,
		"-event="+strconv.FormatInt(eventID, 10), "-clients="+strconv.Itoa(o.clients),
		"-warmup="+o.warmup.String(), "-duration="+o.duration.String())
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer cmd.Wait() //nolint:errcheck // waited for below; this is for early returns
	out := bufio.NewReader(outPipe)
	expect := func(prefix string) (string, error) {
		line, err := out.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("clients process: want %q: %w", prefix, err)
		}
		if !strings.HasPrefix(line, prefix) {
			return "", fmt.Errorf("clients process said %q, want %q", line, prefix)
		}
		return strings.TrimSpace(line), nil
	}
	if _, err := expect("one"); err != nil {
		return r, err
	}
	heap0, stack0, rss0 := memory()
	if _, err := io.WriteString(in, "go\n"); err != nil {
		return r, err
	}
	ready, err := expect("ready")
	if err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "ssebench: %s: %s (connected, failed)\n", s.name, ready)

	pctx, stopPub := context.WithCancel(ctx)
	defer stopPub()
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		publish(pctx, redisURL, prefix, eventID, lo, hi, o.rate)
	}()
	if !sleep(ctx, o.warmup) {
		return r, ctx.Err()
	}
	cpu0 := cpuTime()
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
	if !sleep(ctx, o.duration/2) {
		return r, ctx.Err()
	}
	heap1, stack1, rss1 := memory()
	var rep clientReport
	if err := json.NewDecoder(out).Decode(&rep); err != nil {
		return r, fmt.Errorf("clients process report: %w", err)
	}
	r.serverCPU = (cpuTime() - cpu0).Seconds()
	stopPub()
	<-pubDone
	if err := cmd.Wait(); err != nil {
		return r, fmt.Errorf("clients process: %w", err)
	}
	r.clients = rep
	n := float64(max(rep.Connected-1, 1))
	r.heapPerStream = float64(heap1-heap0) / n
	r.stackPerStream = float64(stack1-stack0) / n
	r.rssPerStream = float64(rss1-rss0) / n
	return r, nil
}

// publish announces rate single-seat changes a second on random seats until ctx ends.
func publish(ctx context.Context, redisURL, prefix string, eventID, lo, hi int64, rate int) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	p := live.NewPublisher(rdb, prefix, quiet)
	defer p.Close()
	t := time.NewTicker(time.Second / time.Duration(rate))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.SeatsChanged(ctx, eventID, []int64{lo + mrand.Int64N(hi-lo+1)})
		}
	}
}

// seatRange returns the lowest and highest seat id of the event: its seats were made
// in one COPY, so their ids are one run.
func seatRange(ctx context.Context, dbURL string, eventID int64) (lo, hi int64, err error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	err = conn.QueryRow(ctx, "SELECT min(id), max(id) FROM seats WHERE event_id = $1", eventID).Scan(&lo, &hi)
	return lo, hi, err
}

// memory returns the live Go heap and the stacks in use, after a collection, and the
// RSS.
func memory() (heap, stacks, rss int64) {
	// Two collections empty the sync.Pools (net/http keeps its buffers there) that an
	// earlier side filled; FreeOSMemory then hands free pages back, so RSS means use.
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	heap, stacks = int64(m.HeapAlloc), int64(m.StackInuse) // live objects: spans left by an earlier side do not hide them
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				rss = kb * 1024
			}
		}
	}
	return heap, stacks, rss
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// raiseFileLimit lifts the open-file limit to its hard limit: one stream is one
// descriptor on each side of the loopback.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// report prints the sides measured so far. Memory is per stream (KB); CPU is in cores
// (CPU seconds per second) of the server process and of the clients process.
func report(w io.Writer, rows []result, measured time.Duration) {
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
