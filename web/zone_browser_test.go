package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
	"boxoffice/internal/staff"
	"boxoffice/internal/zone"
)

// TestBrowserBerlinTime: an admin types an event's start as 19:30 on the clocks of the
// demo hall in Berlin, in the form that says so; a buyer in another browser context
// reads 19:30 CET on the event page, which names no UTC time.
func TestBrowserBerlinTime(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	admin := app.addStaff(t, staff.Admin, "Ada Admin")
	var venue int64
	if err := app.Pool.QueryRow(t.Context(), `SELECT venue_id FROM events WHERE id = $1`, app.EventID).Scan(&venue); err != nil {
		t.Fatal(err)
	}
	berlin := zone.Of("Europe/Berlin")
	starts := time.Date(time.Now().Year()+1, time.January, 5, 19, 30, 0, 0, berlin)
	b := browsertest.New(t)
	staffTab, buyer := b.NewContext(t), b.NewContext(t)
	staffLogin(t, staffTab, app.URL, admin)

	browsertest.Run(t, staffTab, chromedp.NavigateResponse(app.URL+"/admin/events/new?venue="+itoa(venue)))
	legends := js[string](t, staffTab, `[...document.querySelectorAll("form.event-editor legend")].map(l => l.textContent).join("|")`)
	if !strings.Contains(legends, "Times in Europe/Berlin") {
		t.Errorf("event form: got legends %q, want Times in Europe/Berlin", legends)
	}
	browsertest.Do(t, staffTab,
		chromedp.SendKeys(chromedp.CSS("#event-name"), "Berlin Night"),
		chromedp.SendKeys(chromedp.CSS("#event-slug"), "berlin-night"),
		chromedp.SetValue(chromedp.CSS("#event-starts"), zone.Form(starts, berlin)),
		chromedp.SetValue(chromedp.CSS("#event-onsale"), zone.Form(time.Now().Add(-time.Hour), berlin)),
		chromedp.Click(chromedp.CSS("#event-published")),
		chromedp.Click(chromedp.CSS("form.event-editor button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	want := zone.When(starts, berlin)
	if !strings.HasSuffix(want, "5 Jan "+starts.Format("2006")+", 19:30 CET") {
		t.Fatalf("zone.When: got %q, want 5 Jan, 19:30 CET", want)
	}
	if got := browsertest.Run(t, staffTab, chromedp.Text(chromedp.CSS("#event-starts-text"))); got != want {
		t.Errorf("saved event: got start %q, want %q", got, want)
	}

	resp := browsertest.Run(t, buyer, chromedp.NavigateResponse(app.URL+"/events/berlin-night"))
	if resp.Status != 200 {
		t.Fatalf("event page: got status %d, want 200", resp.Status)
	}
	text := browsertest.Run(t, buyer, chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(text, want) || strings.Contains(text, "UTC") {
		t.Errorf("event page: got %q, want %q and no UTC", strings.Join(strings.Fields(text), " "), want)
	}
	noConsoleErrors(t, staffTab, buyer)
}
