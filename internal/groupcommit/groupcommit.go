// Package groupcommit runs small writes that arrive together as one statement: the
// writes that arrive while one batch is in flight wait for it to end and then go
// together, as the next batch. Alone, a write goes at once; batching never waits for
// company. At an onsale hundreds of such writes a second (new sessions, the API's
// Idempotency-Keys) would each take a pooled connection, a round trip and a commit
// from the sale's steps; gathered, they take one of each per batch.
//
// It imports only the standard library: what a batch does is the caller's Run.
package groupcommit

import (
	"context"
	"sync"
	"time"
)

// Writer gathers calls of Do into batches for Run. Its zero value with Run set is
// ready; safe for concurrent use.
type Writer[In, Out any] struct {
	// Run writes one batch, in the order its calls came, and returns one result a
	// call, in the same order, or an error for them all. It runs on no request's
	// context (the batch is not any one request's), under ctx bounded by Timeout.
	Run func(ctx context.Context, batch []In) ([]Out, error)
	// Max bounds the calls one batch takes; 0: 1,000.
	Max int
	// Timeout bounds one batch's Run; 0: 10 s.
	Timeout time.Duration

	mu      sync.Mutex
	pending []*call[In, Out]
	running bool // a goroutine is writing the pending calls
	calls   int
	batches int
}

// Stats are a Writer's counts so far, and the calls waiting now.
type Stats struct {
	Calls, Batches, Waiting int
}

type call[In, Out any] struct {
	in   In
	out  Out
	err  error
	done chan struct{}
}

// Do adds in to the next batch and returns its result once the batch is written, or
// ctx's error if ctx ends first (the write may still land).
func (w *Writer[In, Out]) Do(ctx context.Context, in In) (Out, error) {
	c := &call[In, Out]{in: in, done: make(chan struct{})}
	w.mu.Lock()
	w.calls++
	w.pending = append(w.pending, c)
	lead := !w.running
	w.running = true
	w.mu.Unlock()
	if lead {
		go w.writeAll()
	}
	select {
	case <-c.done:
		return c.out, c.err
	case <-ctx.Done():
		var zero Out
		return zero, ctx.Err()
	}
}

// Stats returns the calls and batches so far and the calls waiting now.
func (w *Writer[In, Out]) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{Calls: w.calls, Batches: w.batches, Waiting: len(w.pending)}
}

// writeAll runs the pending calls, batch after batch, until none are left.
func (w *Writer[In, Out]) writeAll() {
	limit := w.Max
	if limit <= 0 {
		limit = 1000
	}
	for {
		w.mu.Lock()
		batch := w.pending
		if len(batch) > limit {
			batch = batch[:limit:limit]
		}
		w.pending = w.pending[len(batch):]
		if len(batch) == 0 {
			w.pending = nil
			w.running = false
			w.mu.Unlock()
			return
		}
		w.batches++
		w.mu.Unlock()
		w.run(batch)
	}
}

// run writes one batch and answers its calls.
func (w *Writer[In, Out]) run(batch []*call[In, Out]) {
	ins := make([]In, len(batch))
	for i, c := range batch {
		ins[i] = c.in
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	outs, err := w.Run(ctx, ins)
	cancel()
	for i, c := range batch {
		switch {
		case err != nil:
			c.err = err
		case i < len(outs):
			c.out = outs[i]
		}
		close(c.done)
	}
}
