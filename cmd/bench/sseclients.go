package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/live"
)

// clientOpts is what the parent tells the clients process.
type clientOpts struct {
	url      string
	n        int
	redisURL string
	prefix   string
	event    int64
	warmup   time.Duration
	duration time.Duration
}

// clientReport is what the clients process tells the parent, as JSON on its stdout.
type clientReport struct {
	Connected int     `json:"connected"`
	Failed    int     `json:"failed"`
	Ended     int64   `json:"ended"` // streams the server closed before the end
	Events    int64   `json:"events"`
	Bytes     int64   `json:"bytes"`
	Resets    int64   `json:"resets"`
	Samples   int64   `json:"samples"`
	Unknown   int64   `json:"unknown"` // versions whose publication this process never saw
	P50       float64 `json:"p50Ms"`
	P90       float64 `json:"p90Ms"`
	P99       float64 `json:"p99Ms"`
	Max       float64 `json:"maxMs"`
	CPU       float64 `json:"cpuSeconds"`
}

// published remembers when each version reached this process through its own Redis
// subscription: the moment a change became visible to any subscriber, the origin of
// every latency measured here. Slots are reused modulo their number.
type published struct {
	ver [1 << 16]atomic.Int64
	at  [1 << 16]atomic.Int64
}

func (p *published) record(v int64, t time.Time) {
	i := v & (1<<16 - 1)
	p.at[i].Store(t.UnixNano())
	p.ver[i].Store(v)
}

func (p *published) when(v int64) (int64, bool) {
	i := v & (1<<16 - 1)
	if p.ver[i].Load() != v {
		return 0, false
	}
	return p.at[i].Load(), true
}

// histogram counts latencies in milliseconds, the last bucket open-ended.
type histogram struct {
	b   [10001]atomic.Int64
	max atomic.Int64 // nanoseconds
}

func (h *histogram) add(d time.Duration) {
	ms := min(max(int(d/time.Millisecond), 0), len(h.b)-1)
	h.b[ms].Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

func (h *histogram) quantile(q float64, total int64) float64 {
	want := int64(q * float64(total))
	var seen int64
	for i := range h.b {
		if seen += h.b[i].Load(); seen > want {
			return float64(i) + 0.5
		}
	}
	return float64(len(h.b))
}

// runClients is the clients process: n SSE clients on loopback, each measuring when
// every version reached it against when it was published.
func runClients(ctx context.Context, o clientOpts, in io.Reader, out io.Writer) error {
	raiseFileLimit()
	ropt, err := redis.ParseURL(o.redisURL)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(ropt)
	defer rdb.Close()
	var pub published
	sub := live.Subscribe(ctx, rdb, o.prefix, o.event)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return err
	}
	go func() {
		for m := range sub.Channel(redis.WithChannelSize(4096)) {
			var c live.Change
			if json.Unmarshal([]byte(m.Payload), &c) == nil {
				pub.record(c.Version, time.Now())
			}
		}
	}()

	var (
		hist      histogram
		measuring atomic.Bool
		rep       clientReport
		events    atomic.Int64
		bytesIn   atomic.Int64
		resets    atomic.Int64
		samples   atomic.Int64
		unknown   atomic.Int64
		ended     atomic.Int64
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{
		DialContext:        (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		DisableCompression: true, MaxIdleConnsPerHost: -1, ResponseHeaderTimeout: 30 * time.Second,
	}}
	var wg sync.WaitGroup
	connect := func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.url, nil)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			return fmt.Errorf("status %d", res.StatusCode)
		}
		wg.Go(func() {
			defer res.Body.Close()
			rd := bufio.NewReaderSize(res.Body, 4096)
			var prev, id int64
			// Versions read before this process's own subscription told it when they
			// were published (a fast server can win that race): timed at the next event.
			type early struct{ v, at int64 }
			var pending []early
			sample := func(v, at int64) bool {
				t0, ok := pub.when(v)
				if ok {
					hist.add(time.Duration(at - t0))
					samples.Add(1)
				}
				return ok
			}
			tail := false // the rest of a line longer than the buffer
			for {
				line, err := rd.ReadSlice('\n')
				if err != nil && err != bufio.ErrBufferFull {
					if ctx.Err() == nil {
						if ended.Add(1) == 1 {
							fmt.Fprintln(os.Stderr, "ssebench: a stream ended early:", err)
						}
					}
					return
				}
				m := measuring.Load()
				if m {
					bytesIn.Add(int64(len(line)))
				}
				wasTail := tail
				tail = err == bufio.ErrBufferFull
				switch {
				case wasTail: // data of a long line
				case bytes.HasPrefix(line, []byte("id: ")):
					id, _ = strconv.ParseInt(string(bytes.TrimSpace(line[4:])), 10, 64)
				case bytes.HasPrefix(line, []byte("event: reset")):
					prev = id // nothing to time: the client reloads
					if m {
						resets.Add(1)
					}
				case len(line) == 1 && id > prev: // the blank line that dispatches
					now := time.Now().UnixNano()
					if m {
						events.Add(1)
						for _, e := range pending {
							if !sample(e.v, e.at) {
								unknown.Add(1)
							}
						}
						pending = pending[:0]
						for v := prev + 1; v <= id; v++ {
							if !sample(v, now) {
								pending = append(pending, early{v, now})
							}
						}
					}
					prev = id
				}
			}
		})
		return nil
	}

	// One client first, so the parent can measure the server with its per-event state
	// (subscription, cached map) in place, then the rest.
	if err := connect(); err != nil {
		return fmt.Errorf("first client: %w", err)
	}
	fmt.Fprintln(out, "one")
	if _, err := bufio.NewReader(in).ReadString('\n'); err != nil {
		return err
	}
	var connected, failed atomic.Int64
	connected.Add(1)
	sem := make(chan struct{}, 64)
	var dial sync.WaitGroup
	for range o.n - 1 {
		sem <- struct{}{}
		dial.Go(func() {
			defer func() { <-sem }()
			if connect() == nil {
				connected.Add(1)
			} else {
				failed.Add(1)
			}
		})
	}
	dial.Wait()
	fmt.Fprintf(out, "ready %d %d\n", connected.Load(), failed.Load())

	if !sleep(ctx, o.warmup) {
		return ctx.Err()
	}
	cpu0 := cpuTime()
	measuring.Store(true)
	if !sleep(ctx, o.duration) {
		return ctx.Err()
	}
	measuring.Store(false)
	rep.CPU = (cpuTime() - cpu0).Seconds()
	rep.Connected, rep.Failed = int(connected.Load()), int(failed.Load())
	rep.Ended, rep.Events, rep.Bytes, rep.Resets = ended.Load(), events.Load(), bytesIn.Load(), resets.Load()
	rep.Samples, rep.Unknown = samples.Load(), unknown.Load()
	if rep.Samples > 0 {
		rep.P50, rep.P90, rep.P99 = hist.quantile(0.50, rep.Samples), hist.quantile(0.90, rep.Samples), hist.quantile(0.99, rep.Samples)
		rep.Max = float64(hist.max.Load()) / 1e6
	}
	cancel()
	wg.Wait()
	return json.NewEncoder(out).Encode(rep)
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
