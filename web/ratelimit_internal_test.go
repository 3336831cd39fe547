package web

import (
	"log/slog"
	"strconv"
	"testing"

	"boxoffice/internal/dbtest"
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

// TestRateLimitOnRedisCluster: on a three-primary Redis Cluster, two instances'
// limiters share each buyer's allowance, for buyers whose keys live on different
// primaries. The limiter lets calls through when Redis fails, so a call the cluster
// refused would show as too many allowed, not as an error.
func TestRateLimitOnRedisCluster(t *testing.T) {
	t.Parallel()
	rdb := dbtest.StartRedisCluster(t).Client(t)
	log := slog.New(slog.DiscardHandler)
	one := newRateLimiter(rdb, "test:", 1, 4, log)
	two := newRateLimiter(rdb, "test:", 1, 4, log)
	nodes := map[string]bool{}
	for b := range 6 {
		key := "b:buyer" + strconv.Itoa(b)
		node, err := rdb.MasterForKey(t.Context(), "rate:"+one.prefix+key)
		if err != nil {
			t.Fatal(err)
		}
		nodes[node.Options().Addr] = true
		allowed := 0
		for i := range 10 {
			l := one
			if i%2 == 1 {
				l = two
			}
			if _, ok := l.allow(t.Context(), key, l.limit); ok {
				allowed++
			}
		}
		if allowed < 4 || allowed > 5 {
			t.Errorf("%s: got %d of 10 calls allowed across two instances, want the burst of 4", key, allowed)
		}
	}
	if len(nodes) < 2 {
		t.Errorf("got the buyers' keys on %d primaries, want them spread", len(nodes))
	}
}
