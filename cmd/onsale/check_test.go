package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"boxoffice/internal/apptest"
	"boxoffice/internal/benchkit"
)

// TestSettleCountsAnUnansweredPay: a buyer's pay call went out and its answer never
// came (the time limit cut it), and the order is confirmed after the buying, when its
// webhook comes. The check reads such an order again after the buying until it
// settles, so the seats it bought on the final map are the seats of the confirmed
// orders read. Controls: read once, as an order never paid for is, the same
// confirmation leaves a seat sold on the map that no order read holds, and the check
// says so; and a sold seat whose order no buyer has is caught.
func TestSettleCountsAnUnansweredPay(t *testing.T) {
	t.Parallel()
	p, base := servedProgram(t, true)
	s := testSim(p.EventID, config{Keys: true})
	b := sessionBuyer(t, s, base)
	buyers := []*buyer{b}
	ctx := t.Context()

	var h holdJSON
	mustCall(t, b, "hold", http.MethodPost, "/api/v1/events/"+s.eventPath+"/holds", map[string]any{"quantity": 1}, &h)
	var co checkoutJSON
	mustCall(t, b, "checkout", http.MethodPost, "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "ada@example.com"}, &co)
	b.orderID = co.OrderID
	// The charge is taken and its webhook held back until Resend: the order stays
	// pending meanwhile, as one whose buyer's time ran out before the answer.
	mustCall(t, b, "pay", http.MethodPost, "/api/v1/orders/"+strconv.FormatInt(co.OrderID, 10)+"/pay",
		map[string]string{"card": cardGood, "delivery": "none"}, nil)

	readOnce := s.settle(ctx, buyers) // b neither paid nor unanswered, as far as settle knows
	if o := readOnce[0]; o.Status != "pending" {
		t.Fatalf("read once before the webhook: got %q, want pending", o.Status)
	}
	b.payUnanswered = true
	settleCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	settled := make(chan map[int]orderJSON)
	go func() { settled <- s.settle(settleCtx, buyers) }()
	var pid string
	if err := p.Pool.QueryRow(ctx, `SELECT provider_payment_id FROM payments WHERE order_id = $1`, co.OrderID).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := p.App.Payments.Resend(ctx, pid); err != nil {
		t.Fatal(err)
	}
	orders := <-settled
	if o := orders[0]; o.Status != "confirmed" || len(o.Tickets) != len(h.Seats) {
		t.Fatalf("read again after the buying: got %q with %d tickets, want confirmed with %d", o.Status, len(o.Tickets), len(h.Seats))
	}
	last := soldMap(t, s, base, len(h.Seats))

	if v := apiViolations(buyers, orders, last); len(v) != 0 {
		t.Errorf("orders read again: got %q, want no violation", v)
	}
	want := "the seat map shows " + strconv.Itoa(len(h.Seats)) + " seats sold, the buyers' confirmed orders hold 0 seat tickets"
	if v := apiViolations(buyers, readOnce, last); !contains(v, want) {
		t.Errorf("the order read once, before its webhook: got %q, want %q", v, want)
	}
	if v := apiViolations(nil, nil, last); !contains(v, want) {
		t.Errorf("a sold seat with no buyer's order: got %q, want %q", v, want)
	}
}

// servedProgram is the program on a fresh database, served, with its background work
// (the payments' webhooks, the tidy-up) if background.
func servedProgram(t *testing.T, background bool) (*apptest.Program, string) {
	t.Helper()
	p := apptest.New(t, apptest.Options{})
	srv, err := benchkit.ServeProgram(t.Context(), p.App, background)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// testSim is a run on the event with cfg, short of its crowd.
func testSim(eventID int64, cfg config) *sim {
	cfg.Conns, cfg.Timeout = 4, 10*time.Second
	return &sim{cfg: cfg, eventPath: strconv.FormatInt(eventID, 10), lat: map[string][]time.Duration{},
		connWait: map[string][]time.Duration{}, count: newCounters(time.Now())}
}

// sessionBuyer is a buyer of s with a session at base.
func sessionBuyer(t *testing.T, s *sim, base string) *buyer {
	t.Helper()
	b := &buyer{id: 1, sim: s, c: newClient(base, http.DefaultTransport, 10*time.Second), rng: rand.New(rand.NewPCG(1, 2))}
	var sess struct {
		CSRFToken string `json:"csrfToken"`
	}
	mustCall(t, b, "session", http.MethodGet, "/api/v1/session", nil, &sess)
	b.c.csrf = sess.CSRFToken
	return b
}

// mustCall makes a call that must succeed (2xx).
func mustCall(t *testing.T, b *buyer, step, method, path string, body, out any) {
	t.Helper()
	a, err := b.c.do(t.Context(), method, path, body, out)
	if err != nil || a.Status >= 300 {
		t.Fatalf("%s: %d %+v, %v", step, a.Status, a.Err, err)
	}
}

// soldMap reads the seat map until it shows sold seats sold (it may be a second
// stale), within a deadline.
func soldMap(t *testing.T, s *sim, base string, sold int) *board {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c := newClient(base, http.DefaultTransport, 10*time.Second)
	for {
		m, err := s.seats.fetch(ctx, c, s.eventPath)
		if err == nil && m.sold == sold {
			return m
		}
		if !sleep(ctx, 200*time.Millisecond) {
			t.Fatalf("the seat map never showed %d seats sold (last: %+v, %v)", sold, m, err)
		}
	}
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// TestSendRepeatsWithTheKey: a balancer in front of the program loses the answer to
// the first hold (the server ran it; the client gets a 502, as from an instance that
// died mid-answer). The buyer sends the hold again with the same Idempotency-Key and
// gets the first answer, replayed: one hold, counted as sent again. The control:
// without keys, the 502 is the answer, counted as an error, and nothing is repeated.
func TestSendRepeatsWithTheKey(t *testing.T) {
	t.Parallel()
	p, srvURL := servedProgram(t, false)
	origin, err := url.Parse(srvURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range []bool{true, false} {
		var lost atomic.Int32 // answers to holds lost so far: the first only
		lb := httputil.NewSingleHostReverseProxy(origin)
		lb.ModifyResponse = func(r *http.Response) error {
			if r.Request.Method == http.MethodPost && strings.HasSuffix(r.Request.URL.Path, "/holds") && lost.Add(1) == 1 {
				r.Body.Close()
				r.StatusCode, r.Body, r.ContentLength = http.StatusBadGateway, io.NopCloser(strings.NewReader("")), 0
				r.Header.Del("Content-Length")
			}
			return nil
		}
		front := httptest.NewServer(lb)
		t.Cleanup(front.Close)
		s := testSim(p.EventID, config{Keys: keys, MaxQty: 1, Best: 1})
		b := sessionBuyer(t, s, front.URL)
		h, ok := b.hold(t.Context())
		var holds int
		if err := p.Pool.QueryRow(t.Context(), `SELECT count(*) FROM holds WHERE event_id = $1 AND released_at IS NULL`, p.EventID).Scan(&holds); err != nil {
			t.Fatal(err)
		}
		if keys {
			want := map[string]int{"hold: 502, then 201 (the first answer, replayed)": 1}
			if !ok || h.HoldID == "" || !maps.Equal(s.count.retried, want) || len(s.count.unexp) != 0 || holds != 1 {
				t.Errorf("with keys: hold %q (%v), sent again %v, errors %v, %d holds; want one hold, its first answer replayed %v, no error",
					h.HoldID, ok, s.count.retried, s.count.unexp, holds, want)
			}
			continue
		}
		if ok || len(s.count.retried) != 0 || s.count.unexp["hold: 502"] != 1 || holds != 2 {
			t.Errorf("without keys: hold %q (%v), sent again %v, errors %v, %d holds in all; want the 502 an error, nothing sent again, the lost hold beside the first run's",
				h.HoldID, ok, s.count.retried, s.count.unexp, holds)
		}
	}
}

// TestErrKind: a failed call is named in the error table as a timeout, as no answer
// with what the connection said, or as a bad answer.
func TestErrKind(t *testing.T) {
	reset := &url.Error{Op: "Post", URL: "http://127.0.0.1/x", Err: &net.OpError{Op: "read", Net: "tcp",
		Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: POST /x: %w", errTransport, reset), "no answer (read: connection reset by peer)"},
		{fmt.Errorf("%w: POST /x: %w", errTransport, &url.Error{Op: "Post", URL: "http://127.0.0.1/x", Err: io.EOF}), "no answer (the connection closed)"},
		{fmt.Errorf("%w: GET /x: reading the answer: %w", errTransport, io.ErrUnexpectedEOF), "no answer (the connection closed)"},
		{fmt.Errorf("%w: GET /x: %w", errTransport, errors.New("something else")), "no answer"},
		{fmt.Errorf("%w: GET /x: %w", errTransport, context.DeadlineExceeded), "timeout"},
		{errors.New("invalid character '<' looking for beginning of value"), "bad answer"},
	} {
		if got := errKind(tc.err); got != tc.want {
			t.Errorf("errKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
