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

	"boxoffice/internal/benchkit"
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

// streams is the clients process's streams and what they counted.
type streams struct {
	ctx       context.Context
	url       string
	http      *http.Client
	pub       published
	hist      benchkit.Histogram
	measuring atomic.Bool
	wg        sync.WaitGroup
	// counted while measuring
	events, bytes, resets, unknown atomic.Int64
	ended                          atomic.Int64 // streams the server closed before the end
}

// runClients is the clients process: o.n SSE clients on loopback, each measuring when
// every version reached it against when it was published.
func runClients(ctx context.Context, o clientOpts, in io.Reader, out io.Writer) error {
	benchkit.RaiseFileLimit()
	ropt, err := redis.ParseURL(o.redisURL)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(ropt)
	defer rdb.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := &streams{ctx: ctx, url: o.url, http: &http.Client{Transport: &http.Transport{
		DialContext:        (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		DisableCompression: true, MaxIdleConnsPerHost: -1, ResponseHeaderTimeout: 30 * time.Second,
	}}}
	sub := benchkit.Subscribe(ctx, rdb, o.prefix, o.event)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return err
	}
	go func() {
		for m := range sub.Channel(redis.WithChannelSize(4096)) {
			var c benchkit.SeatChange
			if json.Unmarshal([]byte(m.Payload), &c) == nil {
				st.pub.record(c.Version, time.Now())
			}
		}
	}()

	// One client first, so the parent can measure the server with its per-event state
	// (subscription, cached map) in place, then the rest.
	if err := st.connect(0); err != nil {
		return fmt.Errorf("first client: %w", err)
	}
	fmt.Fprintln(out, "one")
	if _, err := bufio.NewReader(in).ReadString('\n'); err != nil {
		return err
	}
	connected, failed := st.connectAll(o.n)
	fmt.Fprintf(out, "ready %d %d\n", connected, failed)

	if !benchkit.Sleep(ctx, o.warmup) {
		return ctx.Err()
	}
	cpu0 := benchkit.ProcessCPU()
	st.measuring.Store(true)
	if !benchkit.Sleep(ctx, o.duration) {
		return ctx.Err()
	}
	st.measuring.Store(false)
	rep := clientReport{CPU: (benchkit.ProcessCPU() - cpu0).Seconds(), Connected: connected, Failed: failed,
		Ended: st.ended.Load(), Events: st.events.Load(), Bytes: st.bytes.Load(), Resets: st.resets.Load(),
		Samples: st.hist.N(), Unknown: st.unknown.Load()}
	if rep.Samples > 0 {
		rep.P50, rep.P90, rep.P99, rep.Max = st.hist.Quantile(0.50), st.hist.Quantile(0.90), st.hist.Quantile(0.99), st.hist.Max()
	}
	cancel()
	st.wg.Wait()
	return json.NewEncoder(out).Encode(rep)
}

// connectAll connects clients 1 to n-1, 64 at a time, and counts them with the first.
func (st *streams) connectAll(n int) (connected, failed int) {
	var ok, bad atomic.Int64
	ok.Add(1)
	sem := make(chan struct{}, 64)
	var dial sync.WaitGroup
	for i := 1; i < n; i++ {
		sem <- struct{}{}
		dial.Go(func() {
			defer func() { <-sem }()
			if st.connect(i) == nil {
				ok.Add(1)
			} else {
				bad.Add(1)
			}
		})
	}
	dial.Wait()
	return int(ok.Load()), int(bad.Load())
}

// connect opens client i's stream, from an address of its own, and reads it until
// the process ends.
func (st *streams) connect(i int) error {
	req, _ := http.NewRequestWithContext(st.ctx, http.MethodGet, st.url, nil)
	a := i + 1 // 10.0.0.1 on
	req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", a>>16&255, a>>8&255, a&255))
	res, err := st.http.Do(req)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return fmt.Errorf("status %d", res.StatusCode)
	}
	st.wg.Go(func() {
		defer res.Body.Close()
		st.read(res.Body)
	})
	return nil
}

// read reads one stream: every version an event carries is timed against its
// publication.
func (st *streams) read(body io.Reader) {
	rd := bufio.NewReaderSize(body, 4096)
	var prev, id int64
	// Versions read before this process's own subscription told it when they were
	// published (a fast server can win that race): timed at the next event.
	type early struct{ v, at int64 }
	var pending []early
	sample := func(v, at int64) bool {
		t0, ok := st.pub.when(v)
		if ok {
			st.hist.Add(time.Duration(at - t0))
		}
		return ok
	}
	tail := false // the rest of a line longer than the buffer
	for {
		line, err := rd.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			if st.ctx.Err() == nil && st.ended.Add(1) == 1 {
				fmt.Fprintln(os.Stderr, "bench sse: a stream ended early:", err)
			}
			return
		}
		m := st.measuring.Load()
		if m {
			st.bytes.Add(int64(len(line)))
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
				st.resets.Add(1)
			}
		case len(line) == 1 && id > prev: // the blank line that dispatches
			now := time.Now().UnixNano()
			if m {
				st.events.Add(1)
				for _, e := range pending {
					if !sample(e.v, e.at) {
						st.unknown.Add(1)
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
}
