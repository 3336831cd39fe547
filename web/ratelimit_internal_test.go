package web

import (
	"boxoffice/internal/dbtest"
	"log/slog"
	"testing"
)

// TestRateLimitAcrossInstances: two instances' limiters on one Redis share a buyer's
// allowance: calls spread over both are limited as if they went to one. (Each
// instance keeping its own count would let a buyer through twice as often.)
func TestRateLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	log := slog.New(slog.DiscardHandler)
	one := newRateLimiter(rdb, prefix, 1, 4, log)
	two := newRateLimiter(rdb, prefix, 1, 4, log)
	allowed := 0
	for i := range 10 { // alternately, as a load balancer would send them
		l := one
		if i%2 == 1 {
			l = two
		}
		if _, ok := l.allow(t.Context(), "b:ann", l.limit); ok {
			allowed++
		}
	}
	// A burst of 4 at 1 a second: 4 (or 5 if a second passed) of the 10, not 8.
	if allowed < 4 || allowed > 5 {
		t.Errorf("got %d of 10 calls allowed across two instances, want the burst of 4 (one shared allowance)", allowed)
	}
}
