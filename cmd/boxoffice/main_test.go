package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"

	"github.com/jackc/pgx/v5/pgxpool"
)

// serving is `boxoffice serve` running for a test, on a fresh database.
type serving struct {
	URL        string // the public listener
	MetricsURL string // GET it for /metrics, with METRICS_ADDR set
	DBURL      string // its database
	stop       context.CancelFunc
	done       chan error // what serve returned
}

// startServe migrates a fresh database, loads the events of specs (their ids come
// back in order), and runs serve with env on top of the test settings until the test
// calls stop or ends.
func startServe(t *testing.T, env map[string]string, specs ...demo.EventSpec) (*serving, []int64) {
	t.Helper()
	dbURL := dbtest.URL(t)
	setup, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(specs))
	for i, spec := range specs {
		if ids[i], err = demo.Create(t.Context(), setup, spec); err != nil {
			setup.Close()
			t.Fatal(err)
		}
	}
	setup.Close()
	all := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": os.Getenv("REDIS_URL"), "ADDR": "127.0.0.1:0", "LOG_FORMAT": "json",
	}
	maps.Copy(all, env)
	if all["REDIS_URL"] == "" {
		t.Fatal("REDIS_URL not set: run tests through `make test`")
	}
	ctx, cancel := context.WithCancel(t.Context())
	out, w := io.Pipe()
	s := &serving{stop: cancel, done: make(chan error, 1), DBURL: dbURL}
	go func() {
		s.done <- run(ctx, []string{"serve"}, func(k string) string { return all[k] }, nil, w)
		w.Close()
	}()
	// serve prints its URL first, and the metrics' a few lines later.
	lines := bufio.NewScanner(out)
	for (s.URL == "" || (all["METRICS_ADDR"] != "" && s.MetricsURL == "")) && lines.Scan() {
		line := lines.Text()
		i := strings.Index(line, "http://")
		switch {
		case i < 0:
		case strings.HasPrefix(line, "metrics:"):
			s.MetricsURL = strings.Fields(line[i:])[0]
		case s.URL == "":
			s.URL = strings.Fields(line[i:])[0]
		}
	}
	go io.Copy(io.Discard, out) //nolint:errcheck // drain the rest
	if s.URL == "" || (all["METRICS_ADDR"] != "" && s.MetricsURL == "") {
		cancel()
		t.Fatalf("got URL %q and metrics URL %q printed, want both", s.URL, s.MetricsURL)
	}
	return s, ids
}

// TestServeShutsDownGracefully runs the whole program: it migrates a fresh database,
// serves, answers /readyz, and on its context's end (a signal, in main) ends the open
// live streams, stops accepting and returns without error. A stream left open would
// hold Shutdown until SHUTDOWN_TIMEOUT and make it return an error.
func TestServeShutsDownGracefully(t *testing.T) {
	t.Parallel()
	spec := demo.DemoSpec(time.Now())
	srv, _ := startServe(t, map[string]string{"REDIS_PREFIX": "test:serve:", "SHUTDOWN_TIMEOUT": "10s"}, spec)
	url := srv.URL
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("readyz: got %d, want 200", resp.StatusCode)
	}
	stream, err := http.Get(url + "/events/" + spec.Slug + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("stream: got %d, want 200", stream.StatusCode)
	}
	streamEnded := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, stream.Body)
		streamEnded <- err
	}()

	srv.stop()
	select {
	case err := <-srv.done:
		if err != nil {
			t.Errorf("serve after shutdown: got %v, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return within 20 s of its context ending")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Errorf("still serving after shutdown")
	}
	select {
	case err := <-streamEnded:
		if err != nil {
			t.Errorf("stream: got %v, want a clean end", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the live stream is still open after shutdown")
	}
}

func TestRunRejectsUnknownCommand(t *testing.T) {
	t.Parallel()
	err := run(t.Context(), []string{"frobnicate"}, func(string) string { return "" }, nil, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Errorf("got %v, want an error naming the command", err)
	}
}

// TestServeMetrics: /metrics is not a route of the public listener (404) and is served
// on METRICS_ADDR, with the decision counters at zero, the waiting room of a queued
// event (one visitor in its pre-queue), the open live streams, the HTTP series by
// route, and the pools' statistics.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	spec := demo.DemoSpec(time.Now())
	srv, ids := startServe(t, map[string]string{
		"METRICS_ADDR": "127.0.0.1:0",
		"REDIS_PREFIX": "test:serve-metrics:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":",
	}, spec, demo.OnsaleSpec(time.Now()))
	defer func() {
		srv.stop()
		if err := <-srv.done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	public, private, onsaleID := srv.URL, srv.MetricsURL, ids[1]

	get := func(c *http.Client, url string) (int, string) {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if st, _ := get(http.DefaultClient, public+"/metrics"); st != http.StatusNotFound {
		t.Errorf("public /metrics: got %d, want 404", st)
	}

	// A visitor in the onsale's pre-queue, and a live stream open.
	jar, _ := cookiejar.New(nil)
	buyer := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	st, body := get(buyer, public+"/api/v1/session")
	var s struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.Unmarshal([]byte(body), &s); st != http.StatusOK || err != nil {
		t.Fatalf("session: got %d %q", st, body)
	}
	req, _ := http.NewRequest("POST", public+"/api/v1/events/"+strconv.FormatInt(onsaleID, 10)+"/queue", nil)
	req.Header.Set("X-CSRF-Token", s.CSRFToken)
	req.Header.Set("X-Altcha", solved(t, buyer, public))
	resp, err := buyer.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("join the queue: got %d, want 200", resp.StatusCode)
	}
	stream, err := http.Get(public + "/events/" + spec.Slug + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()

	st, text := get(http.DefaultClient, private)
	if st != http.StatusOK {
		t.Fatalf("metrics: got %d, want 200", st)
	}
	ev := strconv.FormatInt(onsaleID, 10)
	for _, want := range []string{
		"boxoffice_holds_total 0", "boxoffice_hold_conflicts_total 0", "boxoffice_orders_confirmed_total 0",
		"boxoffice_tickets_issued_total 0", "boxoffice_refunds_total 0",
		`boxoffice_queue_length{event="` + ev + `"} 1`,
		`boxoffice_queue_active{event="` + ev + `"} 0`,
		`boxoffice_queue_admission_rate{event="` + ev + `"} 2`,
		"boxoffice_sse_clients 1",
		`boxoffice_http_requests_total{code="200",host="",method="POST",url="/api/v1/events/:id/queue"} 1`,
		"pgxpool_acquire_count ", "pgxpool_max_conns 16", "boxoffice_redis_pool_hit_total ",
		`boxoffice_db_gate_waiting{place="first"} `, `boxoffice_db_gate_waiting{place="later"} `,
		`boxoffice_small_writes_total{kind="session"} `, `boxoffice_small_write_batches_total{kind="key_claim"} `,
		`boxoffice_small_writes_waiting{kind="key_answer"} `,
		"go_goroutines ",
	} {
		if !hasLine(text, want) {
			t.Errorf("metrics: no line starting %q", want)
		}
	}
	// A paused room admits nobody: its gauge says 0, as the admitter is told.
	pool, err := pgxpool.New(t.Context(), srv.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(t.Context(), `UPDATE events SET queue_paused = true WHERE id = $1`, onsaleID); err != nil {
		t.Fatal(err)
	}
	if _, text := get(http.DefaultClient, private); !hasLine(text, `boxoffice_queue_admission_rate{event="`+ev+`"} 0`) {
		t.Error("metrics of a paused room: the admission rate is not 0")
	}
	if st, _ := get(http.DefaultClient, strings.TrimSuffix(private, "/metrics")+"/events/"+spec.Slug); st != http.StatusNotFound {
		t.Errorf("metrics listener, a public page: got %d, want 404", st)
	}
}

func hasLine(text, prefix string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
