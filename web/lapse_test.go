package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/waitroom"
	"boxoffice/web"
)

// A turn that lapses for want of a hold, through HTTP (lapse.go).

// roomIdle sets how long an admission to the event lasts with nothing held.
func roomIdle(t testing.TB, a *testApp, eventID int64, d time.Duration) {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE events SET queue_idle_seconds = $2 WHERE id = $1`,
		eventID, int(d/time.Second)); err != nil {
		t.Fatal(err)
	}
}

// lapsingRoom is a running room of slots shoppers at 100 a second, admissions of a
// minute lapsing after a second with nothing held, and n seats of its event.
func lapsingRoom(t *testing.T, slots, n int) (*testApp, []int64) {
	t.Helper()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, slots, 100, time.Minute)
	roomIdle(t, a, a.EventID, time.Second)
	runQueue(t, a)
	return a, firstSeats(t, a.Pool, a.EventID, n)
}

// roomCounts reads the event's room as the control room does.
func roomCounts(t testing.TB, a *testApp, eventID int64) waitroom.Counts {
	t.Helper()
	n, err := a.App.Queue.Counts(context.Background(), eventID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// lapsedBody is a 429 not_admitted as a client reads it.
type lapsedBody struct {
	Error    string `json:"error"`
	Message  string `json:"message"`
	Lapsed   bool   `json:"lapsed"`
	Position int    `json:"position"`
}

// TestTurnLapsesAPI: one slot, admissions of a minute lapsing after a second with
// nothing held. The idler is admitted and holds nothing; the next waits. The idler's
// turn lapses and the next is let in well within the idler's token's minute. The
// idler's token, in the header or the cookie, is then refused for a hold: 429
// not_admitted, lapsed, saying so in words, with the place in the queue it is back
// in; the queue says the same place. Its seat is not held.
func TestTurnLapsesAPI(t *testing.T) {
	t.Parallel()
	a, seats := lapsingRoom(t, 1, 2)

	idler, next := a.newClient(t), a.newClient(t)
	first := idler.queue("POST", a.EventID)
	if !first.Admitted || first.Token == "" || first.ExpiresAt == nil {
		t.Fatalf("the idler joining an empty room: got %+v, want admitted with a token", first)
	}
	if q := next.queue("POST", a.EventID); q.Admitted {
		t.Fatalf("next joining a full room: got %+v, want waiting", q)
	}
	waitAdmitted(t, next, a.EventID, 10*time.Second)
	if !time.Now().Before(*first.ExpiresAt) {
		t.Errorf("next admitted after the idler's token ended (%v): want before, into the lapsed slot", first.ExpiresAt)
	}
	if n := roomCounts(t, a, a.EventID); n.Lapsed != 1 || n.Reused != 1 {
		t.Errorf("room counts: got %+v, want 1 lapsed and 1 reused", n)
	}

	for name, hdr := range map[string]http.Header{"in the header": {web.AdmissionHeader: {first.Token}}, "in the cookie": nil} {
		st, raw, _ := idler.raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/holds", map[string]any{"seatIds": seats[:1]}, hdr)
		var e lapsedBody
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("the lapsed token %s: answer %d %q is not JSON", name, st, raw)
		}
		if st != http.StatusTooManyRequests || e.Error != "not_admitted" || !e.Lapsed || e.Position != 1 ||
			!strings.Contains(e.Message, "lapsed because no seat was held within 1 second") ||
			!strings.Contains(e.Message, "back in the queue") {
			t.Errorf("the lapsed token %s: got %d %+v; want 429 not_admitted, lapsed, in words, at position 1", name, st, e)
		}
	}
	if q := idler.queue("GET", a.EventID); q.Admitted || q.Position != 1 {
		t.Errorf("the idler's queue after the lapse: got %+v, want waiting first in line", q)
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM seats WHERE id = $1 AND held_by IS NOT NULL`, seats[0]); n != 0 {
		t.Error("the lapsed token held a seat")
	}
}

// TestHoldInTimeKeepsTurn: two slots, admissions lapsing after a second with nothing
// held. The holder holds at once, the idler never; a third waits. The idler's turn
// lapses and the third goes in (the holder's idle deadline passed first): the holder
// is still admitted, adds a seat with its token, checks out and pays. The control:
// the idler's token holds nothing more.
func TestHoldInTimeKeepsTurn(t *testing.T) {
	t.Parallel()
	a, seats := lapsingRoom(t, 2, 3)

	holder, idler, third := a.newClient(t), a.newClient(t), a.newClient(t)
	tok := holder.queue("POST", a.EventID).Token
	if tok == "" {
		t.Fatal("the holder joining an empty room: want admitted")
	}
	h := holder.hold(a.EventID, seats[0])
	if !idler.queue("POST", a.EventID).Admitted {
		t.Fatal("the idler joining a room with a free slot: want admitted")
	}
	if third.queue("POST", a.EventID).Admitted {
		t.Fatal("the third joining a full room: want waiting")
	}
	waitAdmitted(t, third, a.EventID, 10*time.Second)

	if st, e, _ := holdStatus(holder, a.EventID, seats[1], http.Header{web.AdmissionHeader: {tok}}); st != http.StatusCreated {
		t.Fatalf("the holder adding a seat after its idle deadline: got %d %q, want 201", st, e.Error)
	}
	if st, e, _ := holdStatus(idler, a.EventID, seats[2], nil); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("control, the idler's token: got %d %q, want 429 not_admitted", st, e.Error)
	}
	o := holder.checkout(h.HoldID)
	holder.pay(o.OrderID, "")
	waitOrder(t, holder, o.OrderID, "confirmed")
}

// TestLapsedTurnPages: the seat page tells an admitted buyer how long the turn waits
// for a hold; once it lapsed the seat page sends them to the queue page, which says
// why they wait again, and the seat page's hold form (htmx) says it where the
// answers go, with the way back to the queue.
func TestLapsedTurnPages(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 2, 100, 2*time.Minute)
	roomIdle(t, a, a.EventID, time.Minute)
	seatsPath, queuePath := "/events/"+demoSlug+"/seats", "/events/"+demoSlug+"/queue"

	// A stays admitted throughout (a minute's idle window when it came in).
	first := a.newClient(t)
	if p := first.page(queuePath, false); p.status != http.StatusSeeOther {
		t.Fatalf("the queue page of a free room: got %d, want 303 to the seats", p.status)
	}
	if p := first.page(seatsPath, false); !strings.Contains(p.doc.Find("#seat-message").Text(), "Hold a seat within 1 minute, or your turn goes to the next in line.") {
		t.Errorf("the seat page of an admitted buyer says %q, want how long the turn waits for a hold", p.doc.Find("#seat-message").Text())
	}
	roomIdle(t, a, a.EventID, time.Second)
	dbtest.Eventually(t, "the server reading the new idle window", 10*time.Second, func() bool {
		return strings.Contains(first.page(seatsPath, false).doc.Find("#seat-message").Text(), "within 1 second")
	})

	runQueue(t, a)
	idler, waiter := a.newClient(t), a.newClient(t)
	if p := idler.page(queuePath, false); p.status != http.StatusSeeOther {
		t.Fatalf("the idler's queue page: got %d, want 303 to the seats (a slot free)", p.status)
	}
	if waiter.queue("POST", a.EventID).Admitted {
		t.Fatal("the waiter joining a full room: want waiting")
	}
	waitAdmitted(t, waiter, a.EventID, 10*time.Second)

	if p := idler.page(seatsPath, false); p.status != http.StatusSeeOther || p.header.Get("Location") != queuePath {
		t.Errorf("the idler's seat page after the lapse: got %d to %q, want 303 to %s", p.status, p.header.Get("Location"), queuePath)
	}
	q := idler.page(queuePath, false)
	if notice := q.doc.Find("#queue .notice").Text(); !strings.Contains(notice, "Your turn lapsed because no seat was held within 1 second") ||
		!strings.Contains(notice, "You are back in the queue.") || !strings.Contains(q.doc.Find("#queue-h").Text(), "number 1") {
		t.Errorf("the idler's queue page: notice %q, heading %q; want why, and number 1", notice, q.doc.Find("#queue-h").Text())
	}
	seat := firstSeats(t, a.Pool, a.EventID, 1)[0]
	form := url.Values{"_csrf": {idler.csrf}, "seat": {itoa(seat)}}
	r := idler.postForm("/events/"+demoSlug+"/holds", form, true)
	if msg := r.doc.Find(".error-message").Text(); r.status != http.StatusTooManyRequests ||
		!strings.Contains(msg, "no seat was held within 1 second") || r.doc.Find(`a[href="`+queuePath+`"]`).Length() != 1 {
		t.Errorf("the idler's hold (htmx): got %d %q, want 429 saying why, with the way back to the queue", r.status, msg)
	}
	if q := first.page(queuePath, false); q.doc.Find("#queue .notice").Length() != 0 {
		t.Error("a buyer whose turn did not lapse is told it lapsed")
	}
}
