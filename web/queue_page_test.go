package web

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
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
	for deadline := time.Now().Add(5 * time.Second); second.queue("POST", a.EventID).SeatsLeft <= 0; {
		if time.Now().After(deadline) {
			t.Fatal("the queue never said how many seats are left")
		}
		time.Sleep(20 * time.Millisecond)
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
	if !strings.Contains(string(event), `href="`+page+`"`) || !strings.Contains(string(event), "Join the queue") {
		t.Error("event page with the room on: want the way in through the queue")
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
	want := "your place is drawn at random at " + onsale.UTC().Format("15:04 MST")
	if !strings.Contains(string(body), want) && !strings.Contains(string(body), onsale.UTC().Format("Mon 2 Jan, 15:04 MST")) {
		t.Errorf("pre-queue page: want it to say %q", want)
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
