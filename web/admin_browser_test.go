package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
	"boxoffice/internal/staff"
)

// staffLogin logs a member in through the login form.
func staffLogin(t *testing.T, ctx context.Context, base string, m staff.Member) {
	t.Helper()
	browsertest.Run(t, ctx, chromedp.NavigateResponse(base+"/admin/login"))
	browsertest.Do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#email"), m.Email),
		chromedp.SendKeys(chromedp.CSS("#password"), staffPassword),
		chromedp.Click(chromedp.CSS(".login button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(".admin-nav")),
	)
}

// TestBrowserVenueEditor: an admin builds a venue in the layout editor on a phone-sized
// screen: as the rows, seats and prices are typed, the preview draws the map by
// itself (htmx, no button pressed), with the wheelchair space marked and a summary
// read out; the page stays within the screen; Save stores the venue and its seats.
func TestBrowserVenueEditor(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	admin := app.addStaff(t, staff.Admin, "Ada Admin")
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	staffLogin(t, ctx, app.URL, admin)

	browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/admin/venues/new"))
	waitJS(t, ctx, "htmx", `typeof htmx === "object"`, browsertest.Timeout)
	browsertest.Do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#venue-name"), "Riverside Hall"),
		chromedp.SendKeys(chromedp.CSS("#s0-name"), "Stalls"),
		chromedp.SendKeys(chromedp.CSS("#s0-rows"), "6"),
		chromedp.SendKeys(chromedp.CSS("#s0-seats"), "14"),
		chromedp.SendKeys(chromedp.CSS("#s0-prices"), "A-C Front 60\nD-F Back 40"),
		chromedp.SendKeys(chromedp.CSS("#s0-accessible"), "F1"),
	)
	// The preview follows the typing: 6 rows of 14, one wheelchair space.
	waitJS(t, ctx, "the preview to draw 84 seats", `document.querySelectorAll("#layout-preview svg.preview g.pseat").length === 84`, 10*time.Second)
	waitJS(t, ctx, "the wheelchair space in the preview", `document.querySelectorAll("#layout-preview svg.preview use").length === 1`, 5*time.Second)
	summary := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#preview-summary")))
	if !strings.Contains(summary, "84 seats in 1 section") {
		t.Errorf("preview summary: got %q, want 84 seats in 1 section", summary)
	}
	if live := js[string](t, ctx, `document.getElementById("preview-summary").getAttribute("aria-live")`); live != "polite" {
		t.Errorf("preview summary: aria-live %q, want polite", live)
	}
	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("editor on a phone: %.0f CSS px wider than the screen", over)
	}
	// Every button and text field can be hit with a finger.
	if small := js[string](t, ctx, `[...document.querySelectorAll("main button, main input:not([type=hidden]):not([type=checkbox]), main textarea, main select")]
		.filter(e => e.getBoundingClientRect().height < 44).map(e => e.name || e.textContent).join(", ")`); small != "" {
		t.Errorf("targets under 44 CSS px high on a phone: %s", small)
	}

	browsertest.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`button[value=save]`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	loc := js[string](t, ctx, `location.pathname`)
	if !strings.HasPrefix(loc, "/admin/venues/") {
		t.Fatalf("after saving: at %q, want the venue's page", loc)
	}
	var seats, accessible int
	if err := app.Pool.QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE s.accessible)
		FROM venue_seats s JOIN venues v ON v.id = s.venue_id WHERE v.name = 'Riverside Hall'`).Scan(&seats, &accessible); err != nil {
		t.Fatal(err)
	}
	if seats != 84 || accessible != 1 {
		t.Errorf("saved venue: got %d seats, %d wheelchair spaces; want 84, 1", seats, accessible)
	}
	// The saved venue shows its map again.
	if n := js[int](t, ctx, `document.querySelectorAll("#layout-preview svg.preview g.pseat").length`); n != 84 {
		t.Errorf("the venue's page: got %d seats on its map, want 84", n)
	}
	// The event form, started from the venue, fits the phone too.
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS(`a[href^="/admin/events/new?venue="]`)), chromedp.WaitVisible(chromedp.CSS("#event-name")))
	if sel := js[string](t, ctx, `document.getElementById("event-venue").selectedOptions[0].textContent`); sel != "Riverside Hall (Europe/Berlin)" {
		t.Errorf("new event from the venue: venue %q chosen, want Riverside Hall in the demo hall's zone", sel)
	}
	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("event form on a phone: %.0f CSS px wider than the screen", over)
	}
	for _, m := range browsertest.Errors(ctx) {
		// The preview of a layout typed half way is a 422 with its reason, shown in
		// place; nothing else may complain.
		if strings.Contains(m.Text, "422") || strings.Contains(m.Text, "responseError") {
			continue
		}
		t.Errorf("console %s at %s: %s", m.Type, m.URL, m.Text)
	}
}
