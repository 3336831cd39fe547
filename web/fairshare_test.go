package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/config"
	"boxoffice/internal/metrics"
	"boxoffice/web"
)

// The proof that one address gets no more than its share of an event: a household's
// /64 with five honest buyers in it and a script beside them, which asks for ten seats
// a call in every way a script gets past the buyer limits:
//
//   - a fresh session for every call (GET /api/v1/session, then the hold), exact seats;
//   - no cookie at all, Sec-Fetch-Site: same-origin (a new buyer every call), GA places;
//   - no cookie, best available, from an address rotated within the /64 each call;
//   - no cookie, best available, sent straight to the server by a peer the server does
//     not trust, with a forged X-Forwarded-For naming some other address (the server
//     takes the peer's address);
//   - no cookie, best available, through the CDN edge, with a forged entry before the
//     one the edge adds (the server takes the edge's).
//
// The test's own requests come from loopback and play the trusted CDN edge, which
// names the client in X-Forwarded-For (fromAddress, fromEach); the untrusted peer's requests are
// handed to the server with their RemoteAddr in the /64. Both hold whether loopback
// alone or every private network is trusted for X-Forwarded-For.

// share is the seats the household may hold at once in the proof: the default.
const share = config.DefaultAddressSeatsHeld

// scriptTally counts the script's answers by status and limit.
type scriptTally struct {
	mu       sync.Mutex
	answers  map[string]int
	problems []string
}

func (s *scriptTally) add(status int, raw []byte, h http.Header, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.problems = append(s.problems, err.Error())
		return
	}
	var e struct {
		Error     string `json:"error"`
		Message   string `json:"message"`
		LimitedBy string `json:"limitedBy"`
	}
	_ = json.Unmarshal(raw, &e)
	key := fmt.Sprint(status)
	switch {
	case status == http.StatusCreated, status == http.StatusOK:
	case status == http.StatusConflict:
		key += " " + e.Error
	case status == http.StatusTooManyRequests && e.Error == "rate_limited":
		key += " " + e.LimitedBy
		if h.Get("Retry-After") == "" || e.Message == "" {
			s.problems = append(s.problems, "a 429 without Retry-After or words: "+truncate(raw))
		}
	default:
		s.problems = append(s.problems, fmt.Sprintf("status %d: %s", status, truncate(raw)))
	}
	s.answers[key]++
}

// household is the /64 of the proof; address(i) one address in it.
func household(i uint64) string {
	return fmt.Sprintf("2001:db8:7:7:%x:%x:%x:%x", i>>48&0xffff, i>>32&0xffff, i>>16&0xffff, i&0xffff)
}

// fairShareRun is the proof's scenario with env on top of the test settings: the five
// honest buyers hold two seats each, then buy while the script runs. It returns the
// places the script holds at the end (the event's live holds, the honest ones being
// bought) and its answers.
func fairShareRun(t *testing.T, env map[string]string) (int, map[string]int) {
	t.Helper()
	a := newTestApp(t, func(o *appOptions) { o.Env = env })
	ctx := context.Background()
	all := firstSeats(t, a.Pool, a.EventID, count(t, a.Pool, `SELECT count(*) FROM seats WHERE event_id = $1`, a.EventID))
	tier := count(t, a.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, a.EventID)
	holds := "/api/v1/events/" + itoa(a.EventID) + "/holds"

	honest := make([]*client, 5)
	held := make([]web.HoldJSON, 5)
	for i := range honest {
		honest[i] = a.newClientVia(t, at(household(uint64(i+1))), 30*time.Second)
		held[i] = honest[i].hold(a.EventID, all[2*i], all[2*i+1])
	}

	tally := &scriptTally{answers: map[string]int{}}
	rotating := fromEach(func() string { return household(rand.Uint64()) })
	noCookie := http.Header{"Sec-Fetch-Site": {"same-origin"}}
	// The server as a peer reaches it straight, not through the edge: the same program
	// (its Redis, its database), its metrics left to the one the edge reaches.
	deps := a.App.WebDeps()
	deps.Metrics = metrics.New() // a registry of its own: the HTTP series register once per registry
	peer, err := web.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	const loops, calls = 2, 15
	scripts := []func(loop, call int){
		func(loop, call int) { // a fresh session for each call, exact seats from the far end
			jar, _ := cookiejar.New(nil)
			c := &client{t: t, http: &http.Client{Jar: jar, Transport: rotating, Timeout: 30 * time.Second}, base: a.URL}
			st, raw, h, err := c.send(ctx, "GET", "/api/v1/session", nil, nil)
			if err != nil || st != http.StatusOK {
				tally.add(st, raw, h, err)
				return
			}
			var s web.SessionJSON
			_ = json.Unmarshal(raw, &s)
			c.csrf = s.CSRFToken
			end := len(all) - 10*(loop*calls+call)
			tally.add(c.send(ctx, "POST", holds, map[string]any{"seatIds": all[end-10 : end]}, nil))
		},
		func(int, int) { // no cookie, GA places
			c := &client{t: t, http: &http.Client{Transport: rotating, Timeout: 30 * time.Second}, base: a.URL}
			tally.add(c.send(ctx, "POST", holds, map[string]any{"gaTierId": tier, "quantity": 10}, noCookie))
		},
		func(int, int) { // no cookie, best available
			c := &client{t: t, http: &http.Client{Transport: rotating, Timeout: 30 * time.Second}, base: a.URL}
			tally.add(c.send(ctx, "POST", holds, map[string]any{"quantity": 10}, noCookie))
		},
		func(int, int) { // an untrusted peer with a forged X-Forwarded-For
			req := httptest.NewRequestWithContext(ctx, "POST", holds, strings.NewReader(`{"quantity": 10}`))
			req.RemoteAddr = "[" + household(rand.Uint64()) + "]:40000"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", rand.IntN(250)+1))
			rec := httptest.NewRecorder()
			peer.ServeHTTP(rec, req)
			tally.add(rec.Code, rec.Body.Bytes(), rec.Header(), nil)
		},
		func(int, int) { // a forged entry before the edge's
			forged := fromEach(func() string { return fmt.Sprintf("198.51.100.%d, %s", rand.IntN(250)+1, household(rand.Uint64())) })
			c := &client{t: t, http: &http.Client{Transport: forged, Timeout: 30 * time.Second}, base: a.URL}
			tally.add(c.send(ctx, "POST", holds, map[string]any{"quantity": 10}, noCookie))
		},
	}
	var wg sync.WaitGroup
	for _, script := range scripts {
		for loop := range loops {
			wg.Go(func() {
				for call := range calls {
					script(loop, call)
				}
			})
		}
	}
	defer wg.Wait() // before the server closes, should the honest buyers fail the test

	// Meanwhile the honest buyers buy what they hold.
	for i, c := range honest {
		co := c.checkout(held[i].HoldID)
		c.pay(co.OrderID, "")
		if o := waitOrder(t, c, co.OrderID, booking.StatusConfirmed); len(o.Tickets) != 2 {
			t.Errorf("honest buyer %d: got %d tickets, want 2", i+1, len(o.Tickets))
		}
	}
	wg.Wait()
	if len(tally.problems) > 0 {
		t.Errorf("the script got %d answers that are no refusal of an onsale: %v", len(tally.problems), tally.problems[:min(5, len(tally.problems))])
	}
	places := count(t, a.Pool, `SELECT
		(SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NULL AND held_by IS NOT NULL AND hold_expires_at > now())
		+ (SELECT coalesce(sum(ga_quantity), 0) FROM holds
		   WHERE event_id = $1 AND released_at IS NULL AND sold_at IS NULL AND expires_at > now())`, a.EventID)
	t.Logf("the script holds %d places; its answers: %v", places, tally.answers)
	return places, tally.answers
}

// TestFairShare: with the limits per address at their defaults, the script holds no
// more than the household's share, while the five honest buyers there each buy.
func TestFairShare(t *testing.T) {
	t.Parallel()
	places, answers := fairShareRun(t, map[string]string{
		"ADDRESS_SESSIONS_PER_HOUR": "", "ADDRESS_JOINS_PER_HOUR": "", "ADDRESS_HOLDS_PER_MINUTE": "", "ADDRESS_SEATS_HELD": "",
	})
	if places > share {
		t.Errorf("the script holds %d places, want at most the address's share of %d", places, share)
	}
	if answers["429 "+web.LimitedBySeats] == 0 {
		t.Errorf("the script was never refused for the seats held at once (%v): the share was not reached", answers)
	}
}

// TestFairShareNegativeControl: the same with the limits per address off. The script
// then holds many times the share: the test above catches a hoarding script.
func TestFairShareNegativeControl(t *testing.T) {
	t.Parallel()
	places, _ := fairShareRun(t, nil) // the test settings: the limits per address off
	if places <= 4*share {
		t.Errorf("limits off: the script holds %d places, want more than %d (4 times the share)", places, 4*share)
	}
}
