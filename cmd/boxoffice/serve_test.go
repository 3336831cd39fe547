package main

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/config"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
	"boxoffice/internal/proof"
)

// TestMain lets a test run the program's own main in a child process: with
// BOXOFFICE_TEST_MAIN=1 the test binary is boxoffice.
func TestMain(m *testing.M) {
	if os.Getenv("BOXOFFICE_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServeRefusesProduction: `boxoffice serve` in production mode with development
// settings exits with status 1 before it touches anything, naming every variable it
// refuses; the same settings with BOXOFFICE_ENV=development get past the check.
func TestServeRefusesProduction(t *testing.T) {
	t.Parallel()
	unsafe := []string{
		"BOXOFFICE_TEST_MAIN=1", "BASE_URL=https://tickets.example.com", "COOKIE_SECURE=false",
		"DATABASE_URL=postgres://127.0.0.1:1/none", "REDIS_URL=redis://127.0.0.1:1/0", "METRICS_ADDR=0.0.0.0:0",
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "serve")
	cmd.Env = unsafe
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("got %v (%s), want exit status 1", err, out)
	}
	msg := string(out)
	for _, want := range []string{"boxoffice: production mode (BASE_URL is https", "PAYMENT_WEBHOOK_SECRET", "ADMISSION_KEYS",
		"PAYMENT_PROVIDER is not set", "COOKIE_SECURE", "METRICS_ADDR"} {
		if !strings.Contains(msg, want) {
			t.Errorf("output %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "serving") {
		t.Errorf("output %q: it served, want it refused first", msg)
	}

	// The same settings in development pass the check, and serve gets as far as the
	// database, which is not there.
	err = run(t.Context(), []string{"serve"}, func(k string) string {
		for _, kv := range append(unsafe, "BOXOFFICE_ENV="+config.Development) {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}, nil, &strings.Builder{})
	if err == nil || strings.Contains(err.Error(), "production") {
		t.Errorf("development: got %v, want past the production check to a failed connection", err)
	}
}

// slowClients is n connections that each send the start of a request and then one more
// header byte every tick, never finishing it (slowloris); closed counts those the
// server has closed.
type slowClients struct {
	conns  []net.Conn
	closed atomic.Int64
	done   chan struct{} // closed once every connection is closed
	stop   chan struct{}
	wg     sync.WaitGroup
}

func dialSlow(t *testing.T, addr string, n int, tick time.Duration) *slowClients {
	t.Helper()
	s := &slowClients{done: make(chan struct{}), stop: make(chan struct{})}
	for range n {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			s.close()
			t.Fatalf("slow connection %d: %v", len(s.conns)+1, err)
		}
		if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: boxoffice\r\nX-Slow: ")); err != nil {
			c.Close()
			s.close()
			t.Fatal(err)
		}
		s.conns = append(s.conns, c)
	}
	for _, c := range s.conns {
		s.wg.Go(func() {
			var b [512]byte
			for { // the server never answers a request it never got: a read ends at its close
				if _, err := c.Read(b[:]); err != nil {
					if s.closed.Add(1) == int64(n) {
						close(s.done)
					}
					return
				}
			}
		})
	}
	s.wg.Go(func() { // dribble
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tk.C:
				for _, c := range s.conns {
					_, _ = c.Write([]byte("a")) // fails once the server has closed it
				}
			}
		}
	})
	t.Cleanup(s.close)
	return s
}

func (s *slowClients) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	for _, c := range s.conns {
		c.Close()
	}
	s.wg.Wait()
}

// TestServeSlowClients: 500 connections that dribble their headers (slowloris) do not
// keep a buyer from holding a seat while they are all open, and the server closes
// every one of them once READ_HEADER_TIMEOUT passes. A server without the timeout,
// dribbled at the same time (the negative control), still has all of its slow
// connections open when the last of boxoffice's is closed.
func TestServeSlowClients(t *testing.T) {
	t.Parallel()
	const slow = 500
	srv, ids := startServe(t, map[string]string{
		"READ_HEADER_TIMEOUT": "5s", "REDIS_PREFIX": "test:slow:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":",
	}, demo.DemoSpec(time.Now()))
	defer func() {
		srv.stop()
		if err := <-srv.done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	u, _ := url.Parse(srv.URL)

	bare, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	control := &http.Server{Handler: http.NotFoundHandler()} // no timeouts
	go control.Serve(bare)                                   //nolint:errcheck // ends with Close
	defer control.Close()

	loris := dialSlow(t, u.Host, slow, 500*time.Millisecond)
	controlLoris := dialSlow(t, bare.Addr().String(), 20, 500*time.Millisecond)

	jar, _ := cookiejar.New(nil)
	buyer := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	csrf := session(t, buyer, srv.URL)
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/events/"+strconv.FormatInt(ids[0], 10)+"/holds", strings.NewReader(`{"quantity": 1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	req.Header.Set("X-Altcha", solved(t, buyer, srv.URL))
	resp, err := buyer.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("hold beside %d slow connections: got %d, want 201", slow, resp.StatusCode)
	}
	if n := loris.closed.Load(); n != 0 {
		t.Fatalf("%d of the slow connections were closed before the hold was answered; want all %d open meanwhile", n, slow)
	}

	select {
	case <-loris.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the server closed %d of %d slow connections within a minute; want all, after READ_HEADER_TIMEOUT", loris.closed.Load(), slow)
	}
	if n := controlLoris.closed.Load(); n != 0 {
		t.Errorf("the control server without timeouts lost %d of its 20 slow connections; want them open, the timeout being what closes them", n)
	}
}

// session starts a buyer session and returns its CSRF token.
func session(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Get(base + "/api/v1/session")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("session: got %d (%v), want 200 and a token", resp.StatusCode, err)
	}
	return s.CSRFToken
}

// solved is a solved proof of work, which a queue join and a new session's first
// hold need, solved as the browser's widget does: for the X-Altcha header.
func solved(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Get(base + "/api/v1/challenge")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ch proof.Challenge
	if err := json.NewDecoder(resp.Body).Decode(&ch); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("challenge: got %d (%v), want 200 and a challenge", resp.StatusCode, err)
	}
	out, err := proof.Solve(ch)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSeedRefusesDemoAdminInProduction: in production the seed does not create the
// demo admin with its public password, and writes nothing; with a password of its
// own it does.
func TestSeedRefusesDemoAdminInProduction(t *testing.T) {
	t.Parallel()
	p := mustPool(t, dbtest.URL(t))
	prod := map[string]string{"BASE_URL": "https://tickets.example.com"}
	getenv := func(k string) string { return prod[k] }
	err := seedAdmin(t.Context(), p, getenv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "DEMO_ADMIN_PASSWORD") {
		t.Errorf("production without DEMO_ADMIN_PASSWORD: got %v, want it refused by name", err)
	}
	var n int
	if err := p.QueryRow(t.Context(), `SELECT count(*) FROM staff`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after the refusal: %d accounts (%v), want none", n, err)
	}
	prod["DEMO_ADMIN_PASSWORD"] = "a password of this site's own"
	if err := seedAdmin(t.Context(), p, getenv, io.Discard); err != nil {
		t.Errorf("production with DEMO_ADMIN_PASSWORD: %v", err)
	}
}
