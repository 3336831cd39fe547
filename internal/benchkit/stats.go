package benchkit

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// Rank is the index, in n values sorted in ascending order, of their q-quantile
// (0 < q ≤ 1) by the nearest-rank rule: the smallest value at or above which lies a
// share q of them. Every percentile the lab reports is taken by this rule.
func Rank(n int, q float64) int {
	return max(0, min(n-1, int(math.Ceil(q*float64(n)-1e-9))-1))
}

// Quantile is the q-quantile of sorted, which is not empty (Rank).
func Quantile[T cmp.Ordered](sorted []T, q float64) T { return sorted[Rank(len(sorted), q)] }

// Percentiles sorts d and returns its p50 and p99; zeros when it is empty.
func Percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return Quantile(d, .50), Quantile(d, .99)
}

// Dist is a distribution's percentiles.
type Dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// DistOf sorts v and sums it up; the zero Dist when it is empty.
func DistOf(v []float64) Dist {
	if len(v) == 0 {
		return Dist{}
	}
	slices.Sort(v)
	p := func(q float64) float64 { return Quantile(v, q) }
	return Dist{N: len(v), P50: p(.5), P90: p(.9), P95: p(.95), P99: p(.99), Max: v[len(v)-1]}
}

// Median is the middle of v, or the mean of its two middle values, for a few figures
// (the ratios of a run's rounds) where a value between two is the fairer summary.
func Median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Histogram counts durations in whole milliseconds up to ten seconds (the last bucket
// takes everything longer) from many goroutines at once, for samples too many to
// keep.
type Histogram struct {
	b   [10001]atomic.Int64
	n   atomic.Int64
	max atomic.Int64 // nanoseconds
}

// Add counts d.
func (h *Histogram) Add(d time.Duration) {
	h.b[min(max(int(d/time.Millisecond), 0), len(h.b)-1)].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// N is how many durations were counted.
func (h *Histogram) N() int64 { return h.n.Load() }

// Max is the longest duration counted, in milliseconds.
func (h *Histogram) Max() float64 { return float64(h.max.Load()) / 1e6 }

// Quantile is the q-quantile of the durations counted (Rank), in milliseconds: the
// middle of its bucket; 0 when there are none.
func (h *Histogram) Quantile(q float64) float64 {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	want := int64(Rank(int(n), q)) + 1 // the rank-th duration, counting from 1
	var seen int64
	for i := range h.b {
		if seen += h.b[i].Load(); seen >= want {
			return float64(i) + 0.5
		}
	}
	return float64(len(h.b)) - 0.5
}
