package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/waitroom"
)

type options struct {
	clients  int
	duration time.Duration
	requests int
}

// result is one measured operation.
type result struct {
	name     string
	ops      float64 // per second
	p50, p99 time.Duration
	errors   int64
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("queuebench", flag.ContinueOnError)
	var o options
	fs.IntVar(&o.clients, "clients", 64, "concurrent callers (goroutines, and redis-benchmark connections)")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "measured time of each Room API side")
	fs.IntVar(&o.requests, "requests", 200000, "requests of each redis-benchmark side")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		return errors.New("redis-benchmark not on PATH")
	}
	raw := getenv("REDIS_URL")
	if raw == "" {
		return errors.New("REDIS_URL not set: run through `make bench-queue`")
	}
	ropt, err := redis.ParseURL(raw)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	// As many connections as redis-benchmark gets, so the pool is not the difference.
	ropt.PoolSize = o.clients
	ropt.ContextTimeoutEnabled = true // as the program's client (internal/app), and as waitroom.New requires
	rdb := redis.NewClient(ropt)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	prefix := "queuebench:" + strings.ToLower(rand.Text()[:8]) + ":"
	defer deletePrefix(context.Background(), rdb, prefix)

	key := waitroom.Key{ID: "bench", Secret: []byte(rand.Text())}
	room := waitroom.New(rdb, prefix, []waitroom.Key{key}, waitroom.Hooks{}, slog.New(slog.DiscardHandler), waitroom.Options{})
	if err := room.LoadScripts(ctx); err != nil {
		return err
	}
	ev := waitroom.Event{ID: 1, OnsaleAt: time.Now().Add(-time.Hour),
		Settings: waitroom.Settings{Enabled: true, Slots: 0, Rate: 100, TokenTTL: 10 * time.Minute}}

	fmt.Fprintf(out, "queuebench: %d callers, %v per Room side, %d requests per redis-benchmark side, prefix %s\n\n",
		o.clients, o.duration, o.requests, prefix)
	var rows []result
	bench := func(name string, keyspace int64, args ...string) error {
		r, err := redisBenchmark(ctx, ropt, o, keyspace, name, args...)
		if err != nil {
			return err
		}
		rows = append(rows, r)
		fmt.Fprintf(out, "  %-48s %10.0f/s\n", r.name, r.ops)
		return nil
	}

	// Joins: every caller joins new visitors, named as redis-benchmark's __rand_int__
	// would name them, so that its position checks later hit waiters.
	var next atomic.Int64
	rows = append(rows, measure(ctx, out, "Room.Join (new visitor, queues)", o, func(ctx context.Context, _ *mrand.Rand) error {
		_, err := room.Join(ctx, ev, visitorName(next.Add(1)-1))
		return err
	}))
	joined := next.Load()
	other := fmt.Sprintf("%s{event:2}:zadd", prefix)
	if err := bench("redis-benchmark ZADD", 1e9, "ZADD", other, "__rand_int__", "v:__rand_int__"); err != nil {
		return err
	}

	// Position checks of random waiters.
	rows = append(rows, measure(ctx, out, "Room.Status (waiting visitor)", o, func(ctx context.Context, rnd *mrand.Rand) error {
		st, err := room.Status(ctx, ev, visitorName(rnd.Int64N(joined)))
		if err == nil && !st.Queued {
			err = errors.New("not queued")
		}
		return err
	}))
	queue := prefix + "{event:1}:wr:queue"
	rows = append(rows, measure(ctx, out, "go-redis ZRANK (same client, no script)", o, func(ctx context.Context, rnd *mrand.Rand) error {
		return rdb.ZRank(ctx, queue, visitorName(rnd.Int64N(joined))).Err()
	}))
	if err := bench("redis-benchmark ZRANK", joined, "ZRANK", queue, "v:__rand_int__"); err != nil {
		return err
	}
	status, _ := room.RawCommands(ev, "v:__rand_int__")
	if err := bench("redis-benchmark EVALSHA status script", joined, status...); err != nil {
		return err
	}
	third := ev
	third.ID = 3 // a queue of its own
	_, join := room.RawCommands(third, "v:__rand_int__")
	if err := bench("redis-benchmark EVALSHA join script", 1e9, join...); err != nil {
		return err
	}

	fmt.Fprintf(out, "\n%d waiters joined; redis-benchmark's position checks pick among them (-r %d)\n\n", joined, joined)
	report(out, rows)
	return nil
}

// visitorName names visitor i as redis-benchmark's -r does: 12 digits.
func visitorName(i int64) string { return fmt.Sprintf("v:%012d", i) }

// measure runs op from o.clients goroutines for o.duration, after a 1 s warm-up.
func measure(ctx context.Context, out io.Writer, name string, o options, op func(context.Context, *mrand.Rand) error) result {
	var (
		wg       sync.WaitGroup
		errs     atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		measured atomic.Bool
		stop     atomic.Bool
	)
	start := make(chan struct{})
	for c := range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	close(start)
	<-time.After(time.Second)
	measured.Store(true)
	t0 := time.Now()
	<-time.After(o.duration)
	measured.Store(false)
	elapsed := time.Since(t0)
	stop.Store(true)
	wg.Wait()
	slices.Sort(lat)
	r := result{name: name, ops: float64(len(lat)) / elapsed.Seconds(), errors: errs.Load()}
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	fmt.Fprintf(out, "  %-48s %10.0f/s  p50 %v  p99 %v  errors %d\n", r.name, r.ops, r.p50, r.p99, r.errors)
	return r
}

var rpsLine = regexp.MustCompile(`([0-9.]+) requests per second`)

// redisBenchmark runs one command line through redis-benchmark against ropt's server.
// __rand_int__ in cmd becomes a random number below keyspace, 12 digits long.
func redisBenchmark(ctx context.Context, ropt *redis.Options, o options, keyspace int64, name string, cmd ...string) (result, error) {
	host, port, err := net.SplitHostPort(ropt.Addr)
	if err != nil {
		return result{}, err
	}
	args := []string{"-h", host, "-p", port, "--dbnum", strconv.Itoa(ropt.DB),
		"-c", strconv.Itoa(o.clients), "-n", strconv.Itoa(o.requests), "-r", strconv.FormatInt(keyspace, 10), "-q"}
	if ropt.Password != "" {
		args = append(args, "-a", ropt.Password)
	}
	outb, err := exec.CommandContext(ctx, "redis-benchmark", append(args, cmd...)...).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("redis-benchmark %s: %w\n%s", name, err, outb)
	}
	// With -q the last report of a run holds its final figure.
	m := rpsLine.FindAllStringSubmatch(string(outb), -1)
	if m == nil {
		return result{}, fmt.Errorf("redis-benchmark %s: no figure in %q", name, outb)
	}
	ops, _ := strconv.ParseFloat(m[len(m)-1][1], 64)
	return result{name: name, ops: ops}, nil
}

// report prints the Room's figures next to the server's ceilings for the same commands.
func report(out io.Writer, rows []result) {
	find := func(name string) float64 {
		for _, r := range rows {
			if r.name == name {
				return r.ops
			}
		}
		return 0
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
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

// deletePrefix deletes the run's keys.
func deletePrefix(ctx context.Context, rdb *redis.Client, prefix string) {
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
