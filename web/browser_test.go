package web_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"boxoffice/internal/browsertest"
)

// The browser tests drive the real program (newTestApp) in Debian's Chromium: one
// browser for the package, a browser context (own cookies) per buyer. A failing test
// leaves a screenshot of each of its tabs under .data/screenshots.

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

const demoSlug = "demo-night" // demo.DemoSpec's event

// seatPage opens the seat page in a tab and, if scripts run there, waits until they
// have: htmx, and the page's own script (which marks <html class="js">). On a phone,
// which lists the sections first, it opens the first section.
func seatPage(t *testing.T, ctx context.Context, base string, scripts bool) {
	t.Helper()
	resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(base+"/events/"+demoSlug+"/seats"))
	if resp.Status != 200 {
		t.Fatalf("seat page: got status %d, want 200", resp.Status)
	}
	browsertest.Do(t, ctx, chromedp.WaitReady(chromedp.CSS("#seat-form")))
	if scripts {
		// Complete: every deferred script has run (sections.js, after seats.js, too).
		waitJS(t, ctx, "the page's scripts", `document.readyState === "complete" && document.documentElement.classList.contains("js") && typeof htmx === "object"`, browsertest.Timeout)
		if js[bool](t, ctx, `!!document.querySelector("#live[data-phone=sections]")`) {
			browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS(".section-choice")))
		}
	}
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
}

// streamOpen is true once htmx's SSE extension has its EventSource open.
const streamOpen = `(() => {
	const live = document.getElementById("live");
	const data = live && live["htmx-internal-data"];
	const es = data && data.sseEventSource;
	return !!es && es.readyState === EventSource.OPEN;
})()`

// waitJS polls a JavaScript condition in the tab until it is true, failing the test
// if it is not within d.
func waitJS(t *testing.T, ctx context.Context, what, cond string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond,
		chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("waiting %v for %s: %v", d, what, err)
	}
}

// js evaluates an expression in the tab.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return browsertest.Run(t, ctx, chromedp.Evaluate[T](expr))
}

// firstAvailable is the id of the first seat the map offers, e.g. "seat-17".
func firstAvailable(t *testing.T, ctx context.Context) string {
	t.Helper()
	id := js[string](t, ctx, `(document.querySelector(".map .seat.avail input[name=seat]") || {closest: () => ({id: ""})}).closest(".seat").id`)
	if id == "" {
		t.Fatal("seat map: no available seat")
	}
	return id
}

// seatClass is the class list of a seat's element ("seat avail", "seat held", …).
func seatClass(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	return js[string](t, ctx, `(document.getElementById(`+quote(id)+`) || {getAttribute: () => "missing"}).getAttribute("class")`)
}

func quote(s string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"` }

// hasClass is a JavaScript condition: the element with this id has this class.
func hasClass(id, class string) string {
	return `(() => { const e = document.getElementById(` + quote(id) + `); return !!e && e.classList.contains(` + quote(class) + `); })()`
}

// TestBrowserSeatHeldLive: buyer A holds a seat with a click; buyer B, on the same map
// in a second browser context, sees it held within a second, without reloading.
func TestBrowserSeatHeldLive(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	a, other := b.NewContext(t), b.NewContext(t)
	seatPage(t, a, app.URL, true)
	seatPage(t, other, app.URL, true)
	waitJS(t, other, "buyer B's live stream to open", streamOpen, browsertest.Timeout)
	seat := firstAvailable(t, a)
	// A mark that a reload would wipe out.
	browsertest.Do(t, other, chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))

	browsertest.Do(t, a, chromedp.Click(chromedp.CSS("#"+seat+" input")))
	waitJS(t, a, "buyer A's seat to show as theirs", hasClass(seat, "mine"), browsertest.Timeout)
	waitJS(t, other, "buyer B's map to show the seat held", hasClass(seat, "held"), time.Second)

	if got := js[bool](t, other, `window.__sameDocument === true`); !got {
		t.Errorf("buyer B's page was reloaded, want the seat changed in place")
	}
	if got := seatClass(t, other, seat); strings.Contains(got, "mine") {
		t.Errorf("buyer B's seat %s: got class %q, want held, not theirs", seat, got)
	}
	noConsoleErrors(t, a, other)
}

// noConsoleErrors fails the test for each console error or uncaught exception in the
// tabs' pages.
func noConsoleErrors(t *testing.T, tabs ...context.Context) {
	t.Helper()
	for _, tab := range tabs {
		for _, m := range browsertest.Errors(tab) {
			t.Errorf("console %s at %s: %s", m.Type, m.URL, m.Text)
		}
	}
}

// TestBrowserSeatJustTaken: buyer B's map is behind (its live stream is blocked), so a
// seat A has just held still looks free to B; B's click on it says it was just taken,
// and the seat flips to held on B's map.
func TestBrowserSeatJustTaken(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	a, other := b.NewContext(t), b.NewContext(t)
	_, err := chromedp.Call(other, network.SetBlockedURLs, network.SetBlockedURLsParams{
		URLPatterns: []*network.BlockPattern{{URLPattern: "*://*:*/events/*/stream*", Block: true}},
	})
	if err != nil {
		t.Fatalf("blocking buyer B's stream: %v", err)
	}
	seatPage(t, a, app.URL, true)
	seatPage(t, other, app.URL, true)
	seat := firstAvailable(t, a)

	browsertest.Do(t, a, chromedp.Click(chromedp.CSS("#"+seat+" input")))
	waitJS(t, a, "buyer A's seat to show as theirs", hasClass(seat, "mine"), browsertest.Timeout)
	if got := seatClass(t, other, seat); !strings.Contains(got, "avail") {
		t.Fatalf("buyer B's seat %s before the click: got class %q, want still available (stream blocked)", seat, got)
	}

	browsertest.Do(t, other, chromedp.Click(chromedp.CSS("#"+seat+" input")))
	waitJS(t, other, "buyer B's map to flip the seat to held", hasClass(seat, "held"), browsertest.Timeout)
	msg := browsertest.Run(t, other, chromedp.Text(chromedp.CSS("#seat-message")))
	if !strings.Contains(msg, "just taken") {
		t.Errorf("buyer B's message: got %q, want it to say the seat was just taken", msg)
	}
	if got := seatClass(t, other, seat); strings.Contains(got, "mine") {
		t.Errorf("buyer B's seat %s: got class %q, want held by someone else", seat, got)
	}
}

// TestBrowserPurchase: a buyer holds a seat, checks out with the test card, and reaches
// the order page, which shows the ticket with its QR code.
func TestBrowserPurchase(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	seatPage(t, ctx, app.URL, true)
	seat := firstAvailable(t, ctx)
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+seat+" input")))
	waitJS(t, ctx, "the seat to show as the buyer's", hasClass(seat, "mine"), browsertest.Timeout)

	payWithTestCard(t, ctx, "#hold-panel a.button", "ada@example.com")
	waitJS(t, ctx, "a ticket with its QR code", `!!document.querySelector(".tickets .ticket svg.qr path[d]")`, 20*time.Second)
	tickets := js[int](t, ctx, `document.querySelectorAll(".tickets .ticket").length`)
	if tickets != 1 {
		t.Errorf("tickets: got %d, want 1", tickets)
	}
	if d := js[int](t, ctx, `document.querySelector(".ticket svg.qr path").getAttribute("d").length`); d < 200 {
		t.Errorf("QR code path: got %d characters, want a drawn code (200 or more)", d)
	}
	code := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS(".ticket-code code")))
	if len(code) < 20 {
		t.Errorf("ticket code: got %q, want a long code", code)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserKeyboardHold: with the keyboard alone (Tab into the map, arrows to a seat,
// Space), a buyer holds a seat.
func TestBrowserKeyboardHold(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	seatPage(t, ctx, app.URL, true)

	inMap := `!!(document.activeElement && document.activeElement.closest && document.activeElement.closest(".map .seat"))`
	for i := 0; ; i++ {
		if js[bool](t, ctx, inMap) {
			break
		}
		if i == 60 {
			t.Fatalf("60 presses of Tab never reached the seat map; focus is on %s",
				js[string](t, ctx, `document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : "nothing"`))
		}
		browsertest.Do(t, ctx, chromedp.KeyEvent(kb.Tab))
	}
	first := js[string](t, ctx, `document.activeElement.closest(".seat").id`)
	browsertest.Do(t, ctx, chromedp.KeyEvent(kb.ArrowRight))
	seat := js[string](t, ctx, `document.activeElement.closest(".seat").id`)
	if seat == first {
		t.Fatalf("ArrowRight: focus stayed on %s, want the next seat", seat)
	}
	browsertest.Do(t, ctx, chromedp.KeyEvent(" "))
	waitJS(t, ctx, "the seat chosen by keyboard to be held", hasClass(seat, "mine"), browsertest.Timeout)
	panel := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#hold-panel")))
	if !strings.Contains(panel, "Continue to checkout") {
		t.Errorf("hold panel: got %q, want the hold with a way to checkout", panel)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserNoJavaScriptHold: in a browser that runs no script, ticking seats on the
// map and pressing the form's button holds them.
func TestBrowserNoJavaScriptHold(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t, browsertest.NoJavaScript())
	seatPage(t, ctx, app.URL, false)
	if js[bool](t, ctx, `document.documentElement.classList.contains("js")`) {
		t.Fatal("the page's script ran in a tab without JavaScript")
	}
	ids := js[[]string](t, ctx, `Array.from(document.querySelectorAll(".map .seat.avail")).slice(0, 2).map(e => e.id)`)
	if len(ids) != 2 {
		t.Fatalf("available seats: got %v, want 2", ids)
	}
	for _, id := range ids {
		browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+id+" input")))
	}
	browsertest.Follow(t, ctx, "posting the form", chromedp.Click(chromedp.CSS("#seat-form button[type=submit]")), "/events/"+demoSlug+"/seats")
	for _, id := range ids {
		if got := seatClass(t, ctx, id); !strings.Contains(got, "mine") {
			t.Errorf("seat %s after the form's post: got class %q, want mine", id, got)
		}
	}
	panel := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#hold-panel")))
	if strings.Count(panel, "row ") != 2 {
		t.Errorf("hold panel: got %q, want the two seats", panel)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserQueueAdmits: a buyer waits on the queue page while the event's one
// shopper slot is taken; when the shopper releases, the page (htmx polling) moves the
// buyer on to the seat map without a touch.
func TestBrowserQueueAdmits(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	runQueue(t, app)
	shopper := app.newClient(t)
	if q := shopper.queue("POST", app.EventID); !q.Admitted {
		t.Fatalf("first buyer: got %+v, want admitted", q)
	}
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/events/"+demoSlug+"/queue"))
	if resp.Status != 200 {
		t.Fatalf("queue page: got status %d, want 200", resp.Status)
	}
	waitJS(t, ctx, "htmx", `typeof htmx === "object"`, browsertest.Timeout)
	if text := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#queue"))); !strings.Contains(text, "number 1") {
		t.Fatalf("queue page: got %q, want the buyer first in line", text)
	}

	held := shopper.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	if st := shopper.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != 204 {
		t.Fatalf("release: got %d, want 204", st)
	}
	// The page navigates away by itself: wait for the seat map's form in whatever
	// document the tab shows (a JavaScript poll would die with the queue page).
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
	if path := js[string](t, ctx, `location.pathname`); path != "/events/"+demoSlug+"/seats" {
		t.Errorf("after admission: at %s, want the seat map", path)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserPhone: on a phone-sized screen (390 by 844 CSS pixels, touch, 3x) the seat
// map keeps its seats at least 24 CSS pixels apart, large enough to tap, with the page
// itself no wider than the screen (the map scrolls in its own box); focusing a seat
// shows its name and price (as hovering does with a mouse).
func TestBrowserPhone(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	seatPage(t, ctx, app.URL, true)

	// Centre-to-centre distance of the first two seats of a row, and a seat's own box.
	gap := js[float64](t, ctx, `(() => {
		const s = document.querySelectorAll(".map .row")[0].querySelectorAll(".seat input");
		const a = s[0].getBoundingClientRect(), b = s[1].getBoundingClientRect();
		return Math.hypot((b.x + b.width / 2) - (a.x + a.width / 2), (b.y + b.height / 2) - (a.y + a.height / 2));
	})()`)
	if gap < 24 {
		t.Errorf("seats on a phone: got %.1f CSS px apart, want at least 24 to tap one", gap)
	}
	size := js[float64](t, ctx, `(() => { const r = document.querySelector(".map .seat input").getBoundingClientRect(); return Math.min(r.width, r.height); })()`)
	if size < 16 {
		t.Errorf("a seat's target on a phone: got %.1f CSS px, want at least 16", size)
	}
	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("page on a phone: %.0f CSS px wider than the screen, want the map to scroll in its own box", over)
	}

	// Focus a seat: its name and price show, for eyes as well as screen readers.
	browsertest.Do(t, ctx, chromedp.Focus(chromedp.CSS(".map .seat.avail input")))
	waitJS(t, ctx, "the focused seat's name and price", `document.getElementById("seat-info").textContent.includes("€")`, browsertest.Timeout)
	info := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#seat-info")))
	label := js[string](t, ctx, `document.activeElement.getAttribute("aria-label")`)
	if info != label || !strings.Contains(label, "row") {
		t.Errorf("shown on focus: got %q, want the seat's name and price %q", info, label)
	}
	noConsoleErrors(t, ctx)
}
