package benchkit_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/benchkit"
)

// leanServer is an httptest server that counts the connections it accepts.
func leanServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, &conns
}

func leanRequest(t *testing.T, method, base, path string, header ...string) benchkit.LeanRequest {
	t.Helper()
	req, err := benchkit.NewLeanRequest(method, base, path, header...)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func leanConn(t *testing.T, base string) *benchkit.LeanConn {
	t.Helper()
	c, err := benchkit.NewLeanConn(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLeanClient: the lean client sends what net/http's client would (method, path,
// fixed and varying headers, the body and its length) and reads answers of every
// framing a server uses: Content-Length, chunked, several Set-Cookie, a 4xx with its
// body, all on one kept-alive connection.
func TestLeanClient(t *testing.T) {
	t.Parallel()
	ts, conns := leanServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cookies":
			http.SetCookie(w, &http.Cookie{Name: "csrf", Value: "c1", Path: "/", HttpOnly: true})
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s2", Path: "/", SameSite: http.SameSiteLaxMode})
			w.Header().Add("Set-Cookie", "=nameless") // dropped, as net/http's client drops it
			w.Header().Set("Content-Length", "17")
			_, _ = io.WriteString(w, `{"csrfToken":"x"}`)
		case "/chunked":
			for _, part := range []string{`{"preQueue":`, "true", `,"n":1}`} {
				_, _ = io.WriteString(w, part)
				w.(http.Flusher).Flush() // no length known: the answer goes in chunks
			}
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			_, _ = io.WriteString(w, strings.Join([]string{r.Method, r.Host, r.UserAgent(), r.Header.Get("Content-Type"),
				r.Header.Get("Cookie"), r.Header.Get("X-CSRF-Token"), r.Header.Get("X-Forwarded-For"), string(b)}, "|"))
		default:
			http.Error(w, `{"error":"forbidden"}`, http.StatusForbidden)
		}
	})
	ctx := t.Context()
	c := leanConn(t, ts.URL)
	var resp benchkit.LeanResponse

	if err := c.Do(ctx, leanRequest(t, "GET", ts.URL, "/cookies"), benchkit.LeanHeaders{}, nil, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Cookies) != "csrf=c1; session=s2" || string(resp.Body) != `{"csrfToken":"x"}` {
		t.Errorf("Content-Length and cookies: got %d %q %q, want 200 %q %q", resp.Status, resp.Cookies, resp.Body,
			"csrf=c1; session=s2", `{"csrfToken":"x"}`)
	}

	if err := c.Do(ctx, leanRequest(t, "GET", ts.URL, "/chunked"), benchkit.LeanHeaders{}, nil, &resp); err != nil {
		t.Fatal(err)
	}
	if want := `{"preQueue":true,"n":1}`; resp.Status != 200 || string(resp.Body) != want || len(resp.Cookies) != 0 {
		t.Errorf("chunked: got %d %q cookies %q, want 200 %q and no cookies", resp.Status, resp.Body, resp.Cookies, want)
	}

	post := leanRequest(t, "POST", ts.URL, "/echo", "Content-Type", "application/json")
	h := benchkit.LeanHeaders{Cookie: []byte("csrf=c1; session=s2"), CSRFToken: []byte("tok"), ForwardedFor: []byte("10.0.0.7")}
	for _, body := range []string{`{"quantity":4}`, ""} {
		if err := c.Do(ctx, post, h, []byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		want := "POST|" + strings.TrimPrefix(ts.URL, "http://") + "|Go-http-client/1.1|application/json|csrf=c1; session=s2|tok|10.0.0.7|" + body
		if resp.Status != 200 || string(resp.Body) != want {
			t.Errorf("POST %q: the server got %q (status %d), want %q", body, resp.Body, resp.Status, want)
		}
	}

	if err := c.Do(ctx, leanRequest(t, "GET", ts.URL, "/nothing"), benchkit.LeanHeaders{}, nil, &resp); err != nil {
		t.Fatal(err)
	}
	if want := "{\"error\":\"forbidden\"}\n"; resp.Status != 403 || string(resp.Body) != want {
		t.Errorf("4xx: got %d %q, want 403 %q", resp.Status, resp.Body, want)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the answers took %d connections, want 1 kept alive", n)
	}
}

// TestLeanClientReconnects: a connection the server closes, after an answer that says
// so or while it is kept alive, is dialled again; the request is answered either way.
func TestLeanClientReconnects(t *testing.T) {
	t.Parallel()
	ts, conns := leanServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		_, _ = io.WriteString(w, "ok")
	})
	ctx := t.Context()
	c := leanConn(t, ts.URL)
	var resp benchkit.LeanResponse
	do := func(path string) {
		t.Helper()
		if err := c.Do(ctx, leanRequest(t, "GET", ts.URL, path), benchkit.LeanHeaders{}, nil, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Status != 200 || string(resp.Body) != "ok" {
			t.Fatalf("GET %s: got %d %q, want 200 ok", path, resp.Status, resp.Body)
		}
	}
	do("/close")
	do("/")
	if n := conns.Load(); n != 2 {
		t.Errorf("after Connection: close, %d connections, want 2", n)
	}
	ts.CloseClientConnections()
	do("/")
	if n := conns.Load(); n != 3 {
		t.Errorf("after the server closed the kept-alive connection, %d connections, want 3", n)
	}
}

// TestLeanClientKeepsAliveAcrossReads: an answer whose status line and header arrive
// in two reads keeps its connection (HTTP/1.1, no Connection: close). The status line
// is read from the reader's buffer, which reading the header moves: the version must
// be taken before (else the header's bytes decide, and every such answer reconnects).
func TestLeanClientKeepsAliveAcrossReads(t *testing.T) {
	t.Parallel()
	base, conns := rawServer(t, func(w io.Writer, _ string) bool {
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\n")
		time.Sleep(20 * time.Millisecond)
		_, _ = io.WriteString(w, "Content-Length: 2\r\n\r\nok")
		return false
	})
	c := leanConn(t, base)
	var resp benchkit.LeanResponse
	for range 2 {
		if err := c.Do(t.Context(), leanRequest(t, "GET", base, "/"), benchkit.LeanHeaders{}, nil, &resp); err != nil || resp.Status != 200 || string(resp.Body) != "ok" {
			t.Fatalf("GET: %d %q, %v; want 200 ok", resp.Status, resp.Body, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("two answers in two reads each: %d connections, want 1 kept alive", n)
	}
}

// TestLeanClientFails: a broken answer and a cancelled request are errors, never an
// answer.
func TestLeanClientFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, answer string }{
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"},
		{"bad status line", "HTTP/1.1 2x0 OK\r\n\r\n"},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
		{"no answer", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					buf := make([]byte, 4096)
					_, _ = conn.Read(buf)
					_, _ = io.WriteString(conn, tc.answer)
					conn.Close()
				}
			}()
			base := "http://" + ln.Addr().String()
			c := leanConn(t, base)
			var resp benchkit.LeanResponse
			if err := c.Do(t.Context(), leanRequest(t, "GET", base, "/"), benchkit.LeanHeaders{}, nil, &resp); err == nil {
				t.Errorf("got status %d body %q, want an error", resp.Status, resp.Body)
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		started := make(chan struct{})
		ts, _ := leanServer(t, func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-started; cancel() }()
		c := leanConn(t, ts.URL)
		var resp benchkit.LeanResponse
		if err := c.Do(ctx, leanRequest(t, "GET", ts.URL, "/"), benchkit.LeanHeaders{}, nil, &resp); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
}

// BenchmarkLeanClient is one GET answered with two cookies and a small body, by each
// client over a kept-alive connection: what a client costs a request, server
// included alike.
func BenchmarkLeanClient(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "csrf", Value: "c1", Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s2", Path: "/"})
		_, _ = io.WriteString(w, `{"csrfToken":"x","preQueue":true}`)
	}))
	defer ts.Close()
	b.Run("lean", func(b *testing.B) {
		c, err := benchkit.NewLeanConn(ts.URL)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		req, err := benchkit.NewLeanRequest("GET", ts.URL, "/")
		if err != nil {
			b.Fatal(err)
		}
		var resp benchkit.LeanResponse
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Do(b.Context(), req, benchkit.LeanHeaders{}, nil, &resp); err != nil || len(resp.Cookies) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("nethttp", func(b *testing.B) {
		cl := &http.Client{Transport: &http.Transport{DisableCompression: true}}
		defer cl.CloseIdleConnections()
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(b.Context(), "GET", ts.URL+"/", nil)
			resp, err := cl.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if len(resp.Cookies()) == 0 {
				b.Fatal("no cookies")
			}
		}
	})
}

// rawServer answers each request by answer, which writes the bytes of the answer to
// the request line given and says whether to close the connection after it, and
// counts the connections it accepts: a server that frames and times its answers in
// ways net/http's own server does not choose.
func rawServer(t *testing.T, answer func(w io.Writer, requestLine string) (closeAfter bool)) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					for { // the header, up to the empty line (the test's requests have no body)
						h, err := br.ReadString('\n')
						if err != nil {
							return
						}
						if h == "\r\n" {
							break
						}
					}
					if answer(conn, strings.TrimSpace(line)) {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

// TestLeanClientFramings: an interim 103 before the answer is skipped (its header
// too); a HEAD answer's Content-Length announces no body; a 204 has none; a body
// without a length runs until the server closes, and the next request goes on a new
// connection. Each answer is read whole, and nothing of one is taken for the next.
func TestLeanClientFramings(t *testing.T) {
	t.Parallel()
	answers := map[string]string{
		"GET /early HTTP/1.1": "HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload\r\n\r\n" +
			"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: a=1\r\n\r\nhello",
		"HEAD /head HTTP/1.1":    "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
		"GET /empty HTTP/1.1":    "HTTP/1.1 204 No Content\r\n\r\n",
		"GET /unframed HTTP/1.1": "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
	}
	base, conns := rawServer(t, func(w io.Writer, line string) bool {
		_, _ = io.WriteString(w, answers[line])
		return line == "GET /unframed HTTP/1.1" // its body ends with the connection
	})
	ctx := t.Context()
	c := leanConn(t, base)
	var resp benchkit.LeanResponse
	for _, tc := range []struct {
		method, path, body, cookies string
		status                      int
	}{
		{"GET", "/early", "hello", "a=1", 200},
		{"HEAD", "/head", "", "", 200},
		{"GET", "/empty", "", "", 204},
		{"GET", "/early", "hello", "a=1", 200}, // still the first connection
		{"GET", "/unframed", "until the end", "", 200},
		{"GET", "/early", "hello", "a=1", 200}, // on a second one
	} {
		if err := c.Do(ctx, leanRequest(t, tc.method, base, tc.path), benchkit.LeanHeaders{}, nil, &resp); err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		if resp.Status != tc.status || string(resp.Body) != tc.body || string(resp.Cookies) != tc.cookies {
			t.Errorf("%s %s: got %d %q cookies %q, want %d %q cookies %q", tc.method, tc.path,
				resp.Status, resp.Body, resp.Cookies, tc.status, tc.body, tc.cookies)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("the answers took %d connections, want 2: one until the unframed body's close, one after", n)
	}
}
