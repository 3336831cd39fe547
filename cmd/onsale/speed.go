package main

import (
	"compress/gzip"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"boxoffice/internal/benchkit"
)

// The machine's speed. A virtual machine's cores are not always as fast: on the
// 2-core machines these runs are made on, with nothing else running, the web
// package's seat map benchmarks take 1.5 to 2.7 times as long in some 100-ms
// measurements as in others (docs/BENCHMARKS.md), and two runs of the same code
// differ by tens of seconds in their sell-out. A run's figures mean little without the speed
// it ran at. So the simulator times a fixed piece of the server's own kind of work
// (gzip of 128 KB of JSON-like text, as the seat map is compressed) once a second in
// the CPU time of its own thread: time spent waiting for a core (the sale's own load)
// does not count, a slower core does.

// probeBytes is the work's size: 3.2 to 12 ms of CPU on the idle machine, about half
// a hundredth of a core once a second.
const probeBytes = 128 << 10

// probeInput is the text the work compresses, the same in every run.
var probeInput = sync.OnceValue(func() []byte {
	const alphabet = `aaaaabbbcd{}":,0123456789`
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, probeBytes)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
})

// probeOnce does the work and answers the CPU time it took its thread; false when the
// thread's CPU clock cannot be read. zw is reused from call to call (Reset), so the
// work allocates nothing once it has run.
func probeOnce(zw *gzip.Writer) (time.Duration, bool) {
	in := probeInput()
	runtime.LockOSThread() // the thread's clock must be this goroutine's alone
	defer runtime.UnlockOSThread()
	var a, b unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &a) != nil {
		return 0, false
	}
	zw.Reset(io.Discard)
	if _, err := zw.Write(in); err != nil || zw.Close() != nil {
		return 0, false
	}
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &b) != nil {
		return 0, false
	}
	return time.Duration(b.Nano() - a.Nano()), true
}

// probeSpeed times the work once a second until ctx ends, its last reading in ms (as
// math.Float64bits) to last.
func probeSpeed(ctx context.Context, last *atomic.Uint64) {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression) // a valid level: no error
	probe := func() {
		if d, ok := probeOnce(zw); ok {
			last.Store(math.Float64bits(benchkit.Ms(d)))
		}
	}
	probe()
	benchkit.Every(ctx, time.Second, probe)
}

// speedStats sums up the probe's readings over the sale.
type speedStats struct {
	// The CPU the work took, ms, at the 10th, 50th and 90th percentile of the
	// sale's seconds: P10 is the machine's speed in its fast seconds (the fastest
	// reading alone may be a fluke).
	P10 float64 `json:"p10Ms"`
	P50 float64 `json:"p50Ms"`
	P90 float64 `json:"p90Ms"`
	// Slow is the share of the sale's seconds in which it took more than slowFactor
	// times P10: the machine ran at two thirds of its fast seconds' speed or slower.
	Slow float64 `json:"slowShare"`
}

// slowFactor is how much longer than P10 the work must take for a second to count as
// slow.
const slowFactor = 1.5

// speedOver sums up the probe's readings in the samples from the onsale to end
// (zero: the whole run); nil without any.
func speedOver(timeline []sample, end float64) *speedStats {
	var v []float64
	for _, sm := range timeline {
		if sm.T < 0 || sm.ProbeMs <= 0 || (end > 0 && sm.T > end) {
			continue
		}
		v = append(v, sm.ProbeMs)
	}
	if len(v) == 0 {
		return nil
	}
	slices.Sort(v)
	s := speedStats{P10: benchkit.Quantile(v, .1), P50: benchkit.Quantile(v, .5), P90: benchkit.Quantile(v, .9)}
	slow := 0
	for _, ms := range v {
		if ms > slowFactor*s.P10 {
			slow++
		}
	}
	s.Slow = float64(slow) / float64(len(v))
	return &s
}
