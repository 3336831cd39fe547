package web_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
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

// limitedViaProxy is an app whose Redis is behind a proxy, with a limit of one seat
// call a second and a burst of one, a buyer's client, and the holds' path (an empty
// body is a 400 when let through).
func limitedViaProxy(t *testing.T) (*testApp, *dbtest.Proxy, *client, string) {
	t.Helper()
	proxy, viaProxy := redisProxy(t)
	a := newTestApp(t, func(o *appOptions) {
		viaProxy(o)
		o.Env["RATE_LIMIT"], o.Env["RATE_BURST"] = "1", "1"
	})
	return a, proxy, a.newClient(t), "/api/v1/events/" + itoa(a.EventID) + "/holds"
}

// TestRateLimitFailsOpen: with Redis gone the limiter lets every call through, at once:
// a rate limiter never stops sales.
func TestRateLimitFailsOpen(t *testing.T) {
	t.Parallel()
	a, proxy, c, path := limitedViaProxy(t)
	proxy.Down()
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

// TestRateLimitWaitsForASlowRedis: a Redis that answers, late (each answer 300 ms
// after it came, as at an onsale whose machine has every core busy), still limits:
// past the burst a call is refused, not let through. With the limiter's Redis call
// bounded at 100 ms (the negative control) the late answers opened it.
func TestRateLimitWaitsForASlowRedis(t *testing.T) {
	t.Parallel()
	_, proxy, c, path := limitedViaProxy(t)
	if st, _, _ := c.raw("POST", path, map[string]any{}, nil); st != http.StatusBadRequest {
		t.Fatalf("the first call: got %d, want 400 (let through)", st)
	}
	time.Sleep(time.Second) // the bucket full again
	proxy.Slow(300 * time.Millisecond)
	answers := map[int]int{}
	for range 3 {
		st, _, _ := c.raw("POST", path, map[string]any{}, nil)
		answers[st]++
	}
	if answers[http.StatusTooManyRequests] == 0 || answers[http.StatusBadRequest] != 1 {
		t.Errorf("3 calls at once with Redis answering late, burst 1: got %v, want the first let through (400) and the rest rate_limited (429)", answers)
	}
}

// TestRateLimitBeforeAdmission: the limit's verdict, asked while the admission check
// reads the room, comes first. With the room on, a session not admitted hears
// rate_limited past the burst and not_admitted before it; an admitted one past the
// burst holds nothing (its handler never runs).
func TestRateLimitBeforeAdmission(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue, func(o *appOptions) {
		if o.Env == nil {
			o.Env = map[string]string{}
		}
		o.Env["RATE_LIMIT"], o.Env["RATE_BURST"] = "1", "3"
	})
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	seats := firstSeats(t, a.Pool, a.EventID, 6)

	out := a.newClient(t)
	answers := map[string]int{}
	for _, seat := range seats {
		_, e, _ := holdStatus(out, a.EventID, seat, nil)
		answers[e.Error]++
	}
	if answers["rate_limited"] < 2 || answers["not_admitted"] < 3 || len(answers) != 2 {
		t.Errorf("6 holds at once, not admitted, burst 3: got %v, want not_admitted for the first 3 and rate_limited for 2 or more of the rest", answers)
	}

	in := a.newClient(t)
	if q := in.queue("POST", a.EventID); !q.Admitted {
		t.Fatalf("joining: got %+v, want admitted", q)
	}
	created, limited := 0, 0
	for _, seat := range seats {
		switch st, e, _ := holdStatus(in, a.EventID, seat, nil); {
		case st == http.StatusCreated:
			created++
		case e.Error == "rate_limited":
			limited++
		default:
			t.Errorf("an admitted hold: got %d %q, want 201 or 429 rate_limited", st, e.Error)
		}
	}
	held := count(t, a.Pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND seat_is_held(seats)`, a.EventID)
	if limited < 2 || held != created {
		t.Errorf("6 holds at once, admitted, burst 3: %d held, %d created, %d rate limited; want 2 or more limited and only the created held",
			held, created, limited)
	}
}
