// Package latency says how hard the application is working, as the admitted buyers feel
// it: how long the steps of the sale take (a hold, a checkout, a payment). The waiting
// room reads it to admit no faster than the application answers within its bound
// (waitroom.Hooks.Load): a machine of unknown speed, or one shared with other work, is
// kept below saturation by what it measures, not by a rate guessed in advance.
//
// Only the sale's steps count, because they are what the admission rate governs. The
// waiting pages' waits for a look slot do not: those follow the waiting crowd (its
// arrival, the draw), which admitting fewer does not shrink, and counted they would
// hold the room at a fifth of its rate through the arrival burst for nothing.
//
// The figure is the 95th percentile over the last few seconds, as a share of the bound:
// the tail, because that is where saturation shows first (queues form before the
// median moves), and a short window, because the room must hear of it within seconds.
//
// It imports only the standard library: web feeds it, and the composition root hands
// its Level to the waiting room, the job queue and the metrics.
package latency

import (
	"slices"
	"sync"
	"time"
)

// Window is how far back Level looks.
const Window = 5 * time.Second

// minSamples is how many steps Level needs in its window to say anything: a handful
// of slow answers out of a handful is not a tail.
const minSamples = 20

// ringSize bounds the samples kept: several seconds' worth at an onsale's
// rate of steps (hundreds a second), and a fixed cost whatever the crowd.
const ringSize = 4096

// Meter gathers the samples. Its methods are safe for concurrent use and do nothing
// on a nil Meter, which reads as no load.
type Meter struct {
	bound     time.Duration
	now       func() time.Time // the clock (tests)
	steps     ring
	scratchMu sync.Mutex
	scratch   []time.Duration
}

// New returns a Meter whose Level is 1 at bound. With a bound of 0 or less (no
// latency bound) its Level is always 0, but it still counts the steps: whether a sale
// is on (Active) does not depend on how fast it is meant to go.
func New(bound time.Duration) *Meter {
	return &Meter{bound: max(bound, 0), now: time.Now}
}

// Step notes that a step of the sale took d, from the request's arrival to its answer.
func (m *Meter) Step(d time.Duration) {
	if m != nil {
		m.steps.add(m.now(), d)
	}
}

// Level is the steps' 95th percentile over the last Window, as a share of the bound:
// below 1 the application answers within it, at 1 or more it does not. 0 with fewer
// than minSamples steps in the window: nothing to tell.
func (m *Meter) Level() float64 {
	if m == nil || m.bound == 0 {
		return 0
	}
	since := m.now().Add(-Window)
	m.scratchMu.Lock()
	defer m.scratchMu.Unlock()
	m.scratch = m.steps.since(since, m.scratch[:0])
	if len(m.scratch) < minSamples {
		return 0
	}
	slices.Sort(m.scratch)
	p95 := m.scratch[(len(m.scratch)*95+99)/100-1] // nearest rank
	return float64(p95) / float64(m.bound)
}

// Active says whether a sale is on: minSamples steps or more in the last Window,
// whatever they took. A box office's walk-up sales and a quiet day's buyers are
// fewer.
func (m *Meter) Active() bool {
	if m == nil {
		return false
	}
	return m.steps.count(m.now().Add(-Window), minSamples) >= minSamples
}

// Seen is how many steps the Meter has been told of in all.
func (m *Meter) Seen() int64 {
	if m == nil {
		return 0
	}
	return m.steps.seen()
}

// ring keeps the last ringSize samples.
type ring struct {
	mu    sync.Mutex
	at    [ringSize]time.Time
	d     [ringSize]time.Duration
	next  int   // where the next sample goes
	n     int   // samples kept, up to ringSize
	total int64 // samples added in all
}

func (r *ring) add(at time.Time, d time.Duration) {
	r.mu.Lock()
	r.at[r.next], r.d[r.next] = at, d
	r.next = (r.next + 1) % ringSize
	r.n = min(r.n+1, ringSize)
	r.total++
	r.mu.Unlock()
}

func (r *ring) seen() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// count is how many samples were taken after t, counting up to most.
func (r *ring) count(t time.Time, most int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k := 1; k <= r.n && n < most; k++ {
		if !r.at[(r.next-k+ringSize)%ringSize].After(t) {
			break
		}
		n++
	}
	return n
}

// since appends to out the samples taken after t, newest first.
func (r *ring) since(t time.Time, out []time.Duration) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := 1; k <= r.n; k++ {
		i := (r.next - k + ringSize) % ringSize
		if !r.at[i].After(t) {
			break
		}
		out = append(out, r.d[i])
	}
	return out
}
