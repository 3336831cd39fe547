package web_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// noRateLimit raises the per-buyer limit out of the way, for tests that send many seat
// calls from one session on purpose.
func noRateLimit(o *appOptions) {
	if o.Env == nil {
		o.Env = map[string]string{}
	}
	o.Env["RATE_LIMIT"], o.Env["RATE_BURST"] = "100000", "100000"
}

// TestRateLimit: one buyer's seat calls beyond the burst get 429 rate_limited with
// Retry-After; another buyer is not affected.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, func(o *appOptions) { o.Env = map[string]string{"RATE_LIMIT": "1", "RATE_BURST": "3"} })
	c, other := a.newClient(t), a.newClient(t)
	path := "/api/v1/events/" + itoa(a.EventID) + "/holds"
	limited := 0
	var retry string
	for range 6 {
		st, raw, h := c.raw("POST", path, map[string]any{}, nil) // a bad request still counts
		if st == http.StatusTooManyRequests {
			if e, _ := parseError(raw); e.Error != "rate_limited" {
				t.Errorf("429: got %q, want rate_limited", e.Error)
			}
			limited, retry = limited+1, h.Get("Retry-After")
		}
	}
	if limited < 2 {
		t.Errorf("6 calls at once with burst 3: %d limited, want at least 2", limited)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 {
		t.Errorf("Retry-After: got %q, want whole seconds", retry)
	}
	if st, _, _ := other.raw("POST", path, map[string]any{}, nil); st != http.StatusBadRequest {
		t.Errorf("another buyer: got %d, want 400 (not limited)", st)
	}
}

// TestRateLimitFailsOpen: with Redis gone the limiter lets every call through, at once:
// a rate limiter never stops sales.
func TestRateLimitFailsOpen(t *testing.T) {
	t.Parallel()
	proxy, viaProxy := redisProxy(t)
	a := newTestApp(t, func(o *appOptions) {
		viaProxy(o)
		o.Env["RATE_LIMIT"], o.Env["RATE_BURST"] = "1", "1"
	})
	c := a.newClient(t)
	proxy.Down()
	path := "/api/v1/events/" + itoa(a.EventID) + "/holds"
	start := time.Now()
	for i := range 5 {
		if st, _, _ := c.raw("POST", path, map[string]any{}, nil); st != http.StatusBadRequest {
			t.Errorf("call %d with Redis gone: got %d, want 400 (let through)", i, st)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("5 calls with Redis gone took %v, want no waiting on it", took)
	}
	seat := firstSeats(t, a.Pool, a.EventID, 1)[0]
	c.hold(a.EventID, seat)
}
