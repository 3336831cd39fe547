package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/booking"
	"boxoffice/internal/session"
	"boxoffice/internal/waitroom"
	"boxoffice/web"
)

// The waiting room through HTTP: the queue calls, the admission check in front of seat
// selection and checkout, the queue page, and giving slots back.

// fastQueue is the room's tuning in these tests: an admitter that ticks often, so that
// a freed slot is taken again within a fraction of a second.
func fastQueue(o *appOptions) {
	o.Queue = waitroom.Options{Tick: 20 * time.Millisecond, Lease: 500 * time.Millisecond, Refresh: 50 * time.Millisecond}
}

// roomOn turns the event's waiting room on, as an organiser would. Call it before the
// first request about the event: the server keeps events' settings for a second.
func roomOn(t testing.TB, a *testApp, eventID int64, slots int, rate float64, ttl time.Duration) {
	t.Helper()
	_, err := a.Pool.Exec(context.Background(), `UPDATE events SET queue_enabled = true, queue_slots = $2,
		queue_rate = $3, queue_token_ttl_seconds = $4 WHERE id = $1`, eventID, slots, rate, int(ttl/time.Second))
	if err != nil {
		t.Fatal(err)
	}
}

// runQueue starts the admitter until the test ends.
func runQueue(t testing.TB, a *testApp) {
	t.Helper()
	a.App.RunQueue(t)
}

// noRedirects makes the client show redirects rather than follow them.
func (c *client) noRedirects() *client {
	c.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// queue joins (POST) or looks (GET) and returns the answer, or stops the test.
func (c *client) queue(method string, eventID int64) web.QueueJSON {
	c.t.Helper()
	var q web.QueueJSON
	if st := c.do(method, "/api/v1/events/"+itoa(eventID)+"/queue", nil, &q); st != http.StatusOK {
		c.t.Fatalf("%s queue: got status %d, want 200", method, st)
	}
	return q
}

// waitAdmitted asks GET queue until the client is admitted, with a deadline.
func waitAdmitted(t testing.TB, c *client, eventID int64, within time.Duration) web.QueueJSON {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		q := c.queue("GET", eventID)
		if q.Admitted {
			return q
		}
		if time.Now().After(deadline) {
			t.Fatalf("not admitted within %v: last answer %+v", within, q)
		}
		time.Sleep(20 * time.Millisecond) // polling, as the queue page does
	}
}

// holdStatus tries to hold one seat through the API and returns the status and error
// body (if any).
func holdStatus(c *client, eventID, seat int64, header http.Header) (int, errorBody, http.Header) {
	c.t.Helper()
	st, raw, h := c.raw("POST", "/api/v1/events/"+itoa(eventID)+"/holds", map[string]any{"seatIds": []int64{seat}}, header)
	var e errorBody
	if st >= 400 {
		var err error
		if e, err = parseError(raw); err != nil {
			c.t.Fatal(err)
		}
	}
	return st, e, h
}

// visitorOf is the client's visitor id (the buyer id in its session).
func visitorOf(t testing.TB, a *testApp, c *client) string {
	t.Helper()
	u, _ := url.Parse(a.URL)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == session.BuyerCookie {
			ctx, err := a.App.Sessions.Load(context.Background(), ck.Value)
			if err != nil {
				t.Fatal(err)
			}
			return a.App.Sessions.GetString(ctx, web.BuyerKey)
		}
	}
	t.Fatal("no session cookie")
	return ""
}

// TestQueueRoomOff: with the room off everyone passes straight through: the queue
// calls admit at once with no token needed, holds need none, and the queue page and
// the event page lead straight to the seats.
func TestQueueRoomOff(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c := a.newClient(t).noRedirects()
	q := c.queue("POST", a.EventID)
	if !q.Admitted || q.Token != "" || q.Position != 0 {
		t.Errorf("join with the room off: got %+v, want admitted with no token", q)
	}
	if q := c.queue("GET", a.EventID); !q.Admitted {
		t.Errorf("status with the room off: got %+v, want admitted", q)
	}
	c.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 1)...)
	st, _, h := c.raw("GET", "/events/"+demoSlug+"/queue", nil, nil)
	if st != http.StatusSeeOther || h.Get("Location") != "/events/"+demoSlug+"/seats" {
		t.Errorf("queue page with the room off: got %d to %q, want 303 to the seats", st, h.Get("Location"))
	}
	_, body, _ := c.raw("GET", "/events/"+demoSlug, nil, nil)
	if !strings.Contains(string(body), `href="/events/`+demoSlug+`/seats"`) || strings.Contains(string(body), "Join the queue") {
		t.Errorf("event page with the room off: want the way in to be the seats, not the queue")
	}
}

// TestQueueAdmitsAtOnce: room on, free slots and nobody waiting: a buyer is admitted
// at once, the token is in the answer and the session, and it works for a hold, a
// checkout and a payment, with the session alone or with the header alone.
func TestQueueAdmitsAtOnce(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	c := a.newClient(t)
	var events []web.EventJSON
	if st := c.do("GET", "/api/v1/events", nil, &events); st != http.StatusOK || len(events) != 1 ||
		!events[0].WaitingRoom || !events[0].SalesCloseAt.Equal(events[0].StartsAt) {
		t.Errorf("events: got %d %+v, want the event with waitingRoom and sales closing at its start", st, events)
	}
	q := c.queue("POST", a.EventID)
	if !q.Admitted || q.Token == "" || q.ExpiresAt == nil || time.Until(*q.ExpiresAt) < 30*time.Second {
		t.Fatalf("join with a free slot: got %+v, want admitted with a token lasting about a minute", q)
	}
	if again := c.queue("GET", a.EventID); !again.Admitted || again.Token != q.Token {
		t.Errorf("status after admission: got %+v, want the same admission", again)
	}
	h := c.hold(a.EventID, seats[0]) // the session carries the token
	co := c.checkout(h.HoldID)
	c.pay(co.OrderID, "")
	waitOrder(t, c, co.OrderID, booking.StatusConfirmed)

	// The header alone: a token minted for this visitor that the session never saw.
	other := a.newClient(t)
	if st, e, _ := holdStatus(other, a.EventID, seats[1], nil); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Fatalf("hold before joining: got %d %q, want 429 not_admitted", st, e.Error)
	}
	ev, err := a.Booking.Buyer.Event(t.Context(), a.EventID)
	if err != nil {
		t.Fatal(err)
	}
	minted, err := a.App.Queue.Join(t.Context(), ev.Room(), visitorOf(t, a, other))
	if err != nil || !minted.Admitted {
		t.Fatalf("minting an admission: got %+v, %v", minted, err)
	}
	if st, e, _ := holdStatus(other, a.EventID, seats[1], http.Header{web.AdmissionHeader: {minted.Token}}); st != http.StatusCreated {
		t.Errorf("hold with the token in X-Admission-Token: got %d %q, want 201", st, e.Error)
	}
	if st, _, _ := holdStatus(other, a.EventID, seats[2], nil); st != http.StatusTooManyRequests {
		t.Errorf("hold without the header, the session never admitted: got %d, want 429", st)
	}
}

// TestQueueFullSlots: room on with its one slot taken: a second buyer queues, is turned
// back from holds (API: 429 with the position; pages: to the queue page), and gets in
// as soon as the first buyer releases; then the hold succeeds.
func TestQueueFullSlots(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 1, 100, time.Minute)
	runQueue(t, a)
	seats := firstSeats(t, a.Pool, a.EventID, 2)
	first, second := a.newClient(t), a.newClient(t).noRedirects()
	if q := first.queue("POST", a.EventID); !q.Admitted {
		t.Fatalf("first buyer: got %+v, want admitted", q)
	}
	q := second.queue("POST", a.EventID)
	if q.Admitted || q.Position != 1 || q.Ahead != 0 || q.Waiting != 1 || q.Token != "" {
		t.Fatalf("second buyer: got %+v, want queued first in line, no token", q)
	}
	st, e, h := holdStatus(second, a.EventID, seats[1], nil)
	if st != http.StatusTooManyRequests || e.Error != "not_admitted" || h.Get("Retry-After") == "" {
		t.Errorf("hold while queued: got %d %q (Retry-After %q), want 429 not_admitted with Retry-After", st, e.Error, h.Get("Retry-After"))
	}
	if pos := positionOf(t, second, a.EventID, seats[1]); pos != 1 {
		t.Errorf("position in the refusal: got %d, want 1", pos)
	}
	// Browsers wait at the front door; the sorted-set room's page keeps answering.
	queuePage, door := "/events/"+demoSlug+"/queue", "/events/"+demoSlug+"/door"
	if st, _, h := second.raw("GET", "/events/"+demoSlug+"/seats", nil, nil); st != http.StatusSeeOther || h.Get("Location") != door {
		t.Errorf("seat page while queued: got %d to %q, want 303 to %s", st, h.Get("Location"), door)
	}
	form := "seat=" + itoa(seats[1])
	hx := http.Header{"HX-Request": {"true"}, "Content-Type": {"application/x-www-form-urlencoded"}}
	if st, _, h := second.raw("POST", "/events/"+demoSlug+"/holds", form, hx); h.Get("HX-Redirect") != door {
		t.Errorf("htmx hold while queued: got %d with HX-Redirect %q, want %s", st, h.Get("HX-Redirect"), door)
	}
	if st, body, _ := second.raw("GET", queuePage, nil, nil); st != http.StatusOK || !strings.Contains(string(body), "You are number 1 in the queue") {
		t.Errorf("queue page while queued: got %d, want 200 saying number 1: %s", st, truncate(body))
	}

	held := first.hold(a.EventID, seats[0])
	if st, _, h := second.raw("GET", "/holds/"+held.HoldID+"/checkout", nil, nil); st != http.StatusSeeOther || h.Get("Location") != door {
		t.Errorf("checkout page while queued: got %d to %q, want 303 to %s", st, h.Get("Location"), door)
	}
	if st := first.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("release: got %d, want 204", st)
	}
	waitAdmitted(t, second, a.EventID, 5*time.Second)
	if st, e, _ := holdStatus(second, a.EventID, seats[1], nil); st != http.StatusCreated {
		t.Errorf("hold once admitted: got %d %q, want 201", st, e.Error)
	}
	if st, _, h := second.raw("GET", queuePage, nil, nil); st != http.StatusSeeOther || h.Get("Location") != "/events/"+demoSlug+"/seats" {
		t.Errorf("queue page once admitted: got %d to %q, want 303 to the seats", st, h.Get("Location"))
	}
}

// TestQueueSlotBackOnPurchase: a shopper who pays gives the slot back at once: the
// next in the queue is admitted without waiting for the admission to lapse.
func TestQueueSlotBackOnPurchase(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 1, 100, time.Minute)
	runQueue(t, a)
	first, second := a.newClient(t), a.newClient(t)
	if q := first.queue("POST", a.EventID); !q.Admitted {
		t.Fatalf("first buyer: got %+v, want admitted", q)
	}
	if q := second.queue("POST", a.EventID); q.Admitted {
		t.Fatalf("second buyer: got %+v, want queued", q)
	}
	co := first.checkout(first.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 1)...).HoldID)
	first.pay(co.OrderID, "")
	waitAdmitted(t, second, a.EventID, 5*time.Second)
}

// positionOf is the position a refused hold reports.
func positionOf(t testing.TB, c *client, eventID, seat int64) int {
	t.Helper()
	var body struct {
		Error    string `json:"error"`
		Position *int   `json:"position"`
	}
	if st := c.do("POST", "/api/v1/events/"+itoa(eventID)+"/holds", map[string]any{"seatIds": []int64{seat}}, &body); st != http.StatusTooManyRequests || body.Position == nil {
		t.Fatalf("refused hold: got %d %+v, want 429 with a position", st, body)
	}
	return *body.Position
}

// TestAdmissionRefusesTokens: a token of another session, of another event, or with a
// byte changed is refused (429 not_admitted) on every guarded call; the genuine one
// passes.
func TestAdmissionRefusesTokens(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	otherEvent := smallEvent(t, a.Pool, "small-queue")
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	roomOn(t, a, otherEvent, 5, 100, time.Minute)
	seats := firstSeats(t, a.Pool, a.EventID, 2)
	owner, thief := a.newClient(t), a.newClient(t)
	tok := owner.queue("POST", a.EventID).Token
	elsewhere := thief.queue("POST", otherEvent).Token // the thief's own admission, to another event
	if tok == "" || elsewhere == "" {
		t.Fatal("joining: want admitted with tokens")
	}
	forged := []byte(tok)
	forged[len(forged)/2] ^= 1
	for name, token := range map[string]string{
		"another session's": tok, "another event's": elsewhere, "a forged": string(forged), "an empty": "",
	} {
		hdr := http.Header{web.AdmissionHeader: {token}}
		if st, e, _ := holdStatus(thief, a.EventID, seats[0], hdr); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
			t.Errorf("hold with %s token: got %d %q, want 429 not_admitted", name, st, e.Error)
		}
	}
	// Checkout is guarded too: the guard turns the thief back before the handler would
	// say the hold is not theirs.
	h := owner.hold(a.EventID, seats[1])
	st, raw, _ := thief.raw("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "x@example.com"}, http.Header{web.AdmissionHeader: {tok}})
	if e, _ := parseError(raw); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("checkout with another session's token: got %d %q, want 429 not_admitted", st, e.Error)
	}
	co := owner.checkout(h.HoldID)
	owner.pay(co.OrderID, "")
}

// TestQueueAllHeld: with every seat and place left held by shoppers, a waiting buyer is
// told so (JSON allHeld, no ETA; the page says why nobody moves), and goes in once a
// hold is released.
func TestQueueAllHeld(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	ev := smallEvent(t, a.Pool, "all-held") // 10 seats, 10 standing places
	roomOn(t, a, ev, 2, 100, time.Minute)
	runQueue(t, a)
	seats := firstSeats(t, a.Pool, ev, 10)
	tier := count(t, a.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, ev)
	first, second, third := a.newClient(t), a.newClient(t), a.newClient(t).noRedirects()
	var holds []web.HoldJSON
	for i, c := range []*client{first, second} {
		if q := c.queue("POST", ev); !q.Admitted {
			t.Fatalf("buyer %d: got %+v, want admitted", i+1, q)
		}
		holds = append(holds, c.hold(ev, seats[5*i:5*i+5]...))
		var h web.HoldJSON
		if st := c.do("POST", "/api/v1/events/"+itoa(ev)+"/holds", map[string]any{"gaTierId": tier, "quantity": 5}, &h); st != http.StatusCreated {
			t.Fatalf("buyer %d, standing places: got %d, want 201", i+1, st)
		}
	}
	third.queue("POST", ev)
	var q web.QueueJSON
	// The room counts from a seat map up to a few seconds old (booking.stockMaxAge).
	for deadline := time.Now().Add(15 * time.Second); !q.AllHeld; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the room never said everything is held: last %+v", q)
		}
		q = third.queue("GET", ev)
	}
	if q.Admitted || q.SoldOut || q.EtaSeconds != 0 || q.Position != 1 {
		t.Errorf("everything held: got %+v, want first in line, not sold out, no ETA", q)
	}
	_, body, _ := third.raw("GET", "/events/all-held/queue", nil, nil)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	held, estimate := doc.Find(`[data-q="held"]`), doc.Find(`[data-q="estimate"]`)
	_, heldHidden := held.Attr("hidden")
	_, estimateHidden := estimate.Attr("hidden")
	if !strings.Contains(held.Text(), "Every seat and place left is held by someone paying for it now") || heldHidden || !estimateHidden {
		t.Errorf("queue page with everything held: want it to say so and give no wait (the estimate hidden): %s", truncate(body))
	}
	if st := first.do("DELETE", "/api/v1/holds/"+holds[0].HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("release: got %d, want 204", st)
	}
	waitAdmitted(t, third, ev, 15*time.Second)
}

// TestQueueBoard: the event's board is public (no session, no cookie, cacheable for a
// second) and lets a waiter keep track by itself: its number less the board's served
// is its position, and its turn has come once the board's head reaches its place.
func TestQueueBoard(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	boardURL := "/api/v1/events/" + itoa(a.EventID) + "/queue/board"
	anon := a.newClient(t)
	if st, raw, _ := anon.raw("GET", boardURL, nil, nil); st != http.StatusNotFound || !strings.Contains(string(raw), "no_waiting_room") {
		t.Errorf("board with the room off: got %d %s, want 404 no_waiting_room", st, truncate(raw))
	}
	if st, raw, _ := anon.raw("GET", "/api/v1/events/9223372036854775807/queue/board", nil, nil); st != http.StatusNotFound || !strings.Contains(string(raw), "event_not_found") {
		t.Errorf("board of no event: got %d %s, want 404 event_not_found", st, truncate(raw))
	}

	b := newTestApp(t, fastQueue) // a fresh app: the first keeps the room-off event for a second
	roomOn(t, b, b.EventID, 1, 100, time.Minute)
	runQueue(t, b)
	boardURL = "/api/v1/events/" + itoa(b.EventID) + "/queue/board"
	seats := firstSeats(t, b.Pool, b.EventID, 1)
	first, second, third := b.newClient(t), b.newClient(t), b.newClient(t)
	if q := first.queue("POST", b.EventID); !q.Admitted {
		t.Fatalf("first buyer: got %+v, want admitted", q)
	}
	q2, q3 := second.queue("POST", b.EventID), third.queue("POST", b.EventID)
	if q2.Number != 1 || q3.Number != 2 || q2.Place == nil || q3.Place == nil || *q3.Place <= *q2.Place {
		t.Fatalf("waiters: got %+v and %+v, want numbers 1 and 2 with places in that order", q2, q3)
	}
	if q2.LookAfterSeconds <= q2.PollAfterSeconds || q2.LookAfterSeconds > 150 {
		t.Errorf("a waiter's paces: refresh every %d s, look every %d s; want looks rarer than refreshes, at most half the place's 5 min apart",
			q2.PollAfterSeconds, q2.LookAfterSeconds)
	}

	readBoard := func() web.BoardJSON {
		t.Helper()
		fresh := b.newClient(t) // no session, no cookie
		st, raw, h := fresh.raw("GET", boardURL, nil, nil)
		if st != http.StatusOK || !strings.Contains(h.Get("Cache-Control"), "public") || h.Get("Set-Cookie") != "" {
			t.Fatalf("board: got %d, Cache-Control %q, Set-Cookie %q; want 200, public, no cookie: %s",
				st, h.Get("Cache-Control"), h.Get("Set-Cookie"), truncate(raw))
		}
		var bj web.BoardJSON
		if err := json.Unmarshal(raw, &bj); err != nil {
			t.Fatal(err)
		}
		return bj
	}
	bj := readBoard()
	if bj.Served != 0 || bj.Head != -1 || bj.Waiting != 2 || bj.Drawn != 0 || bj.PreQueue || bj.SecondsPerPlace <= 0 || bj.NoticeSeconds != waitroom.Notice.Seconds() {
		t.Fatalf("board with two waiting: got %+v, want nobody served from the queue yet, 2 waiting, a wait per place and the notice", bj)
	}

	// The first buyer releases its hold: its slot goes to the second.
	held := first.hold(b.EventID, seats[0])
	if st := first.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("release: got %d, want 204", st)
	}
	deadline := time.Now().Add(5 * time.Second)
	for bj = readBoard(); bj.Served < 1; bj = readBoard() {
		if time.Now().After(deadline) {
			t.Fatalf("board: nobody served within 5 s: %+v", bj)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bj.Served != 1 || bj.Head < *q2.Place || bj.Head >= *q3.Place || bj.Waiting != 1 {
		t.Errorf("board after one admission: got %+v, want 1 served, head at the second's place %v (not the third's %v), 1 waiting",
			bj, *q2.Place, *q3.Place)
	}
	if q := second.queue("GET", b.EventID); !q.Admitted {
		t.Errorf("second buyer once the head reached its place: got %+v, want admitted", q)
	}
	if q := third.queue("GET", b.EventID); q.Admitted || int64(q.Position) != q3.Number-bj.Served {
		t.Errorf("third buyer: got %+v, want waiting at its number %d less served %d", q, q3.Number, bj.Served)
	}
}

// TestQueueAdmissionCookie: an admission comes back in a cookie of its own rather than
// a second write of the session; the cookie works for its own session's buyer only,
// and a session admitted before the cookie (its token in the session) still passes.
func TestQueueAdmissionCookie(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	u, _ := url.Parse(a.URL)
	cookie := func(c *client, name string) *http.Cookie {
		for _, ck := range c.http.Jar.Cookies(u) {
			if ck.Name == name {
				return ck
			}
		}
		return nil
	}
	c := a.newClient(t)
	q := c.queue("POST", a.EventID)
	if !q.Admitted {
		t.Fatalf("join with a free slot: got %+v, want admitted", q)
	}
	ck := cookie(c, web.AdmissionCookieName(a.EventID))
	if ck == nil || ck.Value != q.Token {
		t.Fatalf("admission cookie: got %v, want the answer's token", ck)
	}
	var data []byte
	if err := a.Pool.QueryRow(t.Context(), "SELECT data FROM sessions WHERE token = $1",
		cookie(c, session.BuyerCookie).Value).Scan(&data); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "admission:") {
		t.Error("the admission was written into the session too")
	}
	c.hold(a.EventID, seats[0]) // the cookie alone carries it

	// Another session with a copy of the cookie: the token names another buyer.
	other := a.newClient(t)
	other.do("GET", "/api/v1/session", nil, nil) // a session of its own, never admitted
	other.http.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	if st, e, _ := holdStatus(other, a.EventID, seats[1], nil); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("hold with another buyer's admission cookie: got %d %q, want 429 not_admitted", st, e.Error)
	}

	// A session admitted before the cookie: the token kept in the session.
	ev, err := a.Booking.Buyer.Event(t.Context(), a.EventID)
	if err != nil {
		t.Fatal(err)
	}
	old := a.newClient(t)
	old.do("GET", "/api/v1/session", nil, nil)
	minted, err := a.App.Queue.Join(t.Context(), ev.Room(), visitorOf(t, a, old))
	if err != nil || !minted.Admitted {
		t.Fatalf("minting an admission: got %+v, %v", minted, err)
	}
	ctx, err := a.App.Sessions.Load(context.Background(), cookie(old, session.BuyerCookie).Value)
	if err != nil {
		t.Fatal(err)
	}
	a.App.Sessions.Put(ctx, web.AdmissionKey(a.EventID), minted.Token)
	if _, _, err := a.App.Sessions.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st, e, _ := holdStatus(old, a.EventID, seats[2], nil); st != http.StatusCreated {
		t.Errorf("hold of a session admitted before the cookie: got %d %q, want 201", st, e.Error)
	}
}
