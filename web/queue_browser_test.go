package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
	"boxoffice/internal/waitroom"
	"boxoffice/web"
)

// requestCounter stands between the browser and a test app and counts what the queue
// page asks: its looks (the section's htmx requests) and its reads of the board.
type requestCounter struct {
	URL           string
	looks, boards atomic.Int64
}

// seatsDelay holds each answer to the event's seat page back this long, as a slow
// phone's network would.
func newRequestCounter(t *testing.T, app *testApp, eventID int64, slug string, seatsDelay time.Duration) *requestCounter {
	t.Helper()
	target, err := url.Parse(app.URL)
	if err != nil {
		t.Fatal(err)
	}
	rc := &requestCounter{}
	page, board := "/events/"+slug+"/queue", "/api/v1/events/"+itoa(eventID)+"/queue/board"
	seats := "/events/" + slug + "/seats"
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == page && r.Header.Get("HX-Request") == "true":
			rc.looks.Add(1)
		case r.URL.Path == board:
			rc.boards.Add(1)
		case r.URL.Path == seats && r.Method == http.MethodGet:
			select {
			case <-time.After(seatsDelay):
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// TestBrowserQueueFollowsBoard: a waiting page refreshes what it shows from the event's
// board and makes no look of its own while its turn is not near; when the board shows
// its turn, it looks at once and goes on to the seat map. One slot: a shopper has it,
// a buyer (through the API) waits first, the browser second. The shopper releases:
// the first waiter goes in, and the page says the browser is now first, without a
// look. The first waiter buys nothing and releases: the page's turn. The seat page
// comes slowly (3 s, a slow phone's): a page that looked again while it loaded was
// told again to go there and started over, each second, and never arrived.
func TestBrowserQueueFollowsBoard(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	runQueue(t, app)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	shopper, ahead := app.newClient(t), app.newClient(t)
	if q := shopper.queue("POST", app.EventID); !q.Admitted {
		t.Fatalf("shopper: got %+v, want admitted", q)
	}
	if q := ahead.queue("POST", app.EventID); q.Admitted || q.Number != 1 {
		t.Fatalf("first waiter: got %+v, want number 1", q)
	}
	rc := newRequestCounter(t, app, app.EventID, demoSlug, 3*time.Second)

	b := browsertest.New(t)
	ctx := b.NewContext(t)
	resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(rc.URL+"/events/"+demoSlug+"/queue"))
	if resp.Status != 200 {
		t.Fatalf("queue page: got status %d, want 200", resp.Status)
	}
	waitJS(t, ctx, "htmx", `typeof htmx === "object"`, browsertest.Timeout)
	if text := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#queue h2"))); !strings.Contains(text, "number 2") {
		t.Fatalf("queue page: got %q, want the browser second in line", text)
	}
	// A mark that a reload would wipe out.
	browsertest.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))

	held := shopper.hold(app.EventID, seats[0])
	if st := shopper.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("shopper's release: got %d, want 204", st)
	}
	waitJS(t, ctx, "the page to say the browser is first, from the board",
		`document.querySelector('#queue [data-q="position"]').textContent === "You are number 1 in the queue"`, browsertest.Timeout)
	if got := js[string](t, ctx, `document.querySelector('#queue [data-q="ahead"]').textContent`); got != web.AheadText(0) {
		t.Errorf("people ahead: got %q, want %q", got, web.AheadText(0))
	}
	if got := js[string](t, ctx, `(p => p.value + "/" + p.max + " " + p.textContent)(document.querySelector('#queue progress'))`); got != "1/1 100%" {
		t.Errorf("progress: got %q, want 1/1 100%% (the one ahead at the join has gone in)", got)
	}
	if !js[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page was reloaded, want it changed in place")
	}
	if n, reads := rc.looks.Load(), rc.boards.Load(); n != 0 || reads == 0 {
		t.Fatalf("before its turn: %d looks and %d board reads, want no look, the board read", n, reads)
	}

	// The first waiter gets its token, holds and releases: its slot is the browser's.
	waitAdmitted(t, ahead, app.EventID, 15*time.Second)
	held = ahead.hold(app.EventID, seats[1])
	if st := ahead.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("first waiter's release: got %d, want 204", st)
	}
	// The page navigates away by itself: wait for the seat map's form in whatever
	// document the tab shows.
	wait, cancel := context.WithTimeout(ctx, browsertest.Timeout)
	defer cancel()
	if err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS("#seat-form"))); err != nil {
		t.Fatalf("the seat map did not come (%v) after %d looks, want one look and the map", err, rc.looks.Load())
	}
	if path := js[string](t, ctx, `location.pathname`); path != "/events/"+demoSlug+"/seats" {
		t.Errorf("after its turn: at %s, want the seat map", path)
	}
	if n := rc.looks.Load(); n != 1 {
		t.Errorf("looks: got %d, want 1 (the one when the board showed its turn)", n)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserQueueShowsAllHeldFromBoard: a waiting page shows from the board, without
// a look, that everything left is held (no wait can be given) and that it no longer
// is; a crowd of pages that each looked at every such change would ask all at once.
// Two slots: the first shopper holds half, the browser waits; the second shopper
// holds the rest, then lets it all go, which also gives the browser its turn.
func TestBrowserQueueShowsAllHeldFromBoard(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue)
	const slug = "board-held"
	ev := smallEvent(t, app.Pool, slug) // 10 seats, 10 standing places
	roomOn(t, app, ev, 2, 100, time.Minute)
	runQueue(t, app)
	seats := firstSeats(t, app.Pool, ev, 10)
	tier := count(t, app.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, ev)
	first, second := app.newClient(t), app.newClient(t)
	holdAll := func(c *client, seats []int64) []string {
		t.Helper()
		if q := c.queue("POST", ev); !q.Admitted {
			t.Fatalf("shopper: got %+v, want admitted", q)
		}
		var ga web.HoldJSON
		if st := c.do("POST", "/api/v1/events/"+itoa(ev)+"/holds", map[string]any{"gaTierId": tier, "quantity": 5}, &ga); st != http.StatusCreated {
			t.Fatalf("standing places: got %d, want 201", st)
		}
		return []string{c.hold(ev, seats...).HoldID, ga.HoldID}
	}
	holdAll(first, seats[:5])
	if q := second.queue("POST", ev); !q.Admitted {
		t.Fatalf("second shopper: got %+v, want admitted", q)
	}
	rc := newRequestCounter(t, app, ev, slug, 0)

	b := browsertest.New(t)
	ctx := b.NewContext(t)
	if resp := browsertest.Run(t, ctx, chromedp.NavigateResponse(rc.URL+"/events/"+slug+"/queue")); resp.Status != 200 {
		t.Fatalf("queue page: got status %d, want 200", resp.Status)
	}
	waitJS(t, ctx, "htmx", `typeof htmx === "object"`, browsertest.Timeout)
	shown := func(mark string) string {
		return `!document.querySelector('#queue [data-q="` + mark + `"]').hidden`
	}
	if !js[bool](t, ctx, shown("estimate")) || js[bool](t, ctx, shown("held")) {
		t.Fatal("queue page with seats free: want the estimate shown and the all-held words hidden")
	}

	held := holdAll(second, seats[5:])
	waitJS(t, ctx, "the page to say everything is held, from the board",
		shown("held")+` && !(`+shown("estimate")+`)`, 15*time.Second)
	if n, reads := rc.looks.Load(), rc.boards.Load(); n != 0 || reads == 0 {
		t.Fatalf("everything held: %d looks and %d board reads, want no look, the board read", n, reads)
	}

	for _, id := range held {
		if st := second.do("DELETE", "/api/v1/holds/"+id, nil, nil); st != http.StatusNoContent {
			t.Fatalf("release: got %d, want 204", st)
		}
	}
	// The release gives the second shopper's slot to the browser: it goes on to the
	// seats with one look.
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
	if n := rc.looks.Load(); n != 1 {
		t.Errorf("looks: got %d, want 1 (the one when the board showed its turn)", n)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserQueueWordsAsServer: the queue page words a place from the board in its
// script exactly as the server words it in the page (aheadText, waitText, oddsText),
// over people ahead from none to thousands, waits from none to hours, and seats left.
func TestBrowserQueueWordsAsServer(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	if q := app.newClient(t).queue("POST", app.EventID); !q.Admitted { // the one slot: the page waits
		t.Fatalf("shopper: got %+v, want admitted", q)
	}
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Run(t, ctx, chromedp.Navigate(app.URL+"/events/"+demoSlug+"/queue"))
	waitJS(t, ctx, "the queue script", `typeof window.queueWords === "object"`, browsertest.Timeout)

	type wordCase struct {
		Ahead, Left int
		Lo, Hi      float64 // seconds
	}
	var cases []wordCase
	var want []string
	for _, ahead := range []int{0, 1, 2, 999, 1000, 12345} {
		for _, w := range [][2]float64{{0, 0}, {20, 30}, {50, 70}, {60, 60}, {100, 130}, {600, 900}, {3000, 4000}, {5000, 7000}, {20000, 30000}} {
			for _, left := range []int{0, 7, 99, 100, 1234, 49999} {
				cases = append(cases, wordCase{ahead, left, w[0], w[1]})
				lo, hi := time.Duration(w[0]*float64(time.Second)), time.Duration(w[1]*float64(time.Second))
				want = append(want, web.AheadText(ahead)+"|"+web.WaitText(lo, hi, ahead)+"|"+web.OddsText(left, ahead))
			}
		}
	}
	raw, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	got := js[[]string](t, ctx, `(`+string(raw)+`).map(c => [queueWords.ahead(c.Ahead), queueWords.wait(c.Lo, c.Hi, c.Ahead), queueWords.odds(c.Left, c.Ahead)].join("|"))`)
	if len(got) != len(want) {
		t.Fatalf("got %d answers, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%+v: the page says %q, the server %q", cases[i], got[i], want[i])
		}
	}

	// Whether the tickets may be gone before the turn, by the room's rule.
	type goneCase struct{ Position, LastsFor int }
	var gones []goneCase
	for _, pos := range []int{1, 2, 75, 76, 77, 5000} {
		for _, lasts := range []int{-1, 0, 1, 75, 76, 4999, 5000} {
			gones = append(gones, goneCase{pos, lasts})
		}
	}
	if raw, err = json.Marshal(gones); err != nil {
		t.Fatal(err)
	}
	gone := js[[]bool](t, ctx, `(`+string(raw)+`).map(c => queueWords.gone(c.Position, c.LastsFor))`)
	if len(gone) != len(gones) {
		t.Fatalf("likely gone: got %d answers, want %d", len(gone), len(gones))
	}
	for i, c := range gones {
		if want := waitroom.LikelyGone(c.Position, c.LastsFor); gone[i] != want {
			t.Errorf("position %d, lastsFor %d: the page says likely gone %v, the room %v", c.Position, c.LastsFor, gone[i], want)
		}
	}
}

// TestBrowserPreQueueStandsAmongDrawn: after the draw a pre-queue page shows, from the
// board alone, where its drawn place stands among the drawn ("about number n", n one
// of the 20 drawn), rather than the whole pre-queue looking for its number within
// seconds of the draw; its own look comes when the server said, by its place, over the
// minute after the draw. No admitter runs: nobody is let in, so the head stays before
// every place.
func TestBrowserPreQueueStandsAmongDrawn(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	if _, err := app.Pool.Exec(context.Background(), `UPDATE events SET onsale_at = now() + interval '8 seconds' WHERE id = $1`, app.EventID); err != nil {
		t.Fatal(err)
	}
	for i := range 19 {
		if q := app.newClient(t).queue("POST", app.EventID); !q.PreQueue {
			t.Fatalf("API buyer %d: got %+v, want the pre-queue", i, q)
		}
	}
	rc := newRequestCounter(t, app, app.EventID, demoSlug, 0)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Run(t, ctx, chromedp.NavigateResponse(rc.URL+"/events/"+demoSlug+"/queue"))
	waitJS(t, ctx, "htmx", `typeof htmx === "object"`, browsertest.Timeout)
	if text := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#queue h2"))); !strings.Contains(text, "waiting room") {
		t.Fatalf("queue page before the onsale: got %q, want the pre-queue", text)
	}
	place := js[float64](t, ctx, `parseFloat(document.querySelector('#queue [data-poll-after]').dataset.place)`)
	waitJS(t, ctx, "the page to place itself among the drawn, from the board",
		`(p => !!p && p.textContent.startsWith("You are about number "))(document.querySelector('#queue [data-q="drawn"]:not([hidden]) [data-q="position"]'))`, 30*time.Second)
	looks := rc.looks.Load()
	text := js[string](t, ctx, `document.querySelector('#queue [data-q="position"]').textContent`)
	var n int
	if _, err := fmt.Sscanf(text, "You are about number %d in the queue", &n); err != nil || n < 1 || n > 20 {
		t.Errorf("position from the board: got %q, want about number 1 to 20", text)
	}
	if hidden := js[bool](t, ctx, `document.querySelector('#queue [data-q="draw"]').hidden`); !hidden {
		t.Error("the draw's announcement still shown after the draw")
	}
	// The page's look comes at the draw and place × a minute; the board, read every
	// second or so near the draw, shows it first unless the place is near the front.
	if place >= 0.2 && looks != 0 {
		t.Errorf("place %.3f: %d looks before the page stood among the drawn, want none (its look is due %.0f s after the draw)", place, looks, place*60)
	}
	noConsoleErrors(t, ctx)
}
