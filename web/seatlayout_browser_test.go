package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
	"boxoffice/internal/demo"
)

// The seat page's layout as a buyer meets it: on a laptop screen and on a phone. The
// positions are the browser's own (getBoundingClientRect, CSS pixels of the viewport).

// rect is an element's box in the viewport, as getBoundingClientRect gives it.
type rect struct {
	Found                    bool
	Top, Bottom, Left, Right float64
	Width, Height            float64
}

// box is the viewport box of the first element matching a CSS selector.
func box(t *testing.T, ctx context.Context, sel string) rect {
	t.Helper()
	return js[rect](t, ctx, `(() => {
		const e = document.querySelector(`+quote(sel)+`);
		if (!e) return {found: false};
		const r = e.getBoundingClientRect();
		return {found: true, top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height};
	})()`)
}

// onScreen fails the test unless the element is found and wholly within the viewport.
func onScreen(t *testing.T, ctx context.Context, what, sel string) rect {
	t.Helper()
	r := box(t, ctx, sel)
	w, h := js[float64](t, ctx, `window.innerWidth`), js[float64](t, ctx, `window.innerHeight`)
	if !r.Found {
		t.Fatalf("%s (%s): not on the page", what, sel)
	}
	if r.Width == 0 || r.Height == 0 || r.Top < 0 || r.Left < 0 || r.Bottom > h+0.5 || r.Right > w+0.5 {
		t.Errorf("%s: got box %+v, want it wholly within the %.0f×%.0f screen", what, r, w, h)
	}
	return r
}

// mapTop is the seat map's top edge in page coordinates (independent of scrolling).
const mapTop = `document.querySelector("#seatmap .map").getBoundingClientRect().top + window.scrollY`

// holdFirstSeat holds the map's first available seat with a click (or a tap), waits for
// the answer's message, and checks that the map did not move on the page meanwhile.
func holdFirstSeat(t *testing.T, ctx context.Context, tap bool) string {
	t.Helper()
	seat := firstAvailable(t, ctx)
	before := js[float64](t, ctx, mapTop)
	sel := chromedp.CSS("#" + seat + " input")
	if tap {
		browsertest.Do(t, ctx, chromedp.Tap(sel))
	} else {
		browsertest.Do(t, ctx, chromedp.Click(sel))
	}
	waitJS(t, ctx, "the seat to show as the buyer's", hasClass(seat, "mine"), browsertest.Timeout)
	waitJS(t, ctx, "the hold's message", `!!document.querySelector("#seat-message .msg")`, browsertest.Timeout)
	if after := js[float64](t, ctx, mapTop); after != before {
		t.Errorf("the map's top on the page: %.1f px before the message, %.1f after; want it unmoved", before, after)
	}
	return seat
}

// TestBrowserSeatLayoutDesktop: at 1366×900 a hold's message does not move the map,
// and the basket and the key sit beside the map on the first screen and stay in view
// while the map scrolls.
func TestBrowserSeatLayoutDesktop(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	ctx := browsertest.New(t).NewContext(t)
	browsertest.Do(t, ctx, chromedp.EmulateViewport(1366, 900))
	seatPage(t, ctx, app.URL, true)

	holdFirstSeat(t, ctx, false)
	onScreen(t, ctx, "the hold's message", "#seat-message .msg")
	if got := js[string](t, ctx, `document.getElementById("seat-message").getAttribute("role")`); got != "status" {
		t.Errorf("message area role: got %q, want status", got)
	}
	seats := box(t, ctx, "#seatmap .map")
	key := onScreen(t, ctx, "the key", ".legend")
	basket := onScreen(t, ctx, "the basket", "#hold-panel")
	onScreen(t, ctx, "the checkout link", "#hold-panel a.button")
	if key.Left < seats.Right || basket.Left < seats.Right {
		t.Errorf("key at x %.0f, basket at x %.0f: want both beside the map, which ends at x %.0f", key.Left, basket.Left, seats.Right)
	}

	// Half-way down the map: the basket and the key are still on the screen.
	browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, `+mapTop+` + document.querySelector("#seatmap .map").getBoundingClientRect().height / 2)`))
	waitJS(t, ctx, "the page to scroll", `window.scrollY > 300`, browsertest.Timeout)
	onScreen(t, ctx, "the key after scrolling", ".legend")
	onScreen(t, ctx, "the checkout link after scrolling", "#hold-panel a.button")
	noConsoleErrors(t, ctx)
}

// phone opens a tab the size of a phone (390×844 CSS pixels, touch, 3x).
func phone(t *testing.T) context.Context {
	t.Helper()
	ctx := browsertest.New(t).NewContext(t)
	browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	return ctx
}

// rowLettersInView checks, on a phone, that the seats are finger-sized and that the
// first row's letter stands beside its seats both before and after the map is
// scrolled sideways to its far end.
func rowLettersInView(t *testing.T, ctx context.Context) {
	t.Helper()
	if size := js[float64](t, ctx, `(() => { const r = document.querySelector(".map .seat input").getBoundingClientRect(); return Math.min(r.width, r.height); })()`); size < 24 {
		t.Errorf("a seat's target on a phone: got %.1f CSS px, want at least 24", size)
	}
	row := js[string](t, ctx, `document.querySelector(".map .row .row-label").textContent`)
	letter := `(() => {
		const l = Array.from(document.querySelectorAll(".row-rail .row-label")).find(e => e.textContent === ` + quote(row) + `);
		if (!l) return {found: false};
		const r = l.getBoundingClientRect(), at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		const s = document.querySelector(".map .row .seat").getBoundingClientRect();
		return {found: true, left: r.left, right: r.right, shown: !!at && !!at.closest(".row-rail"),
			dy: Math.abs((r.top + r.bottom) / 2 - (s.top + s.bottom) / 2)};
	})()`
	type seen struct {
		Found, Shown    bool
		Left, Right, Dy float64
	}
	for _, end := range []string{"start", "end"} {
		if end == "end" {
			browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector(".map-scroll"); s.scrollLeft = s.scrollWidth; })()`))
			waitJS(t, ctx, "the map to scroll sideways", `document.querySelector(".map-scroll").scrollLeft > 100`, browsertest.Timeout)
		}
		browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector(".map .row").scrollIntoView({block: "center"})`))
		l := js[seen](t, ctx, letter)
		switch {
		case !l.Found:
			t.Fatalf("row %s: no letter in the row letters' strip", row)
		case !l.Shown || l.Left < 0 || l.Right > 390:
			t.Errorf("row %s's letter with the map scrolled to its %s: got %+v, want it on the screen, uncovered", row, end, l)
		case l.Dy > 4:
			t.Errorf("row %s's letter is %.1f px off its seats' line, want at most 4", row, l.Dy)
		}
	}
}

// TestBrowserSeatLayoutPhone: at 390×844, after a tap on a seat the basket's summary is
// a bar fixed to the bottom of the screen with the total, the time left and the way to
// checkout, the end of the page clears it, the map did not move, and the seats are
// finger-sized with their row letters in view.
func TestBrowserSeatLayoutPhone(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	ctx := phone(t)
	seatPage(t, ctx, app.URL, true)
	if js[bool](t, ctx, `!!document.querySelector("#hold-panel .basket-summary")`) {
		t.Fatal("a checkout bar before anything is held")
	}

	holdFirstSeat(t, ctx, true)
	bar := onScreen(t, ctx, "the checkout bar", "#hold-panel .basket-summary")
	if pos := js[string](t, ctx, `getComputedStyle(document.querySelector("#hold-panel .basket-summary")).position`); pos != "fixed" {
		t.Errorf("the checkout bar's position: got %q, want fixed", pos)
	}
	if bar.Bottom < 843 || bar.Width < 389 {
		t.Errorf("the checkout bar: got %+v, want it across the bottom of the screen", bar)
	}
	link := onScreen(t, ctx, "the checkout link", "#hold-panel .basket-summary a.button")
	if link.Height < 44 {
		t.Errorf("the checkout link: %.0f CSS px tall, want 44", link.Height)
	}
	text := js[string](t, ctx, `document.querySelector("#hold-panel .basket-summary").innerText`)
	waitJS(t, ctx, "the bar's countdown", `/\d:\d\d left/.test(document.querySelector("#hold-panel .basket-summary").innerText)`, browsertest.Timeout)
	for _, want := range []string{"Total", "€", "Continue to checkout"} {
		if !strings.Contains(text, want) {
			t.Errorf("the checkout bar says %q, want %q in it", text, want)
		}
	}

	// Scrolled to the end, the page's last part stands above the bar.
	browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`))
	waitJS(t, ctx, "the page to scroll to its end", `window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1`, browsertest.Timeout)
	last, barTop := box(t, ctx, ".seat-layout"), box(t, ctx, "#hold-panel .basket-summary").Top
	if last.Bottom > barTop+0.5 {
		t.Errorf("at the page's end the seat layout ends at y %.0f, under the bar at y %.0f", last.Bottom, barTop)
	}

	rowLettersInView(t, ctx)
	noConsoleErrors(t, ctx)
}

// TestBrowserSeatLayoutBigPhone: on a phone a big venue shows its sections first; a tap
// on one opens its seats, finger-sized with their row letters in view and a way back
// to all sections on the first screen.
func TestBrowserSeatLayoutBigPhone(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	if _, err := demo.Create(context.Background(), app.Pool, demo.BigSpec("big", 5000, time.Now())); err != nil {
		t.Fatal(err)
	}
	ctx := phone(t)
	if resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/events/big/seats")); resp.Status != 200 {
		t.Fatalf("big venue's seat page: got status %d, want 200", resp.Status)
	}
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(".map.overview")))
	if n := js[int](t, ctx, `document.querySelectorAll(".map .seat").length`); n != 0 {
		t.Errorf("the big venue's first page on a phone: %d seats drawn, want its sections first", n)
	}
	first := box(t, ctx, ".map.overview a.section")
	if !first.Found || first.Top > 844 || first.Height < 44 || first.Width < 44 {
		t.Fatalf("the first section's shape: got %+v, want a target of at least 44 px on the first screen", first)
	}

	browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector(".map.overview a.section").scrollIntoView({block: "center"})`))
	browsertest.Follow(t, ctx, "tapping a section", chromedp.Tap(chromedp.CSS(".map.overview a.section rect")), "")
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
	waitJS(t, ctx, "the page's scripts", `document.documentElement.classList.contains("js") && typeof htmx === "object"`, browsertest.Timeout)
	if back := onScreen(t, ctx, "the way back to all sections", "a.back-link"); back.Height < 44 {
		t.Errorf("the way back to all sections: %.0f CSS px tall, want 44", back.Height)
	}
	rowLettersInView(t, ctx)
	noConsoleErrors(t, ctx)
}
