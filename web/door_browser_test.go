package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
)

// TestDoorPageIsPublic: the front door's page is the same for everyone: cacheable,
// no cookie, no session row.
func TestDoorPageIsPublic(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, frontQueue)
	roomOn(t, a, a.EventID, 10, 50, time.Minute)
	sessions := count(t, a.Pool, `SELECT count(*) FROM sessions`)
	resp, err := http.Get(a.URL + "/events/" + demoSlug + "/door")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cc := resp.Header.Get("Cache-Control"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(cc, "public") || len(resp.Cookies()) > 0 {
		t.Errorf("door page: got %d, Cache-Control %q, %d cookies; want 200, public, none", resp.StatusCode, cc, len(resp.Cookies()))
	}
	if got := count(t, a.Pool, `SELECT count(*) FROM sessions`); got != sessions {
		t.Errorf("door page: sessions went from %d to %d, want unchanged", sessions, got)
	}
}

// TestBrowserDoor: in Chromium, a visitor opens the seat map while the one slot is
// taken, and is sent to the front door's page. The page solves the proof of work, takes a place, and says from the
// board that nobody is ahead; no session is made for it meanwhile. The shopper
// releases: the page claims at its turn and goes to the seat map, admitted.
func TestBrowserDoor(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, frontQueue, proofAsShipped)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	runQueue(t, app)
	seats := firstSeats(t, app.Pool, app.EventID, 1)
	shopper := visitorVia(t, app, app.EventID, nil)
	if st, raw, _ := shopper.raw("POST", placePath(app.EventID), nil, withProof(shopper.solve())); st != http.StatusOK {
		t.Fatalf("shopper's place: got %d %s", st, raw)
	}
	waitTurn(t, shopper, app.EventID, 20*time.Second)
	if st, q := claim(t, shopper, app.EventID); st != http.StatusOK || !q.Admitted {
		t.Fatalf("shopper's claim: got %d %+v, want admitted", st, q)
	}
	sessions := count(t, app.Pool, `SELECT count(*) FROM sessions`)

	b := browsertest.New(t)
	ctx := b.NewContext(t)
	// The seat map is the way in to the door for a browser not admitted.
	resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/events/"+demoSlug+"/seats"))
	if resp.Status != 200 || !strings.HasSuffix(resp.URL, "/events/"+demoSlug+"/door") {
		t.Fatalf("seat map while the slot is taken: got status %d at %s, want 200 at the door", resp.Status, resp.URL)
	}
	waitJS(t, ctx, "the page to say from the board where it stands",
		`document.querySelector('#door [data-d="ahead"]').textContent === "Nobody is ahead of you."`, browsertest.Timeout)
	if got := count(t, app.Pool, `SELECT count(*) FROM sessions`); got != sessions {
		t.Errorf("while the page waits: sessions went from %d to %d, want unchanged", sessions, got)
	}

	slotBackToSeatMap(t, ctx, app, shopper, seats[0])
	if path := js[string](t, ctx, `location.pathname`); path != "/events/"+demoSlug+"/seats" {
		t.Errorf("after its turn: at %s, want the seat map", path)
	}
	if got := count(t, app.Pool, `SELECT count(*) FROM sessions`); got != sessions+1 {
		t.Errorf("after the claim: sessions went from %d to %d, want one more", sessions, got)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserDoorTakesAPlaceInOneRequest: in Chromium, with no proof of work asked,
// the door page takes its place with one request to the place call (a POST whose
// Sec-Fetch-Site passes the CSRF check, no GET for a token first), and the place is
// the visitor's: the board counts it and the page says where it stands. The shopper
// releases: the page claims at its turn and goes to the seat map.
func TestBrowserDoorTakesAPlaceInOneRequest(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, frontQueue)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	runQueue(t, app)
	seats := firstSeats(t, app.Pool, app.EventID, 1)
	shopper := admittedArrival(t, app)

	ctx := browsertest.New(t).NewContext(t)
	browsertest.Do(t, ctx, chromedp.Navigate(app.URL+"/events/"+demoSlug+"/door"))
	waitJS(t, ctx, "the page to say from the board where it stands",
		`document.querySelector('#door [data-d="ahead"]').textContent === "Nobody is ahead of you."`, browsertest.Timeout)
	calls := js[float64](t, ctx, `performance.getEntriesByType("resource").filter(e => new URL(e.name).pathname.endsWith("/queue/place")).length`)
	if calls != 1 {
		t.Errorf("the door page made %v requests to the place call, want 1", calls)
	}

	slotBackToSeatMap(t, ctx, app, shopper, seats[0])
	noConsoleErrors(t, ctx)
}

// slotBackToSeatMap has the admitted shopper hold seat and release it, which gives its
// slot back, and waits for the door page in ctx to claim its turn and show the seat map.
func slotBackToSeatMap(t *testing.T, ctx context.Context, app *testApp, shopper *client, seat int64) {
	t.Helper()
	held := shopper.hold(app.EventID, seat)
	if st := shopper.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("shopper's release: got %d, want 204", st)
	}
	wait, cancel := context.WithTimeout(ctx, browsertest.Timeout)
	defer cancel()
	if err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS("#seat-form"))); err != nil {
		t.Fatalf("the seat map did not come after the slot came back: %v", err)
	}
}

// TestBrowserDoorShowsProgress: in Chromium, the door page of a visitor with three
// places ahead says so, shows the seats left against them, and a progress bar at
// nothing of three; when the first of them is let in, the page says two are ahead
// and the bar moves to one of three. The held words stay hidden: places are free.
func TestBrowserDoorShowsProgress(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, frontQueue)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	runQueue(t, app)
	seats := firstSeats(t, app.Pool, app.EventID, 1)
	shopper := admittedArrival(t, app)
	var first *client
	for i := range 3 {
		time.Sleep(150 * time.Millisecond) // each in an arrival group of its own (GroupSpan 100 ms)
		c, _ := arrival(t, app, app.EventID)
		if i == 0 {
			first = c
		}
	}
	time.Sleep(150 * time.Millisecond)

	ctx := browsertest.New(t).NewContext(t)
	browsertest.Do(t, ctx, chromedp.Navigate(app.URL+"/events/"+demoSlug+"/door"))
	waitJS(t, ctx, "the page to say three are ahead",
		`document.querySelector('#door [data-d="ahead"]').textContent === "3 people are ahead of you."`, browsertest.Timeout)
	bar := `(() => { const b = document.querySelector('#door [data-d="progress"]'); return [b.closest("[hidden]") === null, b.getAttribute("value"), b.getAttribute("max"), b.textContent].join(" "); })()`
	if got := js[string](t, ctx, bar); got != "true 0 3 0%" {
		t.Errorf("progress with three ahead: got %q, want shown, 0 of 3, 0%%", got)
	}
	odds := js[string](t, ctx, `(() => { const o = document.querySelector('#door [data-d="odds"]'); return (o.hidden ? "hidden " : "") + o.textContent; })()`)
	if !strings.HasPrefix(odds, "About ") || !strings.HasSuffix(odds, " seats left, 3 people ahead of you.") {
		t.Errorf("odds with three ahead: got %q, want the seats left against 3 people, shown", odds)
	}
	if held := js[bool](t, ctx, `document.querySelector('#door [data-d="held"]').hidden`); !held {
		t.Error("the held words are shown while places are free")
	}

	// The shopper gives its slot back: the first waiter's turn comes, and it goes in.
	held := shopper.hold(app.EventID, seats[0])
	if st := shopper.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("shopper's release: got %d, want 204", st)
	}
	waitTurn(t, first, app.EventID, 20*time.Second)
	if st, q := claim(t, first, app.EventID); st != http.StatusOK || !q.Admitted {
		t.Fatalf("the first waiter's claim: got %d %+v, want admitted", st, q)
	}
	waitJS(t, ctx, "the page to say two are ahead",
		`document.querySelector('#door [data-d="ahead"]').textContent === "2 people are ahead of you."`, browsertest.Timeout)
	if got := js[string](t, ctx, bar); got != "true 1 3 33%" {
		t.Errorf("progress with two ahead: got %q, want shown, 1 of 3, 33%%", got)
	}
	noConsoleErrors(t, ctx)
}
