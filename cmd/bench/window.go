package main

import (
	"context"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"boxoffice/internal/benchkit"
)

// timing is a measurement's warm-up, from start to warmEnd, and its measured window,
// from warmEnd to end.
type timing struct{ start, warmEnd, end time.Time }

func newTiming(o options) timing {
	start := time.Now()
	return timing{start: start, warmEnd: start.Add(o.warmup), end: start.Add(o.warmup + o.duration)}
}

// call is one request of a client, as its tally counts it.
type call struct {
	status, want int
	err          error
	key          string // the answer's "status code" when it is not the one wanted
	body         []byte
	sent, done   time.Time
}

// drive runs o.clients clients until the window ends: client(i) returns client i's
// next call each time it is called, or false when the client has nothing more to do.
// The calls answered inside the measured window are tallied, and the window's CPU,
// profile and round trips measured alongside.
func drive(ctx context.Context, srv *server, o options, tm timing, profile string, client func(i int) func() (call, bool)) (tally, windowResult, error) {
	tallies := make([]tally, o.clients)
	var wg sync.WaitGroup
	for i := range o.clients {
		next := client(i)
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(tm.end) {
				c, ok := next()
				if !ok {
					return
				}
				if !c.done.Before(tm.warmEnd) && !c.done.After(tm.end) {
					tallies[i].record(c)
				}
			}
		})
	}
	win := startWindow(ctx, srv, o, profile, tm.warmEnd, tm.end)
	wg.Wait()
	w := win.finish()
	var all tally
	for i := range tallies {
		all.add(&tallies[i])
	}
	return all, w, w.err
}

// windowResult is what a window measured besides the answers.
type windowResult struct {
	cpu     benchkit.CPUUse
	queries *queryReport
	err     error
}

// window measures what happens between from and to while the load runs: CPU use, an
// optional CPU profile, and the round trips counted by the tracer.
type window struct {
	done chan struct{}
	res  windowResult
}

func startWindow(ctx context.Context, srv *server, o options, profile string, from, to time.Time) *window {
	w := &window{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		if !benchkit.SleepUntil(ctx, from) {
			w.res.err = ctx.Err()
			return
		}
		meter := benchkit.StartCPUMeter(ctx, srv.backends(serverApp))
		snap0 := srv.trace.snapshot()
		var prof *os.File
		if o.cpuProfile != "" {
			var err error
			if prof, err = os.Create(o.cpuProfile + profile + ".pprof"); err != nil {
				w.res.err = err
			} else if err := pprof.StartCPUProfile(prof); err != nil {
				w.res.err = err
				prof.Close()
				prof = nil
			}
		}
		benchkit.SleepUntil(ctx, to)
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
		w.res.queries = srv.trace.snapshot().since(snap0)
		w.res.cpu = meter.Stop(0)
	}()
	return w
}

// finish waits for the window to end and returns what it measured.
func (w *window) finish() windowResult {
	<-w.done
	return w.res
}
