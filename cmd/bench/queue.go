package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/benchkit"
)

type queueOptions struct {
	clients  int
	duration time.Duration
	requests int
}

// queueResult is one measured operation.
type queueResult struct {
	name     string
	ops      float64 // per second
	p50, p99 time.Duration
	errors   int64
}

// queueBench is one run: the Room under measurement and the figures so far.
type queueBench struct {
	o      queueOptions
	ropt   *redis.Options
	rdb    *redis.Client
	prefix string
	out    io.Writer
	rows   []queueResult
}

// runQueue is `bench queue`: it measures the waiting room on one instance: queue joins
// and position checks per second through the Room API (internal/waitroom) with 64
// concurrent callers, next to redis-benchmark running the same Redis commands with 64
// connections in the same run.
//
//	join       Room.Join of a new visitor              vs  redis-benchmark ZADD
//	status     Room.Status of a waiting visitor        vs  redis-benchmark ZRANK
//	                                                    and EVALSHA of the status script
//	go-redis   ZRANK through go-redis alone (the client's share of Status's cost)
//	raw join   EVALSHA of the join script (the server's share of Join's cost)
//
// The event's room has no slots, so every join queues and every check finds a waiter.
// Keys go under a prefix of the run's own and are deleted at the end.
func runQueue(ctx context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("bench", "queue", env)
	var o queueOptions
	fs.IntVar(&o.clients, "clients", 64, "concurrent callers (goroutines, and redis-benchmark connections)")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "measured time of each Room API side")
	fs.IntVar(&o.requests, "requests", 200000, "requests of each redis-benchmark side")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		return errors.New("redis-benchmark not on PATH")
	}
	raw := env.Getenv("REDIS_URL")
	if raw == "" {
		return errors.New("REDIS_URL not set: run through `make bench-queue`")
	}
	ropt, err := redis.ParseURL(raw)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	// As many connections as redis-benchmark gets, so the pool is not the difference.
	ropt.PoolSize = o.clients
	ropt.ContextTimeoutEnabled = true // as the program's client (internal/app), and as the waiting room requires
	q := &queueBench{o: o, ropt: ropt, rdb: redis.NewClient(ropt), out: env.Stdout,
		prefix: "queuebench:" + strings.ToLower(rand.Text()[:8]) + ":"}
	defer q.rdb.Close()
	if err := q.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	defer benchkit.DeleteKeys(context.Background(), q.rdb, q.prefix)
	fmt.Fprintf(q.out, "bench queue: %d callers, %v per Room side, %d requests per redis-benchmark side, prefix %s\n\n",
		o.clients, o.duration, o.requests, q.prefix)
	if err := q.run(ctx); err != nil {
		return err
	}
	q.report()
	return nil
}

// run measures each Room operation, and each ceiling after it.
func (q *queueBench) run(ctx context.Context) error {
	room, err := benchkit.NewRoom(ctx, q.rdb, q.prefix)
	if err != nil {
		return err
	}
	ev := benchkit.RoomEventOf(1, time.Now().Add(-time.Hour), benchkit.Queue{Slots: 0, Rate: 100, TokenTTL: 10 * time.Minute})

	// Joins: every caller joins new visitors, named as redis-benchmark's __rand_int__
	// would name them, so that its position checks later hit waiters.
	var next atomic.Int64
	q.measure(ctx, "Room.Join (new visitor, queues)", func(ctx context.Context, _ *mrand.Rand) error {
		_, err := room.Join(ctx, ev, visitorName(next.Add(1)-1))
		return err
	})
	joined := next.Load()
	if err := q.bench(ctx, "redis-benchmark ZADD", 1e9, "ZADD", q.prefix+"{event:2}:zadd", "__rand_int__", "v:__rand_int__"); err != nil {
		return err
	}

	// Position checks of random waiters.
	q.measure(ctx, "Room.Status (waiting visitor)", func(ctx context.Context, rnd *mrand.Rand) error {
		st, err := room.Status(ctx, ev, visitorName(rnd.Int64N(joined)))
		if err == nil && !st.Queued {
			err = errors.New("not queued")
		}
		return err
	})
	queue := q.prefix + "{event:1}:wr:queue"
	q.measure(ctx, "go-redis ZRANK (same client, no script)", func(ctx context.Context, rnd *mrand.Rand) error {
		return q.rdb.ZRank(ctx, queue, visitorName(rnd.Int64N(joined))).Err()
	})
	if err := q.bench(ctx, "redis-benchmark ZRANK", joined, "ZRANK", queue, "v:__rand_int__"); err != nil {
		return err
	}
	status, _ := room.RawCommands(ev, "v:__rand_int__")
	if err := q.bench(ctx, "redis-benchmark EVALSHA status script", joined, status...); err != nil {
		return err
	}
	third := ev
	third.ID = 3 // a queue of its own
	_, join := room.RawCommands(third, "v:__rand_int__")
	if err := q.bench(ctx, "redis-benchmark EVALSHA join script", 1e9, join...); err != nil {
		return err
	}
	fmt.Fprintf(q.out, "\n%d waiters joined; redis-benchmark's position checks pick among them (-r %d)\n\n", joined, joined)
	return nil
}

// bench runs one ceiling through redis-benchmark and adds it to the figures.
func (q *queueBench) bench(ctx context.Context, name string, keyspace int64, args ...string) error {
	r, err := redisBenchmark(ctx, q.ropt, q.o, keyspace, name, args...)
	if err != nil {
		return err
	}
	q.rows = append(q.rows, r)
	fmt.Fprintf(q.out, "  %-48s %10.0f/s\n", r.name, r.ops)
	return nil
}

// visitorName names visitor i as redis-benchmark's -r does: 12 digits.
func visitorName(i int64) string { return fmt.Sprintf("v:%012d", i) }

// measure runs op from q.o.clients goroutines for q.o.duration, after a 1 s warm-up,
// and adds it to the figures.
func (q *queueBench) measure(ctx context.Context, name string, op func(context.Context, *mrand.Rand) error) {
	var (
		wg       sync.WaitGroup
		errs     atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		measured atomic.Bool
		stop     atomic.Bool
	)
	start := make(chan struct{})
	for c := range q.o.clients {
		wg.Go(func() {
			rnd := mrand.New(mrand.NewPCG(uint64(c), 7))
			var mine []time.Duration
			<-start
			for !stop.Load() && ctx.Err() == nil {
				t0 := time.Now()
				err := op(ctx, rnd)
				if measured.Load() {
					mine = append(mine, time.Since(t0))
					if err != nil {
						errs.Add(1)
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	close(start)
	benchkit.Sleep(ctx, time.Second)
	measured.Store(true)
	t0 := time.Now()
	benchkit.Sleep(ctx, q.o.duration)
	measured.Store(false)
	elapsed := time.Since(t0)
	stop.Store(true)
	wg.Wait()
	r := queueResult{name: name, ops: float64(len(lat)) / elapsed.Seconds(), errors: errs.Load()}
	r.p50, r.p99 = benchkit.Percentiles(lat)
	fmt.Fprintf(q.out, "  %-48s %10.0f/s  p50 %v  p99 %v  errors %d\n", r.name, r.ops, r.p50, r.p99, r.errors)
	q.rows = append(q.rows, r)
}

var rpsLine = regexp.MustCompile(`([0-9.]+) requests per second`)

// redisBenchmark runs one command line through redis-benchmark against ropt's server.
// __rand_int__ in cmd becomes a random number below keyspace, 12 digits long.
func redisBenchmark(ctx context.Context, ropt *redis.Options, o queueOptions, keyspace int64, name string, cmd ...string) (queueResult, error) {
	host, port, err := net.SplitHostPort(ropt.Addr)
	if err != nil {
		return queueResult{}, err
	}
	args := []string{"-h", host, "-p", port, "--dbnum", strconv.Itoa(ropt.DB),
		"-c", strconv.Itoa(o.clients), "-n", strconv.Itoa(o.requests), "-r", strconv.FormatInt(keyspace, 10), "-q"}
	if ropt.Password != "" {
		args = append(args, "-a", ropt.Password)
	}
	outb, err := exec.CommandContext(ctx, "redis-benchmark", append(args, cmd...)...).CombinedOutput()
	if err != nil {
		return queueResult{}, fmt.Errorf("redis-benchmark %s: %w\n%s", name, err, outb)
	}
	// With -q the last report of a run holds its final figure.
	m := rpsLine.FindAllStringSubmatch(string(outb), -1)
	if m == nil {
		return queueResult{}, fmt.Errorf("redis-benchmark %s: no figure in %q", name, outb)
	}
	ops, _ := strconv.ParseFloat(m[len(m)-1][1], 64)
	return queueResult{name: name, ops: ops}, nil
}

// report prints the Room's figures next to the server's ceilings for the same commands.
func (q *queueBench) report() {
	find := func(name string) float64 {
		for _, r := range q.rows {
			if r.name == name {
				return r.ops
			}
		}
		return 0
	}
	w := tabwriter.NewWriter(q.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "operation\tRoom API /s\tredis-benchmark /s\tratio\t")
	line := func(what, room, ceiling string) {
		a, b := find(room), find(ceiling)
		fmt.Fprintf(w, "%s\t%.0f\t%.0f (%s)\t%.2f\t\n", what, a, b, strings.TrimPrefix(ceiling, "redis-benchmark "), a/b)
	}
	line("queue join", "Room.Join (new visitor, queues)", "redis-benchmark ZADD")
	line("queue join", "Room.Join (new visitor, queues)", "redis-benchmark EVALSHA join script")
	line("position check", "Room.Status (waiting visitor)", "redis-benchmark ZRANK")
	line("position check", "Room.Status (waiting visitor)", "redis-benchmark EVALSHA status script")
	line("position check, go-redis ZRANK", "go-redis ZRANK (same client, no script)", "redis-benchmark ZRANK")
	_ = w.Flush()
}
