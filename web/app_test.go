package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/apptest"
	"boxoffice/internal/booking"
	"boxoffice/internal/payment"
	"boxoffice/web"
)

const testSecret = apptest.WebhookSecret

// testApp is the whole program on a fresh database and Redis prefix, built by the
// production composition root (internal/app, handler and all) and served by httptest.
type testApp struct {
	URL      string
	Pool     *pgxpool.Pool
	Booking  *booking.Services
	Provider *payment.TestProvider
	Redis    redis.UniversalClient
	Prefix   string
	EventID  int64 // the demo event: ~2,000 seats and a GA tier
	App      *apptest.Program
	cheap    *sync.Once // staff password hashing made cheap (admin_helpers_test.go)
}

type appOptions = apptest.Options

// newTestApp starts the server. opts may change the settings or the database URL.
func newTestApp(t *testing.T, opts ...func(*appOptions)) *testApp {
	t.Helper()
	var o appOptions
	for _, f := range opts {
		f(&o)
	}
	if testing.Verbose() && o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	p := apptest.New(t, o)
	return &testApp{URL: p.Serve(t), Pool: p.Pool, Booking: p.Booking, Provider: p.Payments, Redis: p.Redis,
		Prefix: p.Prefix, EventID: p.EventID, App: p, cheap: new(sync.Once)}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// client is one buyer: its own cookie jar (so its own session) and CSRF token.
type client struct {
	t    testing.TB
	http *http.Client
	base string
	csrf string
}

// newClient starts a session and fetches its CSRF token.
func (a *testApp) newClient(t testing.TB) *client {
	t.Helper()
	return a.newClientVia(t, nil, 30*time.Second)
}

// newClientVia is newClient over a given transport (nil: the default one) and with a
// given client timeout, for tests that run many clients at once or must see a hang as
// a failure.
func (a *testApp) newClientVia(t testing.TB, rt http.RoundTripper, timeout time.Duration) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, http: &http.Client{Jar: jar, Timeout: timeout, Transport: rt}, base: a.URL}
	var s struct {
		CSRFToken string `json:"csrfToken"`
	}
	if status := c.do("GET", "/api/v1/session", nil, &s); status != http.StatusOK || s.CSRFToken == "" {
		t.Fatalf("GET /api/v1/session: status %d, token %q", status, s.CSRFToken)
	}
	c.csrf = s.CSRFToken
	return c
}

// do sends a request with the session's cookies and CSRF token; body is JSON-encoded
// unless it is a string or []byte. out, if not nil, receives the decoded answer.
func (c *client) do(method, path string, body any, out any) int {
	c.t.Helper()
	status, raw, _ := c.raw(method, path, body, nil)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: answer %d is not JSON: %q", method, path, status, raw)
		}
	}
	return status
}

// raw sends a request and returns the status, the body and the headers.
func (c *client) raw(method, path string, body any, header http.Header) (int, []byte, http.Header) {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading answer: %v", method, path, err)
	}
	return resp.StatusCode, raw, resp.Header
}

// TestEndToEnd buys two seats and two GA places through the API: hold, checkout, pay,
// webhook, tickets.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	var m web.SeatMapJSON
	if st := c.do("GET", "/api/v1/events/"+itoa(app.EventID)+"/seatmap", nil, &m); st != 200 || len(m.Seats) < 1000 || len(m.GATiers) != 1 {
		t.Fatalf("seatmap: status %d, %d seats, %d GA tiers", st, len(m.Seats), len(m.GATiers))
	}
	var h web.HoldJSON
	if st := c.do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"seatIds": []int64{m.Seats[0].ID, m.Seats[1].ID}}, &h); st != 201 {
		t.Fatalf("hold: got status %d, want 201", st)
	}
	var co web.CheckoutAnswerJSON
	if st := c.do("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "ada@example.com"}, &co); st != 201 {
		t.Fatalf("checkout: got status %d, want 201", st)
	}
	if want := m.Seats[0].PriceCents + m.Seats[1].PriceCents; co.AmountCents != want {
		t.Errorf("amount: got %d, want %d", co.AmountCents, want)
	}
	if st := c.do("POST", "/api/v1/orders/"+itoa(co.OrderID)+"/pay", map[string]string{"card": "4242 4242 4242 4242"}, nil); st != 202 {
		t.Fatalf("pay: got status %d, want 202", st)
	}
	o := waitOrder(t, c, co.OrderID, booking.StatusConfirmed)
	if len(o.Tickets) != 2 || o.Tickets[0].Code == o.Tickets[1].Code || len(o.Tickets[0].Code) < 20 {
		t.Errorf("tickets: got %+v, want two with distinct long codes", o.Tickets)
	}
}

// waitOrder polls the order until it has the wanted status, with a deadline.
func waitOrder(t testing.TB, c *client, id int64, want string) web.OrderJSON {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var o web.OrderJSON
	for {
		if st := c.do("GET", "/api/v1/orders/"+itoa(id), nil, &o); st != 200 {
			t.Fatalf("order %d: got status %d", id, st)
		}
		if o.Status == want {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %d: status %q, want %q", id, o.Status, want)
		}
		time.Sleep(20 * time.Millisecond) // polling, as a client does: the webhook is asynchronous
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
