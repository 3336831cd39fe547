package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/booking"
	"boxoffice/internal/browsertest"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/waitroom"
	"boxoffice/web"
)

// The presale's waiting room: code holders queue in a room of their own before the
// public onsale (web/presaleroom.go).

const (
	// windowLater puts the public onsale beyond the hour in which the public room
	// takes arrivals beside a presale's.
	windowLater = `onsale_at = now() + interval '2 hours', sales_close_at = NULL`
	presaleSoon = `now() + interval '10 minutes', now() + interval '50 minutes'`
)

// presaleApp is a server whose demo event has its room on (5 slots, 50/s) and the
// public onsale beyond the hour, with access code code on window (SQL) and quota
// (0: none); run starts the admitter.
func presaleApp(t *testing.T, code, window string, quota int, run bool, opts ...func(*appOptions)) *testApp {
	t.Helper()
	a := newTestApp(t, opts...)
	setWindow(t, a.Pool, a.EventID, windowLater)
	roomOn(t, a, a.EventID, 5, 50, time.Minute)
	presaleCode(t, a, a.EventID, code, window, quota, false)
	if run {
		runQueue(t, a)
	}
	return a
}

func queuePath(eventID int64) string { return "/api/v1/events/" + itoa(eventID) + "/queue" }

// enterCode enters an access code for the client's session through the API.
func enterCode(t testing.TB, c *client, eventID int64, code string) {
	t.Helper()
	if st := c.do("POST", "/api/v1/events/"+itoa(eventID)+"/access-code", map[string]string{"code": code}, nil); st != http.StatusOK {
		t.Fatalf("entering code %s: got %d, want 200", code, st)
	}
}

// roomToken is an admission to room roomID for visitor, signed by the server's keys as
// the room signs one (a room that is off admits at once, without Redis).
func roomToken(t testing.TB, a *testApp, roomID int64, visitor string) http.Header {
	t.Helper()
	st, err := a.App.Queue.Join(t.Context(), waitroom.Event{ID: roomID}, visitor)
	if err != nil || st.Token == "" {
		t.Fatalf("an admission to room %d: %+v, %v", roomID, st, err)
	}
	return http.Header{"X-Admission-Token": {st.Token}}
}

// TestPresaleRoom: with the room on, before the public onsale, a buyer who entered a
// code joins the presale's queue, is admitted (an admission of the presale's room,
// not the public one's), holds and buys; a buyer without a code is refused the queue,
// told when the public sale opens, and gets not_on_sale on a hold. An admission of
// the public room is refused for a presale's hold and, after the onsale, an admission
// of the presale's room for a public hold; the same visitor's admission of the right
// room holds (the controls).
func TestPresaleRoom(t *testing.T) {
	t.Parallel()
	a := presaleApp(t, "MEMBERS", presaleNow, 4, true, fastQueue)
	seats := firstSeats(t, a.Pool, a.EventID, 5)

	bob := a.newClient(t)
	st, raw, _ := bob.raw("POST", queuePath(a.EventID), nil, nil)
	if e, _ := parseError(raw); st != http.StatusForbidden || e.Error != "access_code_required" ||
		!strings.Contains(e.Message, "opens to the public on") || !strings.Contains(string(raw), `"onsaleAt"`) {
		t.Errorf("joining without a code: got %d %s, want 403 access_code_required saying when the public sale opens", st, truncate(raw))
	}
	if st, e, _ := holdStatus(bob, a.EventID, seats[4], nil); st != http.StatusConflict || e.Error != "not_on_sale" {
		t.Errorf("a hold without a code: got %d %q, want 409 not_on_sale", st, e.Error)
	}

	ada := a.newClient(t)
	enterCode(t, ada, a.EventID, "members")
	q := ada.queue("POST", a.EventID)
	if !q.Admitted {
		q = waitAdmitted(t, ada, a.EventID, 20*time.Second)
	}
	visitor := visitorOf(t, a, ada)
	if _, err := a.App.Queue.Verify(q.Token, booking.PresaleRoomID(a.EventID), visitor); err != nil {
		t.Errorf("the code holder's admission: %v, want one of the presale's room", err)
	}
	if _, err := a.App.Queue.Verify(q.Token, a.EventID, visitor); err == nil {
		t.Error("the presale's admission verifies for the public room")
	}
	h := ada.hold(a.EventID, seats[:2]...)
	co := ada.checkout(h.HoldID)
	ada.pay(co.OrderID, "normal")
	waitOrder(t, ada, co.OrderID, "confirmed")
	if n := count(t, a.Pool, `SELECT count(*) FROM tickets k JOIN seats s ON s.id = k.seat_id WHERE s.id = ANY($1)`, seats[:2]); n != 2 {
		t.Errorf("tickets of the presale's purchase: got %d, want 2", n)
	}

	// Cross-room admissions, for a code holder who never queued.
	carol := a.newClient(t)
	enterCode(t, carol, a.EventID, "MEMBERS")
	cv := visitorOf(t, a, carol)
	if st, e, _ := holdStatus(carol, a.EventID, seats[2], roomToken(t, a, a.EventID, cv)); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("a presale's hold with a public admission: got %d %q, want 429 not_admitted", st, e.Error)
	}
	if st, e, _ := holdStatus(carol, a.EventID, seats[2], roomToken(t, a, booking.PresaleRoomID(a.EventID), cv)); st != http.StatusCreated {
		t.Errorf("control, a presale's hold with the presale's admission: got %d %q, want 201", st, e.Error)
	}

	// After the onsale the public room is the one: a presale's admission holds nothing.
	setWindow(t, a.Pool, a.EventID, windowOpen)
	erin, frank := a.newClient(t), a.newClient(t)
	enterCode(t, erin, a.EventID, "MEMBERS")
	enterCode(t, frank, a.EventID, "MEMBERS")
	ev, fv := visitorOf(t, a, erin), visitorOf(t, a, frank)
	for deadline := time.Now().Add(10 * time.Second); ; {
		// Refused until the server reads the event's new window (within a second).
		st, e, _ := holdStatus(erin, a.EventID, seats[3], roomToken(t, a, a.EventID, ev))
		if st == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a public hold with a public admission after the onsale: got %d %q, want 201", st, e.Error)
		}
		time.Sleep(100 * time.Millisecond) // polling, as a client does
	}
	if st, e, _ := holdStatus(frank, a.EventID, seats[4], roomToken(t, a, booking.PresaleRoomID(a.EventID), fv)); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("a public hold with a presale's admission: got %d %q, want 429 not_admitted", st, e.Error)
	}
	if st, e, _ := holdStatus(frank, a.EventID, seats[4], roomToken(t, a, a.EventID, fv)); st != http.StatusCreated {
		t.Errorf("control, the same hold with a public admission: got %d %q, want 201", st, e.Error)
	}
}

// TestPresaleRoomStockStops: the presale's room stops admitting once its codes' quota
// is bought (its board says sold out and a code holder who joins waits), while the
// event has seats left; with more quota (the control) the waiting holder is let in,
// and the hold statement still keeps the holds within the quota.
func TestPresaleRoomStockStops(t *testing.T) {
	t.Parallel()
	a := presaleApp(t, "FANS", presaleNow, 2, true, fastQueue)
	seats := firstSeats(t, a.Pool, a.EventID, 5)

	ada := a.newClient(t)
	enterCode(t, ada, a.EventID, "FANS")
	if q := ada.queue("POST", a.EventID); !q.Admitted {
		waitAdmitted(t, ada, a.EventID, 20*time.Second)
	}
	co := ada.checkout(ada.hold(a.EventID, seats[:2]...).HoldID)
	ada.pay(co.OrderID, "normal")
	waitOrder(t, ada, co.OrderID, "confirmed")

	board := boardURLOf(a.EventID) + "?room=presale"
	dbtest.Eventually(t, "the presale room's board to say its places are gone", 10*time.Second, func() bool {
		var b web.BoardJSON
		return ada.do("GET", board, nil, &b) == http.StatusOK && b.SoldOut && b.SeatsLeft == 0
	})
	var pub web.BoardJSON
	if st := ada.do("GET", boardURLOf(a.EventID), nil, &pub); st == http.StatusOK && pub.SoldOut {
		t.Errorf("the public room's board says sold out with %d seats left", pub.SeatsLeft)
	}
	bob := a.newClient(t)
	enterCode(t, bob, a.EventID, "FANS")
	if q := bob.queue("POST", a.EventID); q.Admitted || !q.SoldOut {
		t.Fatalf("joining the presale with its quota bought: got %+v, want waiting, sold out", q)
	}
	if st, e, _ := holdStatus(bob, a.EventID, seats[2], nil); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("a hold while waiting: got %d %q, want 429 not_admitted", st, e.Error)
	}

	// The control: more quota, and the waiting holder is let in.
	if _, err := a.Pool.Exec(t.Context(), `UPDATE access_codes SET quota = 4 WHERE event_id = $1`, a.EventID); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, bob, a.EventID, 20*time.Second)
	bob.hold(a.EventID, seats[2:4]...)
	if st, e, _ := holdStatus(bob, a.EventID, seats[4], nil); st != http.StatusConflict || e.Error != "presale_quota" {
		t.Errorf("a fifth place on a quota of four: got %d %q, want 409 presale_quota", st, e.Error)
	}
	if n := count(t, a.Pool, `SELECT access_code_places($1, (SELECT id FROM access_codes WHERE event_id = $1))`, a.EventID); n != 4 {
		t.Errorf("the code's places: got %d, want the quota, 4", n)
	}
}

func boardURLOf(eventID int64) string { return "/api/v1/events/" + itoa(eventID) + "/queue/board" }

// TestPresaleRoomPages: before a presale opens, a browser without a code is refused the
// queue page, told when the public sale opens and sent to the code page, which says
// so too, and the door sends such a visitor there; with the code entered, the code
// page says the presale's waiting room is open, the queue page waits for the
// presale's draw and follows its board, and the door's place is the presale room's.
func TestPresaleRoomPages(t *testing.T) {
	t.Parallel()
	a := presaleApp(t, "MEMBERS", presaleSoon, 0, false)
	b := a.newBrowser(t)

	st, body, _ := b.do("GET", "/events/demo-night/queue", nil, nil)
	if s := string(body); st != http.StatusForbidden || !strings.Contains(s, "the sale opens to the public on") ||
		!strings.Contains(s, `href="/events/demo-night/code"`) {
		t.Errorf("queue page without a code: got %d, want 403 saying when the public sale opens, linking to the code page: %s", st, truncate(body))
	}
	doc, token := b.page("/events/demo-night/code")
	if s := doc.Find(".presale .notice").Text(); !strings.Contains(s, "This is the presale, for access code holders") {
		t.Errorf("code page without a code: got notice %q, want the presale's", s)
	}
	if st, body, _ := b.do("GET", "/events/demo-night/door", nil, nil); st != http.StatusOK || !strings.Contains(string(body), `data-code="/events/demo-night/code"`) {
		t.Errorf("door page: got %d without the code page for the door's script", st)
	}

	st, body, _ = b.do("POST", "/events/demo-night/code", url.Values{"_csrf": {token}, "code": {"members"}}, nil)
	if st != http.StatusOK || !strings.Contains(string(body), "The presale&#39;s waiting room is open: wait in it now") {
		t.Fatalf("entering the code: got %d, want 200 saying the presale's waiting room is open: %s", st, truncate(body))
	}
	st, body, _ = b.do("GET", "/events/demo-night/queue", nil, nil)
	if s := string(body); st != http.StatusOK || !strings.Contains(s, "Before the presale: your place is drawn at random") ||
		!strings.Contains(s, "/queue/board?room=presale") {
		t.Errorf("queue page with the code: got %d, want the presale's pre-queue following its board: %s", st, truncate(body))
	}
	// The door's place, through the browser's session.
	placePath := "/api/v1/events/" + itoa(a.EventID) + "/queue/place"
	st, body, _ = b.do("POST", placePath, nil, http.Header{"X-Csrf-Token": {token}})
	if s := string(body); st != http.StatusOK || !strings.Contains(s, `"presale":true`) || !strings.Contains(s, `"board":"/api/v1/events/`+itoa(a.EventID)+`/queue/board?room=presale"`) {
		t.Errorf("the door's place with the code: got %d %s, want the presale room's", st, truncate(body))
	}
	u, _ := url.Parse(a.URL)
	found := false
	for _, ck := range b.http.Jar.Cookies(u) {
		found = found || ck.Name == web.PlaceCookie(booking.PresaleRoomID(a.EventID))
	}
	if !found {
		t.Error("no place cookie of the presale's room")
	}
	other := a.newClient(t)
	st, raw, _ := other.raw("GET", placePath, nil, nil)
	if e, _ := parseError(raw); st != http.StatusForbidden || e.Error != "access_code_required" {
		t.Errorf("the door's place without a code: got %d %s, want 403 access_code_required", st, truncate(raw))
	}
}

// TestBrowserPresaleDoor: in Chromium, before the public onsale, a visitor without a
// code who opens the door is sent to the code page, which says the sale is the
// presale's; once the code is typed, the page's way on is the door, which takes a
// place in the presale's room, follows its board, claims at its turn and goes to the
// seat map, admitted.
func TestBrowserPresaleDoor(t *testing.T) {
	t.Parallel()
	app := presaleApp(t, "MEMBERS", presaleNow, 0, true, frontQueue)

	ctx := browsertest.New(t).NewContext(t)
	browsertest.Do(t, ctx, chromedp.Navigate(app.URL+"/events/"+demoSlug+"/door"))
	wait, cancel := context.WithTimeout(ctx, browsertest.Timeout)
	defer cancel()
	// The door's script navigates: wait for the code page's element, not a script's answer.
	if err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS(".presale .notice"))); err != nil {
		t.Fatalf("the door did not send a visitor without a code to the code page: %v", err)
	}
	if path := js[string](t, ctx, `location.pathname`); path != "/events/"+demoSlug+"/code" {
		t.Errorf("a visitor without a code at the door: at %s, want the code page", path)
	}
	if s := js[string](t, ctx, `document.querySelector(".presale .notice").textContent`); !strings.Contains(s, "the sale opens to the public on") {
		t.Errorf("code page after the door: got notice %q, want when the public sale opens", s)
	}
	browsertest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#presale-code"), "members\r"))
	if err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS(".presale .cta a"))); err != nil {
		t.Fatalf("the code page did not take the code: %v", err)
	}
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS(".presale .cta a")))
	wait2, cancel2 := context.WithTimeout(ctx, browsertest.Timeout)
	defer cancel2()
	if err := chromedp.Do(wait2, chromedp.WaitVisible(chromedp.CSS("#seat-form"))); err != nil {
		t.Fatalf("the seat map did not come through the presale's door: %v", err)
	}
	if path := js[string](t, ctx, `location.pathname`); path != "/events/"+demoSlug+"/seats" {
		t.Errorf("after its turn: at %s, want the seat map", path)
	}
}
