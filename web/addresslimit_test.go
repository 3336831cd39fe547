package web_test

import (
	"boxoffice/web"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fromEach sends each request as the CDN edge in front does for a client at the
// address it returns at that moment: from loopback, which is trusted, naming the
// client in X-Forwarded-For (fromAddress, for one address at a time).
type fromEach func() string

func (f fromEach) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f())
	return http.DefaultTransport.RoundTrip(r)
}

// at is a client at addr.
func at(addr string) *fromAddress { return &fromAddress{addr: addr} }

// wantLimited fails t unless the answer is a 429 rate_limited by the limit named, with
// a Retry-After of whole seconds within maxWait and words that name the connection.
func wantLimited(t *testing.T, what string, st int, raw []byte, h http.Header, by string, maxWait int) {
	t.Helper()
	var e struct {
		errorBody
		LimitedBy string `json:"limitedBy"`
	}
	if st != http.StatusTooManyRequests {
		t.Errorf("%s: got status %d, want 429; answer %s", what, st, truncate(raw))
		return
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Error != "rate_limited" || e.LimitedBy != by {
		t.Errorf("%s: got %s, want rate_limited by %s", what, truncate(raw), by)
	}
	if !strings.Contains(e.Message, "your internet connection") {
		t.Errorf("%s: message %q does not say what was counted", what, e.Message)
	}
	if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 || n > maxWait {
		t.Errorf("%s: Retry-After %q, want 1 to %d seconds", what, h.Get("Retry-After"), maxWait)
	}
}

// limitApp is the program with one limit per address on (name=value).
func limitApp(t *testing.T, name, value string) *testApp {
	t.Helper()
	return newTestApp(t, func(o *appOptions) { o.Env = map[string]string{name: value} })
}

// TestAddressLimits: each limit per address refuses what passes it with 429 and words
// for people, counts an IPv6 /64 as one address, and leaves other addresses alone.
func TestAddressLimits(t *testing.T) {
	t.Parallel()
	home := func(i int) *fromAddress { return at(fmt.Sprintf("2001:db8:aa:1:%x::%x", i, i+1)) } // one /64
	const neighbour = "2001:db8:aa:2::1"                                                        // the next /64

	t.Run("new sessions", func(t *testing.T) {
		t.Parallel()
		a := limitApp(t, "ADDRESS_SESSIONS_PER_HOUR", "3")
		first := a.newClientVia(t, home(0), 30*time.Second)
		for i := 1; i < 3; i++ {
			a.newClientVia(t, home(i), 30*time.Second)
		}
		fresh := &client{t: t, http: &http.Client{Transport: home(3)}, base: a.URL}
		st, raw, h := fresh.raw("GET", "/api/v1/session", nil, nil)
		wantLimited(t, "a 4th session", st, raw, h, web.LimitedBySessions, 3600)
		// A request without the cookie is a new session every time.
		st, raw, h = fresh.raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/holds", map[string]any{"quantity": 1},
			http.Header{"Sec-Fetch-Site": {"same-origin"}})
		wantLimited(t, "a hold without a session cookie", st, raw, h, web.LimitedBySessions, 3600)
		// The sessions there are go on; other addresses start theirs.
		first.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 1)...)
		a.newClientVia(t, at(neighbour), 30*time.Second)
		a.newClientVia(t, at("198.51.100.7"), 30*time.Second)
	})

	t.Run("queue joins", func(t *testing.T) {
		t.Parallel()
		a := limitApp(t, "ADDRESS_JOINS_PER_HOUR", "3")
		roomOn(t, a, a.EventID, 1, 1, time.Minute)
		path := "/api/v1/events/" + itoa(a.EventID) + "/queue"
		for i := range 3 {
			if st := a.newClientVia(t, home(i), 30*time.Second).do("POST", path, nil, nil); st != http.StatusOK {
				t.Fatalf("join %d: got status %d, want 200", i+1, st)
			}
		}
		st, raw, h := a.newClientVia(t, home(3), 30*time.Second).raw("POST", path, nil, nil)
		wantLimited(t, "a 4th join", st, raw, h, web.LimitedByJoins, 3600)
		if st := a.newClientVia(t, at(neighbour), 30*time.Second).do("POST", path, nil, nil); st != http.StatusOK {
			t.Errorf("a join from another address: got status %d, want 200", st)
		}
	})

	t.Run("hold calls", func(t *testing.T) {
		t.Parallel()
		a := limitApp(t, "ADDRESS_HOLDS_PER_MINUTE", "3")
		seats := firstSeats(t, a.Pool, a.EventID, 5)
		c := a.newClientVia(t, home(0), 30*time.Second)
		for _, id := range seats[:3] {
			c.hold(a.EventID, id)
		}
		st, raw, h := a.newClientVia(t, home(1), 30*time.Second).raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/holds",
			map[string]any{"seatIds": seats[3:4]}, nil)
		wantLimited(t, "a 4th hold call", st, raw, h, web.LimitedByHolds, 60)
		if !seatFree(t, a.Pool, a.EventID, seats[3]) {
			t.Errorf("seat %d: got held by a refused call, want free", seats[3])
		}
		a.newClientVia(t, at(neighbour), 30*time.Second).hold(a.EventID, seats[4])
	})

	t.Run("seats held at once", func(t *testing.T) {
		t.Parallel()
		a := limitApp(t, "ADDRESS_SEATS_HELD", "10")
		seats := firstSeats(t, a.Pool, a.EventID, 12)
		first := a.newClientVia(t, home(0), 30*time.Second)
		h := first.hold(a.EventID, seats[:10]...)
		second := a.newClientVia(t, home(1), 30*time.Second)
		st, raw, hdr := second.raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/holds", map[string]any{"quantity": 1}, nil)
		wantLimited(t, "an 11th seat from the address", st, raw, hdr, web.LimitedBySeats, 600)

		// The seat page says it in words, with the status.
		b := a.newBrowser(t)
		b.http.Transport = home(2)
		_, token := b.page("/events/demo-night/seats")
		st, body, _ := b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "seat": {itoa(seats[10])}}, nil)
		text := parseHTML(t, body).Text()
		if st != http.StatusTooManyRequests || !strings.Contains(text, "held from your internet connection") {
			t.Errorf("seat page: got status %d, want 429 saying the connection holds its most", st)
		}

		a.newClientVia(t, at(neighbour), 30*time.Second).hold(a.EventID, seats[10])
		if st := first.do("DELETE", "/api/v1/holds/"+h.HoldID, nil, nil); st != http.StatusNoContent {
			t.Fatalf("release: got status %d, want 204", st)
		}
		second.hold(a.EventID, seats[11])
	})
}
