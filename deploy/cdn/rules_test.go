package cdn_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxoffice/deploy/cdn"
)

// The configuration's rules against a stand-in origin: each way of answering that a
// CDN must tell apart, whether boxoffice ever answers so or not.

// TestStoresOnlyWhatOriginMarksPublic checks the configuration's rules against an origin
// that answers each way a CDN must tell apart, including ways boxoffice never answers
// (public with a cookie), so that the rules do not rest on the origin being right.
func TestStoresOnlyWhatOriginMarksPublic(t *testing.T) {
	t.Parallel()
	requireNginx(t)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/public":
			w.Header().Set("Cache-Control", "public, max-age=30, s-maxage=60")
		case "/cookie":
			w.Header().Set("Cache-Control", "public, max-age=30, s-maxage=60")
			http.SetCookie(w, &http.Cookie{Name: "boxoffice_session", Value: "s3cr3t-" + r.URL.RawQuery})
		case "/private":
			w.Header().Set("Cache-Control", "private, max-age=60")
		case "/no-store":
			w.Header().Set("Cache-Control", "no-store")
		case "/s-maxage-0": // the shared-cache lifetime wins over the browser's
			w.Header().Set("Cache-Control", "public, max-age=60, s-maxage=0")
		case "/none": // no Cache-Control: nginx must not invent a lifetime
		case "/api/v1/public", "/holds/1", "/orders/1", "/events/x/seats", "/events/x/holds":
			w.Header().Set("Cache-Control", "public, s-maxage=60") // a mistake: still never stored
		}
		_, _ = io.WriteString(w, "hello "+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	p, err := cdn.Start(t.Context(), cdn.Config{Origin: strings.TrimPrefix(origin.URL, "http://"), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	for _, tc := range []struct {
		path   string
		second string // X-Cache-Status of the second GET
	}{
		{"/public", "HIT"},
		{"/cookie", "MISS"},
		{"/private", "MISS"},
		{"/no-store", "MISS"},
		{"/s-maxage-0", "MISS"},
		{"/none", "MISS"},
		{"/api/v1/public", "BYPASS"},
		{"/holds/1", "BYPASS"},
		{"/orders/1", "BYPASS"},
		{"/events/x/seats", "BYPASS"},
		{"/events/x/holds", "BYPASS"},
	} {
		fetch(t, nil, "GET", p.URL+tc.path, nil, "")
		a := fetch(t, nil, "GET", p.URL+tc.path, nil, "")
		if a.cache() != tc.second || string(a.Body) != "hello "+tc.path {
			t.Errorf("second GET %s: got X-Cache-Status %q, body %q; want %s, %q", tc.path, a.cache(), a.Body, tc.second, "hello "+tc.path)
		}
	}
	// Each buyer gets their own cookie, never one the proxy kept.
	for _, q := range []string{"a", "b"} {
		a := fetch(t, nil, "GET", p.URL+"/cookie?"+q, nil, "")
		if got, want := a.Header.Get("Set-Cookie"), "boxoffice_session=s3cr3t-"+q; got != want {
			t.Errorf("GET /cookie?%s: got Set-Cookie %q, want %q", q, got, want)
		}
	}
	// What was stored, by key: BYPASS alone would not say that nothing was written.
	var keys []string
	for path, raw := range cacheFiles(t, p.CacheDir()) {
		if bytes.Contains(raw, []byte("s3cr3t")) {
			t.Errorf("cache file %s holds the cookie: %q", path, raw)
		}
		if _, rest, ok := bytes.Cut(raw, []byte("\nKEY: ")); ok {
			key, _, _ := bytes.Cut(rest, []byte("\n"))
			keys = append(keys, string(key))
		}
	}
	if want := "http://127.0.0.1/public hx= ae=gzip"; len(keys) != 1 || keys[0] != want {
		t.Errorf("cache keys: got %q, want only %q", keys, want)
	}
}

// cacheFiles reads every file under dir.
func cacheFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		files[path] = raw
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestStreamIsNotBuffered: an event the origin flushes reaches the client through the
// proxy while the origin still holds the answer open, with no cache status and no gzip.
func TestStreamIsNotBuffered(t *testing.T) {
	t.Parallel()
	requireNginx(t)
	release := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, "id: 1\ndata: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(origin.Close)
	t.Cleanup(func() { close(release) }) // before origin.Close: cleanups run last-in first-out
	p, err := cdn.Start(t.Context(), cdn.Config{Origin: strings.TrimPrefix(origin.URL, "http://"), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", p.URL+"/events/x/stream", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("X-Cache-Status"); got != "" {
		t.Errorf("stream: got X-Cache-Status %q, want none (the stream does not use the cache)", got)
	}
	if got := resp.Header.Get("Content-Encoding"); got != "" {
		t.Errorf("stream: got Content-Encoding %q, want none (compression buffers)", got)
	}
	want := "id: 1\ndata: first\n\n"
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != want {
		t.Fatalf("stream: got %q (%v) while the origin held the answer open, want %q", buf, err, want)
	}
}

// TestAccessLogKeepsNoTokens: the proxy's access log writes an address that carries an
// order's access token or a verification token without its query, and any other as
// it came.
func TestAccessLogKeepsNoTokens(t *testing.T) {
	t.Parallel()
	requireNginx(t)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
	}))
	t.Cleanup(origin.Close)
	dir := t.TempDir()
	p, err := cdn.Start(t.Context(), cdn.Config{Origin: strings.TrimPrefix(origin.URL, "http://"), Dir: dir, AccessLog: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	for _, path := range []string{"/orders/1?t=s3cr3t-1", "/orders/1/tickets.pdf?x=1&t=s3cr3t-2", "/verify?token=s3cr3t-3", "/events/x?section=A"} {
		fetch(t, nil, "GET", p.URL+path, nil, "")
	}
	// nginx writes a request's line once its answer is out: wait for the four.
	var log string
	for deadline := time.Now().Add(5 * time.Second); strings.Count(log, "\n") < 4 && time.Now().Before(deadline); {
		raw, err := os.ReadFile(filepath.Join(dir, "access.log"))
		if err != nil {
			t.Fatal(err)
		}
		if log = string(raw); strings.Count(log, "\n") < 4 {
			time.Sleep(10 * time.Millisecond) // polling the file, under the deadline
		}
	}
	for _, want := range []string{`"GET /orders/1?REDACTED HTTP/1.1"`, `"GET /orders/1/tickets.pdf?REDACTED HTTP/1.1"`,
		`"GET /verify?REDACTED HTTP/1.1"`, `"GET /events/x?section=A HTTP/1.1"`} {
		if !strings.Contains(log, want) {
			t.Errorf("access log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "s3cr3t") {
		t.Errorf("access log keeps a token:\n%s", log)
	}
}
