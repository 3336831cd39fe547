package web_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/zone"
	"boxoffice/web"
)

// TestQueuePage: the queue page is small, polls a fragment every 3 s with htmx (and
// refreshes itself without JavaScript), shows the place, the people ahead, the wait,
// the odds and a progress bar; the fragment is the status alone. The event page's way
// in is the queue.
func TestQueuePage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 1, 100, time.Minute)
	runQueue(t, a)
	first, second := a.newClient(t), a.newClient(t).noRedirects()
	first.queue("POST", a.EventID)
	// The admitter learns the stock soon after it starts; the odds need it.
	var joined web.QueueJSON
	for deadline := time.Now().Add(5 * time.Second); joined.SeatsLeft <= 0; {
		if joined = second.queue("POST", a.EventID); joined.SeatsLeft > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queue never said how many seats are left")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if joined.Number != 1 || joined.Place == nil {
		t.Fatalf("second buyer: got %+v, want number 1 with a place", joined)
	}
	page := "/events/" + demoSlug + "/queue"
	st, body, h := second.raw("GET", page, nil, nil)
	if st != http.StatusOK {
		t.Fatalf("queue page: got %d, want 200", st)
	}
	t.Logf("queue page: %d bytes", len(body))
	if len(body) >= 10*1024 {
		t.Errorf("queue page: %d bytes, want under 10 KB", len(body))
	}
	if cc := h.Get("Cache-Control"); cc != "private, no-store" {
		t.Errorf("Cache-Control: got %q, want private, no-store", cc)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	poll := doc.Find("#queue[hx-get][hx-trigger]")
	if poll.AttrOr("hx-get", "") != page || poll.AttrOr("hx-trigger", "") != "queuepoll" {
		t.Errorf("polling: got hx-get %q hx-trigger %q, want %s on queuepoll", poll.AttrOr("hx-get", ""), poll.AttrOr("hx-trigger", ""), page)
	}
	// Paced by the room (queue.js): first in line at 100 a second asks again in a second;
	// the JSON says the same to API clients.
	if pace := doc.Find("#queue [data-poll-after]").AttrOr("data-poll-after", ""); pace != "1" {
		t.Errorf("data-poll-after: got %q, want 1 (first in line)", pace)
	}
	if doc.Find(`script[src*="queue"]`).Length() != 1 {
		t.Error("the queue page does not load queue.js")
	}
	// What queue.js follows the board with: the board, the waiter's number and place,
	// how many had been served at this look, and when to look again itself.
	web.CheckAttrs(t, "waiting page", doc.Find("#queue [data-poll-after]"), map[string]string{
		"data-board":      "/api/v1/events/" + itoa(a.EventID) + "/queue/board",
		"data-state":      "waiting",
		"data-number":     "1",
		"data-place":      strconv.FormatFloat(*joined.Place, 'f', -1, 64),
		"data-served":     "0",
		"data-look-after": strconv.Itoa(joined.LookAfterSeconds),
	})
	if joined.LookAfterSeconds != 150 {
		t.Errorf("lookAfterSeconds: got %d, want 150 (its turn is due: a look only should it be late, the place kept 5 min)", joined.LookAfterSeconds)
	}
	// The texts queue.js rewrites, as the server wrote them for the first paint.
	for mark, want := range map[string]string{"position": "You are number 1 in the queue", "ahead": "Nobody is ahead of you.", "progress": "100%"} {
		if got := doc.Find(`#queue [data-q="` + mark + `"]`).Text(); got != want {
			t.Errorf("data-q=%s: got %q, want %q", mark, got, want)
		}
	}
	if w := doc.Find(`#queue [data-q="wait"]`).Text(); w == "" {
		t.Error(`data-q=wait: missing or empty`)
	}
	if o := doc.Find(`#queue [data-q="odds"]`); o.Length() != 1 || !strings.Contains(o.Text(), "seats left") || o.AttrOr("hidden", "no") != "no" {
		t.Errorf(`data-q=odds: got %d elements, %q, want one shown with the seats left`, o.Length(), o.Text())
	}
	if pr := doc.Find(`#queue progress[data-q="progress"]`); pr.AttrOr("max", "") != "1" || pr.AttrOr("value", "") != "1" {
		t.Errorf("progress: got max %q value %q, want 1 and 1 (nobody ahead: the bar is full)",
			pr.AttrOr("max", ""), pr.AttrOr("value", ""))
	}
	if q := second.queue("GET", a.EventID); q.PollAfterSeconds != 1 {
		t.Errorf("GET queue: pollAfterSeconds %d, want 1", q.PollAfterSeconds)
	}
	if !strings.Contains(string(body), `<noscript><meta http-equiv="refresh" content="5"></noscript>`) {
		t.Error("no <noscript> meta refresh for browsers without JavaScript")
	}
	text := doc.Find("#queue").Text()
	for _, want := range []string{"You are number 1 in the queue", "Nobody is ahead of you.", "Estimated wait:", "seats left"} {
		if !strings.Contains(text, want) {
			t.Errorf("queue status %q does not say %q", strings.Join(strings.Fields(text), " "), want)
		}
	}
	if doc.Find("#queue progress[max][value]").Length() != 1 {
		t.Error("no progress bar")
	}
	if doc.Find("[style], style, script:not([src])").Length() != 0 {
		t.Error("inline style or script on the queue page")
	}

	st, frag, h := second.raw("GET", page, nil, http.Header{"HX-Request": {"true"}})
	if st != http.StatusOK || strings.Contains(string(frag), "<html") || !strings.Contains(string(frag), "number 1") {
		t.Errorf("polled fragment: got %d %q, want the status alone", st, truncate(frag))
	}
	if vary := strings.Join(h.Values("Vary"), ", "); !strings.Contains(vary, "HX-Request") {
		t.Errorf("Vary: got %q, want HX-Request in it", vary)
	}

	_, event, _ := second.raw("GET", "/events/"+demoSlug, nil, nil)
	if door := "/events/" + demoSlug + "/door"; !strings.Contains(string(event), `href="`+door+`"`) || !strings.Contains(string(event), "Join the queue") {
		t.Error("event page with the room on: want the way in through the front door")
	}

	// Admitted: the poll moves the browser on to the seats, with a link too.
	held := first.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 1)...)
	first.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil)
	waitAdmitted(t, second, a.EventID, 5*time.Second)
	st, frag, h = second.raw("GET", page, nil, http.Header{"HX-Request": {"true"}})
	seats := "/events/" + demoSlug + "/seats"
	if h.Get("HX-Redirect") != seats || !strings.Contains(string(frag), `href="`+seats+`"`) {
		t.Errorf("poll once admitted: got %d, HX-Redirect %q, %q; want the seats, with a link", st, h.Get("HX-Redirect"), truncate(frag))
	}
	if !strings.Contains(string(frag), `data-state="admitted"`) || strings.Contains(string(frag), "data-number") {
		t.Errorf("poll once admitted: want data-state admitted and no number: %s", truncate(frag))
	}
}

// TestQueuePreQueue: before the onsale the queue page says the order is drawn at
// random at the onsale, and the event page counts down to it.
func TestQueuePreQueue(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	onsale := time.Now().Add(2*time.Hour + 30*time.Minute).Truncate(time.Minute)
	if _, err := a.Pool.Exec(context.Background(), `UPDATE events SET onsale_at = $2 WHERE id = $1`, a.EventID, onsale); err != nil {
		t.Fatal(err)
	}
	c := a.newClient(t)
	q := c.queue("POST", a.EventID)
	if q.Admitted || !q.PreQueue {
		t.Fatalf("join before the onsale: got %+v, want the pre-queue", q)
	}
	_, body, _ := c.raw("GET", "/events/"+demoSlug+"/queue", nil, nil)
	berlin := zone.Of("Europe/Berlin") // the demo hall's
	want := "your place is drawn at random at " + zone.Clock(onsale, berlin)
	if !strings.Contains(string(body), want) && !strings.Contains(string(body), zone.When(onsale, berlin)) {
		t.Errorf("pre-queue page: want it to say %q", want)
	}
	// Before the draw the page has no number yet: it follows the board for the draw,
	// and looks itself within a minute (to keep its place), not every few seconds.
	page, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	span := page.Find("#queue [data-poll-after]")
	web.CheckAttrs(t, "pre-queue page", span, map[string]string{
		"data-state": "preQueue", "data-board": "/api/v1/events/" + itoa(a.EventID) + "/queue/board",
		"data-look-after": strconv.Itoa(q.LookAfterSeconds),
	})
	if q.LookAfterSeconds != 60 || span.Is("[data-number]") {
		t.Errorf("pre-queue page: lookAfterSeconds %d, want 60 (the draw is hours away); want no number yet", q.LookAfterSeconds)
	}
	_, event, _ := c.raw("GET", "/events/"+demoSlug, nil, nil)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(event)))
	if err != nil {
		t.Fatal(err)
	}
	cd := doc.Find("[data-countdown-to]")
	if at := cd.AttrOr("data-countdown-to", ""); at != onsale.UTC().Format(time.RFC3339) {
		t.Errorf("countdown: got data-countdown-to %q, want %s", at, onsale.UTC().Format(time.RFC3339))
	}
	if text := cd.Text(); !strings.Contains(text, "in 2 hours 29 minutes") && !strings.Contains(text, "in 2 hours 30 minutes") {
		t.Errorf("countdown: got %q, want in 2 hours 29 or 30 minutes", text)
	}
}

// redisProxy puts a proxy in front of the test Redis, for an app that must lose it.
func redisProxy(t *testing.T) (*dbtest.Proxy, func(*appOptions)) {
	t.Helper()
	u := os.Getenv("REDIS_URL")
	host := strings.TrimPrefix(u, "redis://")
	host, db, _ := strings.Cut(host, "/")
	if _, _, err := net.SplitHostPort(host); err != nil {
		t.Fatalf("REDIS_URL %q: %v", u, err)
	}
	p := dbtest.NewProxy(t, host)
	return p, func(o *appOptions) {
		fastQueue(o)
		if o.Env == nil {
			o.Env = map[string]string{}
		}
		o.Env["REDIS_URL"] = "redis://" + p.Addr() + "/" + db
	}
}

// TestQueuePaused: with Redis gone, new arrivals get 503 queue_paused with Retry-After
// (JSON, and a page that keeps asking), while a buyer admitted before still holds
// seats: the token verifies by signature alone and the rate limiter lets calls through.
func TestQueuePaused(t *testing.T) {
	t.Parallel()
	proxy, viaProxy := redisProxy(t)
	a := newTestApp(t, viaProxy)
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	seats := firstSeats(t, a.Pool, a.EventID, 2)
	admitted, late := a.newClient(t), a.newClient(t)
	if q := admitted.queue("POST", a.EventID); !q.Admitted {
		t.Fatalf("join: got %+v, want admitted", q)
	}
	proxy.Down()

	st, raw, h := late.raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/queue", nil, nil)
	if e, _ := parseError(raw); st != http.StatusServiceUnavailable || e.Error != "queue_paused" || h.Get("Retry-After") == "" {
		t.Errorf("join with Redis gone: got %d %q (Retry-After %q), want 503 queue_paused with Retry-After", st, e.Error, h.Get("Retry-After"))
	}
	page := "/events/" + demoSlug + "/queue"
	st, body, h := late.raw("GET", page, nil, nil)
	if st != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(string(body), "The queue is paused") ||
		!strings.Contains(string(body), `hx-get="`+page+`"`) {
		t.Errorf("queue page with Redis gone: got %d (Retry-After %q), want 503 saying paused and still polling: %s", st, h.Get("Retry-After"), truncate(body))
	}
	// Paused, the page reads the board (which fails too) and looks once it answers.
	for _, want := range []string{`data-state="paused"`, `data-board="/api/v1/events/` + itoa(a.EventID) + `/queue/board"`, `data-poll-after="5"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("paused queue page: want %s in it", want)
		}
	}
	if st, raw, _ := late.raw("GET", "/api/v1/events/"+itoa(a.EventID)+"/queue/board", nil, nil); st != http.StatusServiceUnavailable {
		t.Errorf("board with Redis gone: got %d %s, want 503", st, truncate(raw))
	}
	if st, e, _ := holdStatus(late, a.EventID, seats[1], nil); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("hold by a late arrival with Redis gone: got %d %q, want 429 not_admitted", st, e.Error)
	}

	h1 := admitted.hold(a.EventID, seats[0])
	co := admitted.checkout(h1.HoldID)
	if co.OrderID == 0 {
		t.Error("checkout with Redis gone: no order")
	}
	if st, _, h := admitted.noRedirects().raw("GET", page, nil, nil); st != http.StatusSeeOther || h.Get("Location") != "/events/"+demoSlug+"/seats" {
		t.Errorf("queue page of an admitted buyer with Redis gone: got %d to %q, want 303 to the seats", st, h.Get("Location"))
	}

	// Redis back: the late arrival queues and gets in, the seat already held stays
	// held, and nothing was sold twice.
	proxy.Up()
	runQueue(t, a)
	late.queue("POST", a.EventID) // the join that was refused, as the page repeats it
	waitAdmitted(t, late, a.EventID, 15*time.Second)
	if st, e, _ := holdStatus(late, a.EventID, seats[0], nil); st != http.StatusConflict || e.Error != "seat_unavailable" {
		t.Errorf("hold of the seat held during the outage: got %d %q, want 409 seat_unavailable", st, e.Error)
	}
	late.hold(a.EventID, seats[1])
	bookingtest.Check(t, a.Pool, a.EventID)
}

// TestQueueRedisHung: Redis stops answering (SIGSTOP: connections stay open, nothing
// comes back) during a queued onsale. New arrivals are told the queue is paused, not
// left hanging; a buyer admitted before keeps holding and checking out (the token
// verifies by signature, the rate limiter lets calls through after its short timeout).
// Redis resumes: the late arrival gets in, and no seat was sold twice.
func TestQueueRedisHung(t *testing.T) {
	t.Parallel()
	srv := dbtest.StartRedisServer(t, "")
	a := newTestApp(t, func(o *appOptions) {
		fastQueue(o)
		o.Env = map[string]string{"REDIS_URL": "redis://" + srv.Addr() + "/0"}
	})
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	runQueue(t, a)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	admitted, late := a.newClient(t), a.newClient(t)
	if q := admitted.queue("POST", a.EventID); !q.Admitted {
		t.Fatalf("join: got %+v, want admitted", q)
	}

	srv.Hang()
	st, raw, h := late.raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/queue", nil, nil)
	if e, _ := parseError(raw); st != http.StatusServiceUnavailable || e.Error != "queue_paused" || h.Get("Retry-After") == "" {
		t.Errorf("join with Redis hung: got %d %q, want 503 queue_paused with Retry-After", st, e.Error)
	}
	h1 := admitted.hold(a.EventID, seats[0], seats[1])
	if co := admitted.checkout(h1.HoldID); co.OrderID == 0 {
		t.Error("checkout with Redis hung: no order")
	}

	srv.Resume()
	late.queue("POST", a.EventID) // the join that was refused, as the page repeats it
	waitAdmitted(t, late, a.EventID, 15*time.Second)
	if st, e, _ := holdStatus(late, a.EventID, seats[0], nil); st != http.StatusConflict || e.Error != "seat_unavailable" {
		t.Errorf("hold of a seat held while Redis hung: got %d %q, want 409 seat_unavailable", st, e.Error)
	}
	late.hold(a.EventID, seats[2])
	bookingtest.Check(t, a.Pool, a.EventID)
}

// TestQueuePageFirstVisitKeepsAdmission: a browser's first visit to the queue page
// (no session yet) that is let in at once is sent to the seat map, and the seat map
// lets it in on the session's admission. The session's buyer used to be saved early
// in the request and what the join put in the session after it was lost, so the seat
// map sent the browser back to the queue page once more.
func TestQueuePageFirstVisitKeepsAdmission(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue)
	roomOn(t, app, app.EventID, 10, 100, time.Minute)
	runQueue(t, app)
	seats := "/events/" + demoSlug + "/seats"
	// Each try is a new browser: only a first visit shows it. A first visit may find
	// the room's bucket empty and wait its turn; try again until one is let in at once.
	deadline := time.Now().Add(15 * time.Second)
	for {
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar, Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(path string) *http.Response {
			t.Helper()
			resp, err := browser.Get(app.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		resp := get("/events/" + demoSlug + "/queue")
		if resp.StatusCode == http.StatusSeeOther && resp.Header.Get("Location") == seats {
			if resp := get(seats); resp.StatusCode != http.StatusOK {
				t.Errorf("the seat map after a first visit let in at once: got %d to %q, want 200 (the admission kept in the session)",
					resp.StatusCode, resp.Header.Get("Location"))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no first visit was let in at once within 15 s (last: %d)", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestQueueProgressStartsAtTheJoin: the queue page's progress bar starts from how many
// were ahead when the page first saw the visitor waiting, kept in a cookie the page
// alone sets, and a join by a visitor whose session exists writes nothing to the
// session (it used to keep the start there: a second session write for every arrival
// of a flash crowd). One slot: a shopper has it, two wait, the buyer joins third
// through the API and opens the page; the shopper releases, the first waiter goes in,
// and the buyer's page says one of the two ahead has gone in (50 %).
func TestQueueProgressStartsAtTheJoin(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, fastQueue)
	roomOn(t, app, app.EventID, 1, 100, time.Minute)
	runQueue(t, app)
	ctx := context.Background()
	// Every session write PostgreSQL sees, counted by the database itself.
	for _, q := range []string{
		`CREATE TABLE session_writes (n bigint NOT NULL)`,
		`INSERT INTO session_writes VALUES (0)`,
		`CREATE FUNCTION count_session_write() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN UPDATE session_writes SET n = n + 1; RETURN NULL; END $$`,
		`CREATE TRIGGER count_session_write AFTER INSERT OR UPDATE ON sessions
			FOR EACH ROW EXECUTE FUNCTION count_session_write()`,
	} {
		if _, err := app.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	writes := func() int64 {
		t.Helper()
		var n int64
		if err := app.Pool.QueryRow(ctx, `SELECT n FROM session_writes`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	seat := firstSeats(t, app.Pool, app.EventID, 1)[0]
	shopper, first, second, buyer := app.newClient(t), app.newClient(t), app.newClient(t), app.newClient(t).noRedirects()
	if q := shopper.queue("POST", app.EventID); !q.Admitted {
		t.Fatalf("shopper: got %+v, want admitted", q)
	}
	first.queue("POST", app.EventID)
	second.queue("POST", app.EventID)
	before := writes()
	st, body, h := buyer.raw("POST", "/api/v1/events/"+itoa(app.EventID)+"/queue", nil, nil)
	var q web.QueueJSON
	if err := json.Unmarshal(body, &q); st != http.StatusOK || err != nil || q.Admitted || q.Ahead != 2 {
		t.Fatalf("buyer's join: got %d %s, want 200 with 2 ahead", st, body)
	}
	if n := writes() - before; n != 0 {
		t.Errorf("a join by a visitor with a session: %d session writes, want none", n)
	}
	// The bar is the queue page's: the API answers the figures and sets no cookie.
	if sc := strings.Join(h.Values("Set-Cookie"), "; "); strings.Contains(sc, web.QueueStartCookie) {
		t.Errorf("the API join set %q, want no progress-bar cookie", sc)
	}
	page := "/events/" + demoSlug + "/queue"
	progress := func(want string) {
		t.Helper()
		st, body, _ := buyer.raw("GET", page, nil, nil)
		if st != http.StatusOK {
			t.Fatalf("queue page: got %d, want 200", st)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		bar := doc.Find(`#queue progress[data-q="progress"]`)
		if got := bar.AttrOr("value", "") + "/" + bar.AttrOr("max", "") + " " + bar.Text(); got != want {
			t.Errorf("progress: got %q, want %q", got, want)
		}
	}
	progress("0/2 0%")
	held := shopper.hold(app.EventID, seat)
	if st := shopper.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("shopper's release: got %d, want 204", st)
	}
	for deadline := time.Now().Add(5 * time.Second); !first.queue("GET", app.EventID).Admitted; {
		if time.Now().After(deadline) {
			t.Fatal("the first waiter was not let in within 5 s of the release")
		}
		time.Sleep(20 * time.Millisecond)
	}
	progress("1/2 50%")
}
