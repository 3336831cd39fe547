// Package browsertest drives Debian's Chromium (chromedp, headless) for boxoffice's
// browser tests. A test binary starts one browser, on first use, and each buyer in a test
// gets a tab in a browser context of its own: its own cookies, storage and cache, as a
// second person on a second computer would have, at the cost of a tab rather than a
// browser. Every tab records what the page wrote to its console; a Content-Security-
// Policy violation fails the test, and a failed test leaves a screenshot of each of its
// tabs behind.
//
// A package that uses it calls Main from TestMain, so that the browser stops when the
// tests end:
//
//	func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }
//
// It imports no package of boxoffice: a test hands it the address of a server it built.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Environment variables that change where and whether the browser runs.
const (
	// EnvChromium names the browser program (default: chromium on PATH, then
	// /usr/bin/chromium).
	EnvChromium = "BOXOFFICE_CHROMIUM"
	// EnvSkip=1 lets a machine without Chromium skip the browser tests; anywhere else
	// (CI, where make test installs it) a missing browser fails them.
	EnvSkip = "BOXOFFICE_SKIP_BROWSER"
	// EnvScreenshots is the folder for screenshots of failed tests (default:
	// .data/screenshots at the top of the module, which git ignores).
	EnvScreenshots = "BOXOFFICE_SCREENSHOTS"
)

// Timeout bounds each Do and Run: long enough for a page on a busy two-core machine,
// short enough that a wait for something that never happens fails the test soon.
const Timeout = 15 * time.Second

// flags are those that work on these machines: headless, no sandbox (root in a
// container), no GPU, and none of the background connections to Google's services,
// which a closed network refuses many at a time and which slow every start.
var flags = []chromedp.ExecAllocatorOption{
	chromedp.Headless,
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.NoFirstRun,
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-domain-reliability", true),
	chromedp.Flag("mute-audio", true),
	chromedp.Flag("hide-scrollbars", true),
	chromedp.WindowSize(1280, 900),
}

// Browser is the test binary's Chromium.
type Browser struct {
	ctx context.Context // the browser's first tab; new browser contexts are made from it
}

var shared struct {
	sync.Mutex
	b      *Browser
	err    error
	cancel []func()
	shots  map[string]int // screenshots taken per test, for their names
}

// Chromium finds the browser program: $BOXOFFICE_CHROMIUM, then chromium on PATH, then
// Debian's /usr/bin/chromium.
func Chromium() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	return "", errors.New("browsertest: chromium not found (Debian package chromium; `.ci/services.sh test` installs it)")
}

// New returns the test binary's browser, starting it on first use. Without Chromium
// the test fails, or skips where BOXOFFICE_SKIP_BROWSER=1.
func New(t testing.TB) *Browser {
	t.Helper()
	path, err := Chromium()
	if err != nil {
		if os.Getenv(EnvSkip) == "1" {
			t.Skipf("%s=1: %v", EnvSkip, err)
		}
		t.Fatalf("%v; install it (apt-get install chromium) or set %s=1 to skip", err, EnvSkip)
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.b == nil && shared.err == nil {
		shared.b, shared.err = start(path)
	}
	if shared.err != nil {
		t.Fatalf("browsertest: starting %s: %v", path, shared.err)
	}
	return shared.b
}

// start runs Chromium, with a fresh profile folder that chromedp deletes when it stops.
func start(path string) (*Browser, error) {
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(path)}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, flags...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	stop := func() { cancelBrowser(); cancelAlloc() }
	if err := first(ctx, 30*time.Second, stop); err != nil {
		return nil, err
	}
	shared.cancel = append(shared.cancel, stop)
	return &Browser{ctx: ctx}, nil
}

// first runs the first (empty) Do on a chromedp context, which starts the browser or
// opens the tab. chromedp ties what it starts to the context of that call, so the
// deadline cannot be on the context: past d, cancel gives up on the start instead.
func first(ctx context.Context, d time.Duration, cancel context.CancelFunc) error {
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(ctx) }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-errc:
		if err != nil {
			cancel()
		}
		return err
	case <-timer.C:
		cancel()
		return fmt.Errorf("no answer within %v", d)
	}
}

// Main runs the tests, then stops the browser (if a test started it) and deletes its
// profile. Without it the browser still dies with the test binary, but its profile
// folder stays in the temporary directory.
func Main(m *testing.M) int {
	code := m.Run()
	shared.Lock()
	defer shared.Unlock()
	for _, cancel := range shared.cancel {
		cancel()
	}
	shared.cancel, shared.b = nil, nil
	return code
}

// tab is one buyer: a tab in its own browser context, with what its pages logged.
type tab struct {
	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

type tabKey struct{}

// Option changes a new tab.
type Option func(*tabOptions)

type tabOptions struct {
	noScript, allowCSP bool
}

// NoJavaScript opens a tab in which pages run no script: the buyer for whom every
// page must still work as plain HTML forms.
func NoJavaScript() Option { return func(o *tabOptions) { o.noScript = true } }

// AllowCSPViolations keeps a tab's Content-Security-Policy violations from failing
// the test: for the test that proves they are seen, and nothing else.
func AllowCSPViolations() Option { return func(o *tabOptions) { o.allowCSP = true } }

// NewContext opens a tab in a new browser context, for one buyer, and returns the
// context to run chromedp actions in. It has no deadline of its own (use Do and Run,
// or a timeout of your own). When the test ends the tab closes; before that, a
// Content-Security-Policy violation in any of its pages fails the test, and if the
// test failed a screenshot of the tab is saved and its path logged.
func (b *Browser) NewContext(t testing.TB, opts ...Option) context.Context {
	t.Helper()
	var o tabOptions
	for _, f := range opts {
		f(&o)
	}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	tb := &tab{}
	ctx = context.WithValue(ctx, tabKey{}, tb)
	err := first(ctx, Timeout, cancel)
	if err == nil && o.noScript {
		callCtx, cancelCall := context.WithTimeout(ctx, Timeout)
		_, err = chromedp.Call(callCtx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		cancelCall()
	}
	if err != nil {
		cancel()
		t.Fatalf("browsertest: opening a tab: %v", err)
	}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.console = append(tb.console, m)
			tb.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			if path, err := Screenshot(t, ctx); err != nil {
				t.Logf("browsertest: no screenshot: %v", err)
			} else {
				t.Logf("browsertest: screenshot of the failed test: %s", path)
			}
		}
		for _, m := range CSPViolations(ctx) {
			if o.allowCSP {
				break
			}
			t.Errorf("Content-Security-Policy violation at %s: %s", m.URL, m.Text)
		}
		cancel()
		<-done
	})
	return ctx
}

// Console returns what the tab's pages wrote to the console so far: console calls,
// uncaught exceptions and the browser's own log entries (failed loads, CSP).
func Console(ctx context.Context) []chromedp.ConsoleMessage {
	tb, _ := ctx.Value(tabKey{}).(*tab)
	if tb == nil {
		return nil
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), tb.console...)
}

// Errors returns the console errors and uncaught exceptions of the tab's pages.
func Errors(ctx context.Context) []chromedp.ConsoleMessage {
	var out []chromedp.ConsoleMessage
	for _, m := range Console(ctx) {
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
			out = append(out, m)
		}
	}
	return out
}

// CSPViolations returns the tab's Content-Security-Policy violations: Chromium reports
// each blocked script, style or handler as a console error naming the policy.
func CSPViolations(ctx context.Context) []chromedp.ConsoleMessage {
	var out []chromedp.ConsoleMessage
	for _, m := range Console(ctx) {
		if strings.Contains(m.Text, "Content Security Policy") {
			out = append(out, m)
		}
	}
	return out
}

// Do runs actions in the tab with a deadline of Timeout and fails the test on an error.
func Do(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// Run runs one action in the tab with a deadline of Timeout and returns its value; it
// fails the test on an error.
func Run[T any](t testing.TB, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// Follow runs an action that leads the tab to another page (a click on a link or a
// submit button, a key, a tap) and waits, within Timeout, for that page's answer. It
// fails the test unless the answer is 200 at a URL containing urlHas. A test that
// waits for the new page's elements after Follow waits on the new page, never on the
// one the action left.
func Follow(t testing.TB, ctx context.Context, what string, a chromedp.Action[chromedp.Void], urlHas string) *network.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v, want a page at a URL with %q", what, err, urlHas)
	}
	if resp.Status != 200 || !strings.Contains(resp.URL, urlHas) {
		t.Fatalf("%s: got %d %s at %s, want 200 at a URL with %q", what, resp.Status, resp.StatusText, resp.URL, urlHas)
	}
	return resp
}

// Screenshot saves a PNG of the whole page in the tab, named after the test, and
// returns its path.
func Screenshot(t testing.TB, ctx context.Context) (string, error) {
	dir, err := screenshotDir()
	if err != nil {
		return "", err
	}
	// A page in the middle of a navigation (a failed test's last click) cannot be
	// captured: try again until it can, within Timeout.
	var png []byte
	deadline := time.Now().Add(Timeout)
	for {
		sctx, cancel := context.WithTimeout(ctx, Timeout)
		png, err = chromedp.Run(sctx, chromedp.FullScreenshot(100))
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("capturing: %w", err)
		}
		time.Sleep(100 * time.Millisecond) // polling the page until it can be captured, bounded by deadline
	}
	shared.Lock()
	if shared.shots == nil {
		shared.shots = map[string]int{}
	}
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	shared.shots[name]++
	n := shared.shots[name]
	shared.Unlock()
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, n))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// screenshotDir is $BOXOFFICE_SCREENSHOTS, or .data/screenshots at the top of the module:
// outside the test's temporary folder, which is gone by the time anyone looks.
func screenshotDir() (string, error) {
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		top, err := moduleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(top, ".data", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Abs(dir)
}

// moduleRoot is the nearest folder above the working directory (a test's is its
// package's) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("browsertest: no go.mod above the working directory; set " + EnvScreenshots)
		}
		dir = parent
	}
}
