package web_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/apptest"
	"boxoffice/internal/clientnet"
	"boxoffice/internal/demo"
	"boxoffice/web"
)

// knownTokens is a StreamOptions.Known that knows these session tokens.
func knownTokens(tokens ...string) func(context.Context, string) bool {
	return func(_ context.Context, tok string) bool { return slices.Contains(tokens, tok) }
}

// sessionHeader is a request header carrying a session cookie.
func sessionHeader(token string) http.Header {
	return http.Header{"Cookie": {"boxoffice_session=" + token}}
}

// TestStreamCountsIssuedSessions: a session the server issued is held to its share of
// streams; a cookie it never issued makes no session and counts under its address,
// so that made-up cookies, however many, get the address's share and no more. With
// every cookie taken for a session (the negative control), a made-up one is counted
// as one.
func TestStreamCountsIssuedSessions(t *testing.T) {
	t.Parallel()
	sa := newStreamApp(t, web.StreamOptions{MaxPerSession: 1, MaxPerIP: 4, Known: knownTokens("ann")})
	if _, code := sa.open(t, "", sessionHeader("ann")); code != http.StatusOK {
		t.Fatalf("ann's stream: got %d, want 200", code)
	}
	if _, code := sa.open(t, "", sessionHeader("ann")); code != http.StatusTooManyRequests {
		t.Errorf("ann's second stream, one allowed a session: got %d, want 429", code)
	}
	if _, code := sa.open(t, "", sessionHeader("zed")); code != http.StatusOK {
		t.Errorf("a made-up cookie: got %d, want 200, counted by its address", code)
	}
	if _, code := sa.open(t, "", sessionHeader("zed")); code != http.StatusOK {
		t.Errorf("the made-up cookie again: got %d, want 200: it is no session with a share of one", code)
	}
	var admitted int
	for i := range 10 {
		if _, code := sa.open(t, "", sessionHeader("made-up-"+itoa(int64(i)))); code == http.StatusOK {
			admitted++
		}
	}
	if admitted != 1 {
		t.Errorf("ten more made-up cookies from the address with 3 of its 4 streams open: %d admitted, want 1", admitted)
	}
	if sessions := sa.streams.Sessions(); sessions != 1 {
		t.Errorf("sessions counted: got %d, want 1 (ann's)", sessions)
	}

	raw := newStreamApp(t, web.StreamOptions{MaxPerSession: 1, MaxPerIP: 4, Known: func(context.Context, string) bool { return true }})
	raw.open(t, "", sessionHeader("zed"))
	if _, code := raw.open(t, "", sessionHeader("zed")); code != http.StatusTooManyRequests {
		t.Errorf("negative control, every cookie a session: the made-up cookie's second stream got %d, want 429", code)
	}
}

// TestStreamInstanceCap: past MaxStreams the instance refuses every new stream with
// 503 and Retry-After, however the streams are spread over sessions and addresses, so
// that the page's stream connects again later; a stream that ends makes room. Without
// the cap (the negative control) the same streams are all served.
func TestStreamInstanceCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		max    int
		fourth int
	}{{"capped at 3", 3, http.StatusServiceUnavailable}, {"default cap", 0, http.StatusOK}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sa := newStreamApp(t, web.StreamOptions{MaxStreams: tc.max, Known: knownTokens("a", "b", "c", "d")})
			first, _ := sa.open(t, "", sessionHeader("a"))
			sa.open(t, "", sessionHeader("b"))
			sa.open(t, "", sessionHeader("c"))
			req, _ := http.NewRequestWithContext(t.Context(), "GET", sa.url+"/events/"+demo.DemoSpec(time.Now()).Slug+"/stream", nil)
			req.Header = sessionHeader("d")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tc.fourth {
				t.Fatalf("fourth stream: got %d, want %d", res.StatusCode, tc.fourth)
			}
			if tc.fourth == http.StatusOK {
				return
			}
			body, _ := io.ReadAll(res.Body)
			if !strings.Contains(string(body), web.ErrStreamsFull.Message) || res.Header.Get("Retry-After") != "10" {
				t.Errorf("fourth stream: got %s, Retry-After %q; want the words of streams_full and 10", truncate(body), res.Header.Get("Retry-After"))
			}
			first.cancel()
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, code := sa.open(t, "", sessionHeader("d")); code == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("after a stream ended, a new one is still refused")
				}
				<-time.After(10 * time.Millisecond) // the server notices the closed connection
			}
		})
	}
}

// TestStreamAddr: IPv6 clients count per /64, IPv4 per address, an IPv4-mapped
// address as its IPv4 one.
func TestStreamAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{"192.0.2.1", "::ffff:192.0.2.1"},
	} {
		if clientnet.Key(tc.a) != clientnet.Key(tc.b) {
			t.Errorf("%s and %s: got %s and %s, want one address", tc.a, tc.b, clientnet.Key(tc.a), clientnet.Key(tc.b))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"192.0.2.1", "192.0.2.2"},
	} {
		if clientnet.Key(tc.a) == clientnet.Key(tc.b) {
			t.Errorf("%s and %s: both %s, want two addresses", tc.a, tc.b, clientnet.Key(tc.a))
		}
	}
}

// streamWriter is a ResponseWriter for a stream served in-process: it tells the
// status once written and throws the events away.
type streamWriter struct {
	header http.Header
	status chan int
}

func (w *streamWriter) Header() http.Header         { return w.header }
func (w *streamWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *streamWriter) Flush()                      {}
func (w *streamWriter) WriteHeader(code int) {
	select {
	case w.status <- code:
	default:
	}
}

// openFrom opens a stream through h as if from remote (host:port) with the given
// X-Forwarded-For, and returns its status; the stream stays open until the test ends.
func openFrom(t *testing.T, h http.Handler, remote, xff string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req := httptestRequest(ctx, "/events/"+demo.DemoSpec(time.Now()).Slug+"/stream")
	req.RemoteAddr = remote
	if xff != "" {
		req.Header.Set(echo.HeaderXForwardedFor, xff)
	}
	w := &streamWriter{header: http.Header{}, status: make(chan int, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, req)
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case code := <-w.status:
		return code
	case <-done:
		t.Fatalf("stream from %s (X-Forwarded-For %q) ended without an answer", remote, xff)
	case <-time.After(10 * time.Second):
		t.Fatalf("stream from %s (X-Forwarded-For %q): no answer in 10 s", remote, xff)
	}
	return 0
}

func httptestRequest(ctx context.Context, path string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://boxoffice"+path, nil)
	return req
}

// TestTrustedProxies: X-Forwarded-For names the client only when the connection comes
// from loopback or a TRUSTED_PROXIES network. With one stream allowed an address, a
// peer on a private network that forges the header is counted under its own
// address, however it varies the header; from loopback and from the listed network
// each forwarded address is counted for itself. Echo's default extractor, which
// trusts every private network, takes the forged header (the negative control).
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	p := apptest.New(t, apptest.Options{Env: map[string]string{"STREAMS_PER_ADDRESS": "1", "TRUSTED_PROXIES": "10.9.0.0/16"}})
	h := p.Handler

	if code := openFrom(t, h, "10.1.2.3:4000", "198.51.100.1"); code != http.StatusOK {
		t.Fatalf("first stream from a private peer: got %d, want 200", code)
	}
	if code := openFrom(t, h, "10.1.2.3:4001", "198.51.100.2"); code != http.StatusTooManyRequests {
		t.Errorf("second stream from the private peer, forging another address: got %d, want 429", code)
	}
	// The rightmost untrusted entry is the client: what the client itself wrote to
	// the left of it (203.0.113.1) is not taken.
	for _, tc := range []struct{ via, xff string }{
		{"127.0.0.1:5000", "203.0.113.1, 198.51.100.9"},
		{"10.9.0.5:5000", "203.0.113.1, 198.51.100.10, 10.9.0.7"},
		{"127.0.0.1:5001", "198.51.100.11"},
	} {
		if code := openFrom(t, h, tc.via, tc.xff); code != http.StatusOK {
			t.Errorf("via %s for %s: got %d, want 200", tc.via, tc.xff, code)
		}
	}
	for _, tc := range []struct{ via, xff string }{
		{"127.0.0.1:5002", "198.51.100.10"},
		{"10.9.0.6:5000", "198.51.100.9"},
	} {
		if code := openFrom(t, h, tc.via, tc.xff); code != http.StatusTooManyRequests {
			t.Errorf("via %s for %s again: got %d, want 429", tc.via, tc.xff, code)
		}
	}

	req := httptestRequest(t.Context(), "/")
	req.RemoteAddr = "10.1.2.3:4001"
	req.Header.Set(echo.HeaderXForwardedFor, "198.51.100.2")
	if got := echo.ExtractIPFromXFFHeader()(req); got != "198.51.100.2" {
		t.Errorf("negative control: Echo's default took %s, want the forged 198.51.100.2", got)
	}
	var nets []*net.IPNet
	if got := web.ClientAddr(nets)(req); got != "10.1.2.3" {
		t.Errorf("web.ClientAddr: got %s, want the peer 10.1.2.3", got)
	}
}
