package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestServeShutsDownGracefully runs the whole program: it migrates a fresh database,
// serves, answers /readyz, and on its context's end (a signal, in main) ends the open
// live streams, stops accepting and returns without error. A stream left open would
// hold Shutdown until SHUTDOWN_TIMEOUT and make it return an error.
func TestServeShutsDownGracefully(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.URL(t)
	setup, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	spec := demo.DemoSpec(time.Now())
	_, err = demo.Create(t.Context(), setup, spec)
	setup.Close()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": os.Getenv("REDIS_URL"), "ADDR": "127.0.0.1:0",
		"REDIS_PREFIX": "test:serve:", "LOG_FORMAT": "json", "SHUTDOWN_TIMEOUT": "10s",
	}
	if env["REDIS_URL"] == "" {
		t.Fatal("REDIS_URL not set: run tests through `make test`")
	}
	ctx, cancel := context.WithCancel(t.Context())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, nil, w)
		w.Close()
	}()

	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v", err)
	}
	go io.Copy(io.Discard, out) //nolint:errcheck // drain the rest
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("got %q, want a line with the URL", line)
	}
	url := strings.Fields(line[i:])[0]
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

	cancel()
	select {
	case err := <-done:
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
