package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
)

// The proof of work in Chromium: ALTCHA's widget, vendored, solves the server's
// challenge at its default difficulty under the page's CSP (browsertest fails a test
// on any violation), in the background.

// proofSolved reads, once the page's widget has solved its challenge, how long the
// work took the browser (the widget's own figure, in milliseconds).
func proofSolved(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	waitJS(t, ctx, "the widget to solve its challenge", `(b => !!b && b.getAttribute("data-proof-state") === "verified")(document.querySelector("[data-proof]"))`, browsertest.Timeout)
	return js[float64](t, ctx, `JSON.parse(atob(document.querySelector('[data-proof] input[name="altcha"]').value)).took`)
}

// TestBrowserProofFirstHold: the seat page of a session that has yet to prove solves
// the challenge by itself, showing the widget's own checkbox and label; the first
// hold (a click) goes with the proof, the box goes, and the next click holds without
// one. A second buyer clicks a seat at once, before the widget can have finished:
// the click waits for the proof and holds.
func TestBrowserProofFirstHold(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, proofAsShipped)
	b := browsertest.New(t)
	ctx, quick := b.NewContext(t), b.NewContext(t)
	seatPage(t, ctx, app.URL, true)
	took := proofSolved(t, ctx)
	t.Logf("the widget solved the default challenge in %.0f ms", took)
	label := js[string](t, ctx, `(i => i && i.labels && i.labels.length ? i.labels[0].textContent.trim() : "")(document.querySelector('[data-proof] input[type="checkbox"]'))`)
	if label == "" || !js[bool](t, ctx, `document.querySelector('[data-proof] input[type="checkbox"]').checked`) {
		t.Errorf("the widget: got label %q, want its labelled checkbox, ticked once verified", label)
	}

	first := firstAvailable(t, ctx)
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+first+" input")))
	waitJS(t, ctx, "the first seat to show as the buyer's", hasClass(first, "mine"), browsertest.Timeout)
	waitJS(t, ctx, "the proof box to go", `!document.querySelector("[data-proof]")`, browsertest.Timeout)
	second := firstAvailable(t, ctx)
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+second+" input")))
	waitJS(t, ctx, "the second seat to show as the buyer's", hasClass(second, "mine"), browsertest.Timeout)
	if n := heldSeats(t, app, app.EventID); n != 2 {
		t.Errorf("seats held: got %d, want 2", n)
	}

	resp := browsertest.Run(t, quick, chromedp.NavigateResponse(app.URL+"/events/"+demoSlug+"/seats"))
	if resp.Status != 200 {
		t.Fatalf("second buyer's seat page: got %d, want 200", resp.Status)
	}
	browsertest.Do(t, quick, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
	waitJS(t, quick, "htmx", `typeof htmx === "object"`, browsertest.Timeout)
	seat := firstAvailable(t, quick)
	browsertest.Do(t, quick, chromedp.Click(chromedp.CSS("#"+seat+" input")))
	waitJS(t, quick, "the second buyer's seat to show as theirs", hasClass(seat, "mine"), browsertest.Timeout)
	if n := heldSeats(t, app, app.EventID); n != 3 {
		t.Errorf("seats held: got %d, want 3", n)
	}
	if msg := js[string](t, quick, `document.getElementById("seat-message").textContent`); strings.Contains(msg, "script") {
		t.Errorf("the early click: got %q, want it held without a word about the proof", msg)
	}
	noConsoleErrors(t, ctx, quick)
}

// TestBrowserProofQueueJoin: with the proof on, the queue page shows the join form;
// its widget solves the challenge and the page joins by itself. A slot is free, so
// the buyer goes on to the seat map, which asks for no second proof (the join proved
// the session), and a click holds.
func TestBrowserProofQueueJoin(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue, proofAsShipped)
	roomOn(t, app, app.EventID, 10, 100, time.Minute)
	runQueue(t, app)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/events/"+demoSlug+"/queue"))
	if resp.Status != 200 {
		t.Fatalf("queue page: got status %d, want 200", resp.Status)
	}
	// The page moves on by itself: wait for the seat map in whatever document the tab
	// shows.
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
	if path := js[string](t, ctx, `location.pathname`); path != "/events/"+demoSlug+"/seats" {
		t.Fatalf("after joining: at %s, want the seat map", path)
	}
	if js[bool](t, ctx, `!!document.querySelector("[data-proof]")`) {
		t.Error("the seat map asks for a second proof after a proved join")
	}
	waitJS(t, ctx, "the page's scripts", `document.documentElement.classList.contains("js") && typeof htmx === "object"`, browsertest.Timeout)
	seat := firstAvailable(t, ctx)
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+seat+" input")))
	waitJS(t, ctx, "the seat to show as the buyer's", hasClass(seat, "mine"), browsertest.Timeout)
	noConsoleErrors(t, ctx)
}
