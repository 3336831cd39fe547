package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
)

// inView is a JavaScript condition: every element matching sel (at least one) is
// shown and lies wholly inside the window's viewport.
func inView(sel string) string {
	return `(() => {
		const els = document.querySelectorAll(` + quote(sel) + `);
		return els.length > 0 && Array.from(els).every(e => {
			const r = e.getBoundingClientRect();
			return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
		});
	})()`
}

// balconyG20 selects the seat Balcony G20 by its accessible name.
const balconyG20 = `.map .seat:has(input[aria-label^="Balcony, row G, seat 20,"])`

// TestBrowserBestPicked: asked for the best two at 25.00, the page marks the two seats
// it found (the middle of the Balcony's row G), says which and their price, and
// scrolls them into view; before, on a phone, they were below the fold. Without
// JavaScript the page after the form's post does the same by itself.
func TestBrowserBestPicked(t *testing.T) {
	t.Parallel()
	for _, scripts := range []bool{true, false} {
		name := map[bool]string{true: "script", false: "no script"}[scripts]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			app := newTestApp(t)
			b := browsertest.New(t)
			var opts []browsertest.Option
			if !scripts {
				opts = append(opts, browsertest.NoJavaScript())
			}
			ctx := b.NewContext(t, opts...)
			browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
			seatPage(t, ctx, app.URL, scripts)
			if js[bool](t, ctx, inView(balconyG20)) {
				t.Fatal("Balcony G20 is in view before asking: the test would show nothing")
			}
			browsertest.Do(t, ctx,
				chromedp.SetValue(chromedp.CSS("#best-qty"), "2"),
				chromedp.SetValue(chromedp.CSS("#best-price"), "2500"),
			)
			if scripts {
				browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("form.best button[type=submit]")))
			} else {
				browsertest.Follow(t, ctx, "posting the form", chromedp.Click(chromedp.CSS("form.best button[type=submit]")), "?picked=")
			}
			waitJS(t, ctx, "two seats marked picked", `document.querySelectorAll(".map .seat.picked.mine").length === 2`, browsertest.Timeout)
			waitJS(t, ctx, "the picked seats in view", inView(".map .seat.picked"), browsertest.Timeout)
			if !js[bool](t, ctx, inView(balconyG20)) {
				t.Error("Balcony G20 is not in view")
			}
			labels := js[[]string](t, ctx, `Array.from(document.querySelectorAll(".map .seat.picked input[aria-label]")).map(i => i.getAttribute("aria-label"))`)
			for _, l := range labels {
				if !strings.HasPrefix(l, "Balcony, row G, seat 2") || !strings.Contains(l, "€25") {
					t.Errorf("picked seat %q, want Balcony row G 20 or 21 at €25", l)
				}
			}
			msg := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#seat-message")))
			if !strings.Contains(msg, "2 seats found: Balcony row G, 20–21, €25 each.") {
				t.Errorf("message: got %q, want it to say which seats were found and their price", msg)
			}
			noConsoleErrors(t, ctx)
		})
	}
}
