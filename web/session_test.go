package web_test

import (
	"boxoffice/internal/apptest"
	"boxoffice/web"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSessionAndCSRF checks the session cookie and token of GET /api/v1/session, and
// how the CSRF check judges API clients (by token) and browsers (by Sec-Fetch-Site).
func TestSessionAndCSRF(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	seats := firstSeats(t, app.Pool, app.EventID, 3)
	holds := "/api/v1/events/" + itoa(app.EventID) + "/holds"

	jar, _ := cookiejar.New(nil)
	c := &client{t: t, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}, base: app.URL}
	st, raw, hdr, err := c.send(context.Background(), "GET", "/api/v1/session", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s web.SessionJSON
	if st != http.StatusOK || json.Unmarshal(raw, &s) != nil || len(s.CSRFToken) < 20 {
		t.Fatalf("GET /api/v1/session: got %d %s, want 200 and a token", st, truncate(raw))
	}
	cookies := map[string]*http.Cookie{}
	for _, ck := range (&http.Response{Header: hdr}).Cookies() {
		cookies[ck.Name] = ck
	}
	for _, name := range []string{"boxoffice_session", web.CSRFCookie} {
		ck := cookies[name]
		switch {
		case ck == nil:
			t.Errorf("cookie %s: not set; got %v", name, hdr.Values("Set-Cookie"))
		case !ck.HttpOnly || ck.Value == "":
			t.Errorf("cookie %s: got %q (HttpOnly %v), want a value, HttpOnly", name, ck.Raw, ck.HttpOnly)
		case ck.SameSite == http.SameSiteNoneMode:
			t.Errorf("cookie %s: got SameSite=None, want Lax or Strict", name)
		}
	}
	if ck := cookies[web.CSRFCookie]; ck != nil && ck.SameSite != http.SameSiteStrictMode {
		t.Errorf("CSRF cookie: got SameSite %v, want Strict", ck.SameSite)
	}
	var again web.SessionJSON
	if st := c.do("GET", "/api/v1/session", nil, &again); st != http.StatusOK || again.CSRFToken != s.CSRFToken {
		t.Errorf("second GET /api/v1/session: got %d token %q, want 200 and the same token %q", st, again.CSRFToken, s.CSRFToken)
	}

	cases := []struct {
		name   string
		token  string
		header http.Header
		seat   int64
		status int
		code   string
	}{
		{"no token", "", nil, seats[0], http.StatusForbidden, "csrf_failed"},
		{"wrong token", "x" + s.CSRFToken, nil, seats[0], http.StatusForbidden, "csrf_failed"},
		{"cross-site browser with a good token", s.CSRFToken, http.Header{"Sec-Fetch-Site": {"cross-site"}}, seats[0], http.StatusForbidden, "csrf_failed"},
		{"cross-site browser without a token", "", http.Header{"Sec-Fetch-Site": {"cross-site"}}, seats[0], http.StatusForbidden, "csrf_failed"},
		{"same-site browser without a token", "", http.Header{"Sec-Fetch-Site": {"same-site"}}, seats[0], http.StatusForbidden, "csrf_failed"},
		{"same-site browser with a good token", s.CSRFToken, http.Header{"Sec-Fetch-Site": {"same-site"}}, seats[0], http.StatusCreated, ""},
		{"same-origin browser without a token", "", http.Header{"Sec-Fetch-Site": {"same-origin"}}, seats[1], http.StatusCreated, ""},
		{"API client with the token", s.CSRFToken, nil, seats[2], http.StatusCreated, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.csrf = tc.token
			before := saleState(t, app.Pool)
			st, raw, _, err := c.send(context.Background(), "POST", holds, map[string]any{"seatIds": []int64{tc.seat}}, tc.header)
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.status {
				t.Fatalf("got %d %s, want %d", st, truncate(raw), tc.status)
			}
			if tc.code == "" {
				return
			}
			if e, err := parseError(raw); err != nil || e.Error != tc.code {
				t.Errorf("got %s, want error %q (%v)", truncate(raw), tc.code, err)
			}
			if changed := stateDiff(before, saleState(t, app.Pool)); len(changed) > 0 {
				t.Errorf("a refused request changed the sale: %v", changed)
			}
		})
	}
}

// TestHeaders checks caching and security headers, the request id and the health
// endpoints.
func TestHeaders(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	seat := firstSeats(t, app.Pool, app.EventID, 1)[0]
	var h web.HoldJSON
	if st := c.do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"seatIds": []int64{seat}}, &h); st != http.StatusCreated {
		t.Fatalf("hold: got %d, want 201", st)
	}
	co := c.checkout(h.HoldID)

	const private = "private, no-store"
	cases := []struct {
		name, method, path string
		body               any
		status             int
		cache              string // the Cache-Control wanted; "public" means one starting so
	}{
		{"session", "GET", "/api/v1/session", nil, 200, private},
		{"hold", "GET", "/api/v1/holds/" + h.HoldID, nil, 200, private},
		{"someone's hold", "GET", "/api/v1/holds/" + itoa(app.EventID) + "-999999", nil, 404, private},
		{"order", "GET", "/api/v1/orders/" + itoa(co.OrderID), nil, 200, private},
		{"checkout again", "POST", "/api/v1/holds/" + h.HoldID + "/checkout", map[string]string{"email": "ada@example.com"}, 201, private},
		{"queue", "GET", "/api/v1/events/" + itoa(app.EventID) + "/queue", nil, 200, private},
		{"webhook", "POST", "/api/v1/payments/webhook", `{}`, 400, private},
		{"seat map", "GET", "/api/v1/events/" + itoa(app.EventID) + "/seatmap", nil, 200, "public"},
		{"seat statuses", "GET", "/api/v1/events/" + itoa(app.EventID) + "/seatmap/statuses", nil, 200, "public"},
		{"seat layout", "GET", "/api/v1/events/" + itoa(app.EventID) + "/seatmap/layout", nil, 200, "public"},
		{"events", "GET", "/api/v1/events", nil, 200, "public"},
		{"healthz", "GET", "/healthz", nil, 200, ""},
		{"readyz", "GET", "/readyz", nil, 200, ""},
		{"unknown route", "GET", "/api/v1/nothing", nil, 404, ""},
	}
	ids := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, raw, hdr, err := c.send(context.Background(), tc.method, tc.path, tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.status {
				t.Errorf("got status %d %s, want %d", st, truncate(raw), tc.status)
			}
			cc := hdr.Get("Cache-Control")
			switch tc.cache {
			case "public":
				if !strings.HasPrefix(cc, "public") || strings.Contains(cc, "private") || strings.Contains(cc, "no-store") {
					t.Errorf("Cache-Control: got %q, want public", cc)
				}
			case private:
				if cc != private {
					t.Errorf("Cache-Control: got %q, want %q", cc, private)
				}
			}
			for k, want := range map[string]string{
				"X-Content-Type-Options": "nosniff",
				"X-Frame-Options":        "DENY",
				"Referrer-Policy":        "same-origin",
			} {
				if got := hdr.Get(k); got != want {
					t.Errorf("%s: got %q, want %q", k, got, want)
				}
			}
			if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("Content-Security-Policy: got %q, want one with frame-ancestors 'none'", csp)
			}
			id := hdr.Get("X-Request-Id")
			if len(id) < 16 || ids[id] {
				t.Errorf("X-Request-Id: got %q, want a fresh id of at least 16 characters", id)
			}
			ids[id] = true
		})
	}
}

// TestRequestLogCarriesRequestID: every request is logged once with the id that its
// answer's X-Request-Id header carries, so a buyer's report can be found in the logs.
func TestRequestLogCarriesRequestID(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	p := apptest.New(t, apptest.Options{Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	rec := httptest.NewRecorder()
	p.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	id := rec.Header().Get("X-Request-Id")
	if id == "" {
		t.Fatal("no X-Request-Id header")
	}
	if line := requestLine(t, &buf, "/healthz"); line.ID != id || line.Status != 200 {
		t.Errorf("got log line %+v, want request /healthz 200 with id %q", line, id)
	}
}

// logLine is a request's log line, as the JSON log has it.
type logLine struct {
	Level  string `json:"level"`
	Msg    string `json:"msg"`
	ID     string `json:"id"`
	URI    string `json:"uri"`
	Status int    `json:"status"`
}

// requestLine is the one request log line for uri among the program's log lines.
func requestLine(t *testing.T, buf *lockedBuffer, uri string) logLine {
	t.Helper()
	var found []logLine
	for raw := range bytes.Lines(buf.Bytes()) {
		var l logLine
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		if l.Msg == "request" && l.URI == uri {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("log %q: got %d request lines for %s, want 1", buf.String(), len(found), uri)
	}
	return found[0]
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

func (l *lockedBuffer) String() string { return string(l.Bytes()) }

// TestCompression: the seat map goes out gzipped to a client that takes it; the buyer's
// small JSON answers skip the gzip middleware altogether (no Vary: Accept-Encoding),
// since Echo's resets a compressor for every answer it wraps, whatever its size.
func TestCompression(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	gz := http.Header{"Accept-Encoding": {"gzip"}} // set by hand: the transport then leaves the body alone
	st, zipped, h := c.raw("GET", "/api/v1/events/"+itoa(app.EventID)+"/seatmap", nil, gz)
	if st != http.StatusOK || h.Get("Content-Encoding") != "gzip" || !strings.Contains(strings.Join(h.Values("Vary"), ", "), "Accept-Encoding") {
		t.Errorf("seat map: got %d with Content-Encoding %q, Vary %q; want 200 gzip, varying on Accept-Encoding", st, h.Get("Content-Encoding"), h.Values("Vary"))
	}
	st, plain, h := c.raw("GET", "/api/v1/events/"+itoa(app.EventID)+"/seatmap", nil, http.Header{"Accept-Encoding": {"identity"}})
	if st != http.StatusOK || h.Get("Content-Encoding") != "" || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Errorf("seat map, no gzip: got %d with Content-Encoding %q, Content-Type %q; want 200 plain JSON", st, h.Get("Content-Encoding"), h.Get("Content-Type"))
	}
	if r, err := gzip.NewReader(bytes.NewReader(zipped)); err != nil {
		t.Errorf("seat map: gzip: %v", err)
	} else if unzipped, err := io.ReadAll(r); err != nil || !bytes.Equal(unzipped, plain) || !json.Valid(plain) {
		t.Errorf("seat map: the gzipped answer (%d bytes unzipped, %v) is not the plain one (%d bytes), or not JSON", len(unzipped), err, len(plain))
	}
	for _, path := range []string{"/api/v1/session", "/api/v1/events/" + itoa(app.EventID) + "/queue"} {
		st, _, h := c.raw("GET", path, nil, gz)
		vary := strings.Join(h.Values("Vary"), ", ")
		if st != http.StatusOK || h.Get("Content-Encoding") != "" || strings.Contains(vary, "Accept-Encoding") {
			t.Errorf("%s: got %d, Content-Encoding %q, Vary %q; want 200, uncompressed, not varying on Accept-Encoding",
				path, st, h.Get("Content-Encoding"), vary)
		}
	}
}
