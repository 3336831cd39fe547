package browsertest_test

import (
	"bytes"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/apptest"
	"boxoffice/internal/browsertest"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// newServer is the real program (app.New, handler and all) on a fresh database with
// the demo event, as web's tests build it.
func newServer(t *testing.T) string {
	t.Helper()
	return apptest.New(t, apptest.Options{}).Serve(t)
}

// TestHomePage loads the real home page: its title, its heading, htmx loaded, and not
// one console error or CSP violation (the cleanup fails the test on the latter).
func TestHomePage(t *testing.T) {
	t.Parallel()
	base := newServer(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)

	resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(base+"/"))
	if resp.Status != http.StatusOK {
		t.Fatalf("GET /: got status %d, want 200", resp.Status)
	}
	if got, want := browsertest.Run(t, ctx, chromedp.Title()), "On sale · boxoffice"; got != want {
		t.Errorf("title: got %q, want %q", got, want)
	}
	if got := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("main h1"))); got != "On sale" {
		t.Errorf("heading: got %q, want %q", got, "On sale")
	}
	// The deferred scripts ran: htmx is there (the page's behaviour rests on it).
	if ok := browsertest.Run(t, ctx, chromedp.Poll[bool](`typeof htmx === "object" && htmx.version.startsWith("2.")`)); !ok {
		t.Errorf("htmx 2 not loaded")
	}
	for _, m := range browsertest.Errors(ctx) {
		t.Errorf("console %s at %s: %s", m.Type, m.URL, m.Text)
	}
}

// strictPage serves a page under the program's kind of policy that breaks it three ways
// (an inline script, an inline style, an inline handler), and one that runs a script.
func strictPage(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/violations":
			w.Header().Set("Content-Security-Policy", "default-src 'self'")
			_, _ = io.WriteString(w, `<!DOCTYPE html><title>bad</title><style>p{color:red}</style>`+
				`<script>document.title="ran"</script><button onclick="x()">b</button><p>bad</p>`)
		case "/script":
			_, _ = io.WriteString(w, `<!DOCTYPE html><title>before</title><script>document.title="ran"</script><p>x</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCSPViolationsAreSeen is the negative control: a page that breaks its policy is
// reported, so a clean report about the real pages means something.
func TestCSPViolationsAreSeen(t *testing.T) {
	t.Parallel()
	base := strictPage(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t, browsertest.AllowCSPViolations())
	browsertest.Do(t, ctx, chromedp.Navigate(base+"/violations"))
	if got := browsertest.Run(t, ctx, chromedp.Title()); got != "bad" {
		t.Errorf("title: got %q, want %q (the inline script must have been blocked)", got, "bad")
	}
	// The inline style and script are reported as the page loads; wait for them.
	deadline := time.Now().Add(browsertest.Timeout)
	for len(browsertest.CSPViolations(ctx)) < 2 && time.Now().Before(deadline) {
		browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`0`)) // a round trip, during which events arrive
	}
	if got := browsertest.CSPViolations(ctx); len(got) < 2 {
		t.Errorf("CSP violations: got %d (%v), want at least 2 (inline style, inline script)", len(got), got)
	}
}

// TestNoJavaScript: a tab opened with NoJavaScript runs no script, on every page it loads.
func TestNoJavaScript(t *testing.T) {
	t.Parallel()
	base := strictPage(t)
	b := browsertest.New(t)
	for _, tc := range []struct {
		opts []browsertest.Option
		want string
	}{
		{nil, "ran"},
		{[]browsertest.Option{browsertest.NoJavaScript()}, "before"},
	} {
		ctx := b.NewContext(t, tc.opts...)
		for range 2 { // a second load: the setting outlives a navigation
			browsertest.Do(t, ctx, chromedp.Navigate(base+"/script"))
			if got := browsertest.Run(t, ctx, chromedp.Title()); got != tc.want {
				t.Errorf("title with %d options: got %q, want %q", len(tc.opts), got, tc.want)
			}
		}
	}
}

// TestSeparateCookieJars: two tabs are two buyers: a cookie set in one is not sent by
// the other.
func TestSeparateCookieJars(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: "a", Path: "/"})
		}
		c, _ := r.Cookie("who")
		name := "nobody"
		if c != nil {
			name = c.Value
		}
		_, _ = io.WriteString(w, "<!DOCTYPE html><title>"+name+"</title>")
	}))
	t.Cleanup(srv.Close)
	b := browsertest.New(t)
	a, other := b.NewContext(t), b.NewContext(t)
	browsertest.Do(t, a, chromedp.Navigate(srv.URL+"/set"))
	browsertest.Do(t, a, chromedp.Navigate(srv.URL+"/"))
	browsertest.Do(t, other, chromedp.Navigate(srv.URL+"/"))
	if got := browsertest.Run(t, a, chromedp.Title()); got != "a" {
		t.Errorf("tab a: got cookie %q, want %q", got, "a")
	}
	if got := browsertest.Run(t, other, chromedp.Title()); got != "nobody" {
		t.Errorf("other tab: got cookie %q, want none (%q)", got, "nobody")
	}
}

// TestScreenshot takes a screenshot the way a failed test does and checks the file: a
// PNG of the whole page, named after the test, under .data/screenshots of the module.
func TestScreenshot(t *testing.T) {
	t.Parallel()
	base := strictPage(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Do(t, ctx, chromedp.Navigate(base+"/script"))
	var paths []string
	for range 2 {
		path, err := browsertest.Screenshot(t, ctx)
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		t.Cleanup(func() { _ = os.Remove(path) })
		paths = append(paths, path)
	}
	for i, path := range paths {
		if want := "/.data/screenshots/TestScreenshot-" + strconv.Itoa(i+1) + ".png"; !strings.HasSuffix(path, want) {
			t.Errorf("screenshot %d: got path %s, want one ending in %s", i+1, path, want)
		}
	}
	raw, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("screenshot: not a PNG: %v", err)
	}
	if got := img.Bounds().Dx(); got != 1280 {
		t.Errorf("screenshot width: got %d, want 1280 (the window)", got)
	}
}
