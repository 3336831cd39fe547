package cdn_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/deploy/cdn"
	"boxoffice/internal/apptest"
	"boxoffice/internal/demo"
	"boxoffice/internal/session"
)

// stack is the real program on a fresh database with the demo event, and the reference
// proxy in front of it.
type stack struct {
	Origin  string // boxoffice itself
	Proxy   *cdn.Proxy
	EventID int64
	Slug    string
	// OriginRequests counts the requests that reached boxoffice, through the proxy or not.
	OriginRequests *atomic.Int64
	// App is the program behind the origin, to change what it serves.
	App *apptest.Program
}

// requireNginx fails the test when nginx is missing (make test installs it), unless
// BOXOFFICE_SKIP_NGINX=1 says this machine may go without.
func requireNginx(t testing.TB) {
	t.Helper()
	if _, err := cdn.Nginx(); err != nil {
		if os.Getenv("BOXOFFICE_SKIP_NGINX") == "1" {
			t.Skipf("BOXOFFICE_SKIP_NGINX=1: %v", err)
		}
		t.Fatalf("%v; install it (apt-get install nginx) or set BOXOFFICE_SKIP_NGINX=1 to skip", err)
	}
}

// newStack builds the program through the production composition root (app.New,
// handler and all), as web's own tests do, and starts nginx in front of it.
func newStack(t testing.TB, proxy cdn.Config) *stack {
	t.Helper()
	requireNginx(t)
	ctx := context.Background()
	prog := apptest.New(t, apptest.Options{})
	eventID, spec := prog.EventID, demo.DemoSpec(time.Now())
	h, count := prog.Handler, new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	proxy.Origin = strings.TrimPrefix(srv.URL, "http://")
	if proxy.Dir == "" {
		proxy.Dir = t.TempDir()
	}
	p, err := cdn.Start(ctx, proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() && p.Config.AccessLog {
			logs, _ := os.ReadFile(filepath.Join(p.Config.Dir, "access.log"))
			t.Logf("proxy access log:\n%s", logs)
		}
	})
	return &stack{Origin: srv.URL, Proxy: p, EventID: eventID, Slug: spec.Slug, OriginRequests: count, App: prog}
}

// answer is one HTTP exchange, read whole.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

func (a answer) cache() string { return a.Header.Get("X-Cache-Status") }

// fetch sends one request with client c (nil: no cookies) and reads the answer.
func fetch(t testing.TB, c *http.Client, method, url string, header http.Header, body string) answer {
	t.Helper()
	if c == nil {
		c = &http.Client{Timeout: 15 * time.Second}
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading answer: %v", method, url, err)
	}
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// buyer is one browser's cookie jar and CSRF token, talking through the proxy.
type buyer struct {
	http  *http.Client
	token string
}

func newBuyer(t testing.TB, base string) *buyer {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &buyer{http: &http.Client{Jar: jar, Timeout: 15 * time.Second}}
	a := fetch(t, b.http, "GET", base+"/api/v1/session", nil, "")
	var s struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.Unmarshal(a.Body, &s); a.Status != 200 || err != nil || s.CSRFToken == "" {
		t.Fatalf("GET /api/v1/session: got status %d, body %q; want 200 with a csrfToken", a.Status, a.Body)
	}
	if got := a.cache(); got != "BYPASS" {
		t.Errorf("GET /api/v1/session: got X-Cache-Status %q, want BYPASS", got)
	}
	b.token = s.CSRFToken
	return b
}

func (b *buyer) do(t testing.TB, method, url, body string) answer {
	t.Helper()
	return fetch(t, b.http, method, url, http.Header{"X-Csrf-Token": {b.token}}, body)
}

// TestPublicPagesAreCacheHits: the second request for a public page, by anyone, with or
// without a session, is served by the proxy; HEAD and conditional requests are too;
// the htmx fragment and the page are kept apart; no cached answer sets a cookie.
func TestPublicPagesAreCacheHits(t *testing.T) {
	t.Parallel()
	s := newStack(t, cdn.Config{AccessLog: true})
	withSession := newBuyer(t, s.Proxy.URL)

	for _, path := range []string{"/", "/events/" + s.Slug} {
		t.Run(path, func(t *testing.T) {
			url := s.Proxy.URL + path
			first := fetch(t, nil, "GET", url, nil, "")
			if first.Status != 200 || first.cache() != "MISS" {
				t.Fatalf("first GET: got status %d, X-Cache-Status %q; want 200, MISS", first.Status, first.cache())
			}
			second := fetch(t, nil, "GET", url, nil, "")
			if second.Status != 200 || second.cache() != "HIT" {
				t.Fatalf("second GET: got status %d, X-Cache-Status %q; want 200, HIT", second.Status, second.cache())
			}
			if !bytes.Equal(second.Body, first.Body) {
				t.Errorf("second GET: body differs from the first")
			}
			for name, a := range map[string]answer{"first": first, "second": second} {
				if c := a.Header.Values("Set-Cookie"); len(c) > 0 {
					t.Errorf("%s GET: got Set-Cookie %q, want none on a public page", name, c)
				}
			}
			// A buyer with a session gets the same cached page.
			if a := withSession.do(t, "GET", url, ""); a.cache() != "HIT" || !bytes.Equal(a.Body, first.Body) {
				t.Errorf("GET with a session cookie: got X-Cache-Status %q (same body: %v), want HIT with the same page",
					a.cache(), bytes.Equal(a.Body, first.Body))
			}

			// As a browser asks: Go's client adds Accept-Encoding to a GET by itself but
			// not to a HEAD, and the plain and gzip copies are cached apart.
			head := fetch(t, nil, "HEAD", url, http.Header{"Accept-Encoding": {"gzip"}}, "")
			if head.Status != 200 || head.cache() != "HIT" || len(head.Body) != 0 {
				t.Errorf("HEAD: got status %d, X-Cache-Status %q, %d body bytes; want 200, HIT, 0",
					head.Status, head.cache(), len(head.Body))
			}
			// The origin's ETags are weak (the same page goes out gzipped or plain).
			if got, want := head.Header.Get("ETag"), first.Header.Get("ETag"); got == "" || got != want {
				t.Errorf("HEAD: got ETag %q, want the GET's %q", got, want)
			}

			etag := first.Header.Get("ETag")
			cond := fetch(t, nil, "GET", url, http.Header{"If-None-Match": {etag}}, "")
			if cond.Status != http.StatusNotModified || len(cond.Body) != 0 {
				t.Errorf("GET If-None-Match %s: got status %d, %d body bytes; want 304, 0", etag, cond.Status, len(cond.Body))
			}

			hx := http.Header{"Hx-Request": {"true"}}
			if a := fetch(t, nil, "GET", url, hx, ""); a.cache() != "MISS" {
				t.Errorf("first htmx GET: got X-Cache-Status %q, want MISS (a fragment is not the page)", a.cache())
			}
			if a := fetch(t, nil, "GET", url, hx, ""); a.cache() != "HIT" {
				t.Errorf("second htmx GET: got X-Cache-Status %q, want HIT", a.cache())
			}
			if a := fetch(t, nil, "GET", url, nil, ""); a.cache() != "HIT" || !bytes.Equal(a.Body, first.Body) {
				t.Errorf("GET after the htmx GETs: got X-Cache-Status %q (same body: %v), want HIT with the page",
					a.cache(), bytes.Equal(a.Body, first.Body))
			}
		})
	}
}

// TestPersonalRoutesBypassCache: holds, orders, seat selection, the JSON API and the
// stream never come from the cache, two buyers never see each other's answers, and
// nothing the proxy stored holds a cookie, a session or a CSRF token.
func TestPersonalRoutesBypassCache(t *testing.T) {
	t.Parallel()
	s := newStack(t, cdn.Config{AccessLog: true})
	base := s.Proxy.URL
	// Something public in the cache, so that the scan below has files to read.
	for range 2 {
		fetch(t, nil, "GET", base+"/", nil, "")
	}

	a, b := newBuyer(t, base), newBuyer(t, base)
	if a.token == b.token {
		t.Fatalf("two sessions got the same CSRF token %q", a.token)
	}
	// Asked again, each gets its own session back, never the other's or a stored one.
	for _, u := range []*buyer{a, b, a} {
		ans := u.do(t, "GET", base+"/api/v1/session", "")
		var got struct {
			CSRFToken string `json:"csrfToken"`
		}
		_ = json.Unmarshal(ans.Body, &got)
		if got.CSRFToken != u.token || ans.cache() != "BYPASS" {
			t.Errorf("GET /api/v1/session again: got token %q, X-Cache-Status %q; want own token %q, BYPASS",
				got.CSRFToken, ans.cache(), u.token)
		}
	}

	hold := a.do(t, "POST", base+"/api/v1/events/"+strconv.FormatInt(s.EventID, 10)+"/holds", `{"quantity": 2}`)
	var h struct {
		HoldID string `json:"holdId"`
	}
	if err := json.Unmarshal(hold.Body, &h); hold.Status != http.StatusCreated || err != nil || h.HoldID == "" {
		t.Fatalf("POST hold through the proxy: got status %d, body %q; want 201 with a holdId", hold.Status, hold.Body)
	}
	for range 2 {
		if got := a.do(t, "GET", base+"/api/v1/holds/"+h.HoldID, ""); got.Status != 200 || got.cache() != "BYPASS" {
			t.Errorf("owner GET hold: got status %d, X-Cache-Status %q; want 200, BYPASS", got.Status, got.cache())
		}
		if got := b.do(t, "GET", base+"/api/v1/holds/"+h.HoldID, ""); got.Status == 200 || bytes.Contains(got.Body, []byte(h.HoldID+`"`)) {
			t.Errorf("other buyer GET hold: got status %d, body %q; want no access to another buyer's hold", got.Status, got.Body)
		}
	}

	// Buyer pages: whatever each answers, the proxy neither looks up nor stores it.
	personal := []string{
		"/events/" + s.Slug + "/seats",
		"/events/" + s.Slug + "/holds",
		"/holds/" + h.HoldID + "/checkout",
		"/orders/1",
		"/api/v1/events",
	}
	for _, path := range personal {
		for _, u := range []*buyer{a, a, b} {
			if got := u.do(t, "GET", base+path, ""); got.cache() != "BYPASS" {
				t.Errorf("GET %s: got X-Cache-Status %q (status %d), want BYPASS", path, got.cache(), got.Status)
			}
		}
		if got := fetch(t, nil, "HEAD", base+path, nil, ""); got.cache() != "BYPASS" {
			t.Errorf("HEAD %s: got X-Cache-Status %q, want BYPASS", path, got.cache())
		}
	}

	// The cache files hold headers and bodies as nginx stored them.
	secrets := []string{"Set-Cookie", session.BuyerCookie, "boxoffice_csrf", a.token, b.token, h.HoldID}
	for _, u := range []*buyer{a, b} {
		ur, _ := http.NewRequest("GET", base+"/", nil)
		for _, c := range u.http.Jar.Cookies(ur.URL) {
			secrets = append(secrets, c.Value)
		}
	}
	files := cacheFiles(t, s.Proxy.CacheDir())
	for path, raw := range files {
		for _, secret := range secrets {
			if secret != "" && bytes.Contains(bytes.ToLower(raw), bytes.ToLower([]byte(secret))) {
				t.Errorf("cache file %s contains %q, want no personal data in the cache", path, secret)
			}
		}
	}
	if len(files) == 0 {
		t.Errorf("cache: got no files, want at least the home page (the scan would prove nothing)")
	}
}

// seatsLeft is the event page's availability summary ("1,996 of 2,000 seats left").
var seatsLeft = regexp.MustCompile(`[0-9,]+ of [0-9,]+ seats left`)

// sMaxAge reads s-maxage from a Cache-Control header.
func sMaxAge(t testing.TB, cc string) time.Duration {
	t.Helper()
	for _, d := range strings.Split(cc, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), "s-maxage="); ok {
			n, err := strconv.Atoi(v)
			if err == nil && n > 0 {
				return time.Duration(n) * time.Second
			}
		}
	}
	t.Fatalf("Cache-Control %q: no positive s-maxage", cc)
	return 0
}

// TestCachedAvailabilityIsAtMostSMaxAgeOld: after seats are held, the proxy goes on
// serving its copy of the event page, and serves the new availability no later than
// s-maxage after it stored the old one (plus the one background refresh that
// stale-while-revalidate allows).
func TestCachedAvailabilityIsAtMostSMaxAgeOld(t *testing.T) {
	t.Parallel()
	s := newStack(t, cdn.Config{AccessLog: true})
	path := "/events/" + s.Slug
	first := fetch(t, nil, "GET", s.Proxy.URL+path, nil, "")
	stored := time.Now() // the copy was stored before this: a later bound, so a fair deadline
	before := seatsLeft.Find(first.Body)
	if first.cache() != "MISS" || before == nil {
		t.Fatalf("first GET %s: got X-Cache-Status %q, summary %q; want MISS and a seats-left summary", path, first.cache(), before)
	}
	maxAge := sMaxAge(t, first.Header.Get("Cache-Control"))

	b := newBuyer(t, s.Proxy.URL)
	if a := b.do(t, "POST", s.Proxy.URL+"/api/v1/events/"+strconv.FormatInt(s.EventID, 10)+"/holds", `{"quantity": 4}`); a.Status != http.StatusCreated {
		t.Fatalf("hold: got status %d, body %q; want 201", a.Status, a.Body)
	}

	// The origin shows the hold (within its own short map cache).
	var after []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		after = seatsLeft.Find(fetch(t, nil, "GET", s.Origin+path, nil, "").Body)
		if after != nil && !bytes.Equal(after, before) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("origin: got %q 10s after the hold, want a summary other than %q", after, before)
		}
	}

	// The proxy's copy is a cache: still the old one while fresh.
	if a := fetch(t, nil, "GET", s.Proxy.URL+path, nil, ""); time.Since(stored) < maxAge-time.Second {
		if got := seatsLeft.Find(a.Body); a.cache() != "HIT" || !bytes.Equal(got, before) {
			t.Errorf("GET %s while fresh: got X-Cache-Status %q, %q; want HIT, %q", path, a.cache(), got, before)
		}
	}

	// And never older than s-maxage (polling, as buyers' refreshes would).
	limit := maxAge + 2*time.Second
	for {
		a := fetch(t, nil, "GET", s.Proxy.URL+path, nil, "")
		got := seatsLeft.Find(a.Body)
		if bytes.Equal(got, after) {
			t.Logf("proxy served %q %v after storing %q (s-maxage %v, X-Cache-Status %s)",
				got, time.Since(stored).Round(10*time.Millisecond), before, maxAge, a.cache())
			break
		}
		if time.Since(stored) > limit {
			t.Fatalf("GET %s: got %q (X-Cache-Status %s) %v after the copy was stored, want %q within s-maxage %v",
				path, got, a.cache(), time.Since(stored).Round(time.Millisecond), after, maxAge)
		}
		time.Sleep(100 * time.Millisecond) // a buyer's next refresh; the deadline above bounds the wait
	}
}

// TestSeatStreamThroughProxy: the real live stream, opened through the proxy, delivers a
// seat change while the connection stays open, never from the cache.
func TestSeatStreamThroughProxy(t *testing.T) {
	t.Parallel()
	s := newStack(t, cdn.Config{AccessLog: true})
	b := newBuyer(t, s.Proxy.URL)
	// The stream's URL as the seat page names it.
	seats := b.do(t, "GET", s.Proxy.URL+"/events/"+s.Slug+"/seats", "")
	m := regexp.MustCompile(`sse-connect="([^"]+)"`).FindSubmatch(seats.Body)
	if seats.Status != 200 || m == nil {
		t.Fatalf("seat page: got status %d and no sse-connect, want 200 with the stream's URL", seats.Status)
	}
	path := html.UnescapeString(string(m[1]))
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.Proxy.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: got status %d, Content-Type %q; want 200, text/event-stream", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := resp.Header.Get("X-Cache-Status"); got != "" {
		t.Errorf("stream: got X-Cache-Status %q, want none", got)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	// The stream's greeting comes first: the origin has its watcher, so a change made
	// after it must arrive.
	waitLine(t, lines, func(l string) bool { return strings.HasPrefix(l, "retry:") })
	if a := b.do(t, "POST", s.Proxy.URL+"/api/v1/events/"+strconv.FormatInt(s.EventID, 10)+"/holds", `{"quantity": 2}`); a.Status != http.StatusCreated {
		t.Fatalf("hold: got status %d, body %q; want 201", a.Status, a.Body)
	}
	// The change comes as its seats, or, when the origin's feed learnt the map's
	// version only after the hold (its first read slow on a loaded machine), as a
	// reset to that newer version: either way through the open connection.
	waitLine(t, lines, func(l string) bool { return l == "event: seats" || l == "event: reset" })
}

// waitLine reads lines until one matches, failing if the stream ends or stalls first.
func waitLine(t *testing.T, lines <-chan string, match func(string) bool) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended; got lines %q", seen)
			}
			if match(l) {
				return
			}
			seen = append(seen, l)
		case <-timeout.C:
			t.Fatalf("stream: no matching line within 10s through the proxy; got lines %q", seen)
		}
	}
}
