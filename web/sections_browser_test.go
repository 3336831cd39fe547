package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
)

// shownSeats is a JavaScript expression: the accessible names of the map's seats that
// are drawn (have a box), in document order.
const shownSeats = `Array.from(document.querySelectorAll(".map .seat input")).filter(i => i.getBoundingClientRect().width > 0).map(i => i.getAttribute("aria-label"))`

// phoneShows is a JavaScript condition: the phone's view of the map is "sections" or
// "section".
func phoneShows(what string) string {
	return `!!document.querySelector("#live[data-phone=` + what + `]")`
}

// choiceText is the text of the phone's list entry of a section.
func choiceText(t *testing.T, ctx context.Context, section string) string {
	t.Helper()
	return js[string](t, ctx, `document.querySelector(".section-choice[data-section='`+section+`']").innerText`)
}

// TestBrowserPhoneSections: at 390×844 the demo venue (three sections drawn whole on a
// wide screen) shows its sections first, as large targets with the seats left and the
// prices, and the key a tap away; a tap on a section shows its seats alone, in place,
// at 36 px with their row letters in view and the way back on the screen. A seat of
// another section that someone holds meanwhile is counted in the list at once and
// shows held when its section is shown. A tap on a seat puts it in the basket and the
// checkout bar shows; the phone's own Back returns to the list.
func TestBrowserPhoneSections(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	ctx := phone(t)
	if resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/events/"+demoSlug+"/seats")); resp.Status != 200 {
		t.Fatalf("seat page: got status %d, want 200", resp.Status)
	}
	waitJS(t, ctx, "the page's scripts", `document.readyState === "complete" && typeof htmx === "object"`, browsertest.Timeout)
	waitJS(t, ctx, "the sections first", phoneShows("sections"), browsertest.Timeout)
	if seats := js[[]string](t, ctx, shownSeats); len(seats) != 0 {
		t.Errorf("the first screen on a phone shows %d seats (%q…), want the sections first", len(seats), seats[0])
	}
	for i, want := range []string{"Stalls", "Circle", "Balcony"} {
		sel := fmt.Sprintf(".section-pick li:nth-child(%d) .section-choice", i+1)
		r := onScreen(t, ctx, "section "+want+" in the list", sel)
		if r.Height < 44 || r.Width < 300 {
			t.Errorf("section %s's target: got %.0f×%.0f CSS px, want at least 300×44", want, r.Width, r.Height)
		}
		if text := js[string](t, ctx, `document.querySelector(`+quote(sel)+`).innerText`); !strings.Contains(text, want) || !strings.Contains(text, "seats left") || !strings.Contains(text, "€") {
			t.Errorf("section %d in the list says %q, want %s, its seats left and prices", i+1, text, want)
		}
	}
	if text := choiceText(t, ctx, "Circle"); !strings.Contains(text, "540 of 540 seats left") {
		t.Errorf("Circle in the list says %q, want 540 of 540 seats left", text)
	}

	// The key opens over the map from the bar above it.
	if k := onScreen(t, ctx, "the key's toggle", ".key-peek summary"); k.Height < 44 {
		t.Errorf("the key's toggle: %.0f CSS px tall, want 44", k.Height)
	}
	browsertest.Do(t, ctx, chromedp.Tap(chromedp.CSS(".key-peek summary")))
	onScreen(t, ctx, "the key, opened", ".key-peek .key-body")
	if text := js[string](t, ctx, `document.querySelector(".key-peek .key-body").innerText`); !strings.Contains(text, "Available") || !strings.Contains(text, "€95") {
		t.Errorf("the key says %q, want the states and the prices", text)
	}
	browsertest.Do(t, ctx, chromedp.Tap(chromedp.CSS(".key-peek summary")))

	// A section: its seats alone, in place (the same document), finger-sized.
	browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	browsertest.Do(t, ctx, chromedp.Tap(chromedp.CSS(`.section-choice[data-section="Stalls"]`)))
	waitJS(t, ctx, "Stalls' seats", phoneShows("section"), browsertest.Timeout)
	seats := js[[]string](t, ctx, shownSeats)
	if len(seats) != 800 {
		t.Errorf("Stalls on a phone: %d seats drawn, want its 800", len(seats))
	}
	for _, s := range seats {
		if !strings.HasPrefix(s, "Stalls,") {
			t.Errorf("Stalls on a phone draws %q, want Stalls' seats alone", s)
			break
		}
	}
	if size := js[float64](t, ctx, `(() => { const r = document.querySelector(".map .seat input").getBoundingClientRect(); return Math.min(r.width, r.height); })()`); size < 36 {
		t.Errorf("a seat's target in a section on a phone: got %.1f CSS px, want at least 36", size)
	}
	if name := js[string](t, ctx, `document.querySelector(".phone-bar .shown-name").textContent`); name != "Section Stalls" {
		t.Errorf("the bar names %q, want Section Stalls", name)
	}
	rowLettersInView(t, ctx)
	if back := onScreen(t, ctx, "the way back to all sections", ".sections-back"); back.Height < 44 {
		t.Errorf("the way back: %.0f CSS px tall, want 44", back.Height)
	}

	// Someone else holds a seat of the Circle, not shown: the stream still changes it.
	circle := js[string](t, ctx, `document.querySelector('.row[data-section="Circle"] .seat.avail input[name=seat]').value`)
	other := app.newClient(t)
	if status := other.do("POST", fmt.Sprintf("/api/v1/events/%d/holds", app.EventID), map[string]any{"seatIds": []json.Number{json.Number(circle)}}, nil); status != http.StatusCreated {
		t.Fatalf("another buyer's hold of Circle seat %s: got status %d, want 201", circle, status)
	}
	waitJS(t, ctx, "the hidden Circle seat to turn held", hasClass("seat-"+circle, "held"), browsertest.Timeout)

	browsertest.Do(t, ctx, chromedp.Tap(chromedp.CSS(".sections-back")))
	waitJS(t, ctx, "the sections again", phoneShows("sections"), browsertest.Timeout)
	onScreen(t, ctx, "the list after the way back", ".section-pick")
	waitJS(t, ctx, "Circle's count to drop", `document.querySelector('.section-choice[data-section="Circle"]').innerText.includes("539 of 540 seats left")`, browsertest.Timeout)

	browsertest.Do(t, ctx, chromedp.Tap(chromedp.CSS(`.section-choice[data-section="Circle"]`)))
	waitJS(t, ctx, "Circle's seats", `document.querySelector(".phone-bar .shown-name").textContent === "Section Circle"`, browsertest.Timeout)
	if w := js[float64](t, ctx, `document.getElementById("seat-`+circle+`").getBoundingClientRect().width`); w == 0 || !strings.Contains(seatClass(t, ctx, "seat-"+circle), "held") {
		t.Errorf("the seat held meanwhile, with Circle shown: width %.0f, class %q; want it drawn, held", w, seatClass(t, ctx, "seat-"+circle))
	}

	// A tap on a seat holds it; the checkout bar shows.
	seat := js[string](t, ctx, `document.querySelector('.row:not(.off) .seat.avail input[name=seat]').closest(".seat").id`)
	browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById(`+quote(seat)+`).scrollIntoView({block: "center", inline: "center"})`))
	browsertest.Do(t, ctx, chromedp.Tap(chromedp.CSS("#"+seat+" input")))
	waitJS(t, ctx, "the seat in the basket", hasClass(seat, "mine"), browsertest.Timeout)
	waitJS(t, ctx, "the checkout bar", `!!document.querySelector("#hold-panel .basket-summary")`, browsertest.Timeout)
	onScreen(t, ctx, "the checkout link", "#hold-panel .basket-summary a.button")

	// The phone's Back returns to the list, still the same document.
	browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`history.back()`))
	waitJS(t, ctx, "the sections after Back", phoneShows("sections"), browsertest.Timeout)
	if !js[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page was loaded again, want sections shown in place")
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserPhoneSectionsNoScript: without JavaScript a phone lists the sections above
// the map; a section's link opens that section's own page, its seats alone, with the
// way back to all sections.
func TestBrowserPhoneSectionsNoScript(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	ctx := browsertest.New(t).NewContext(t, browsertest.NoJavaScript())
	browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	seatPage(t, ctx, app.URL, false)
	onScreen(t, ctx, "the list of sections", `.section-choice[data-section="Circle"]`)

	browsertest.Follow(t, ctx, "Circle's link", chromedp.Click(chromedp.CSS(`.section-choice[data-section="Circle"]`)), "section=Circle")
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
	seats := js[[]string](t, ctx, shownSeats)
	if len(seats) != 540 || !strings.HasPrefix(seats[0], "Circle,") {
		t.Errorf("Circle's page draws %d seats, want its 540", len(seats))
	}
	onScreen(t, ctx, "the way back to all sections", "a.back-link")
}
