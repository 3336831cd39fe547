package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/web"
)

// An admission's life through HTTP: it ends with its purchase or its release (the
// token cannot start a second round), and lasts as long as the hold made with it
// (checkout and payment pass after the token's end).

// TestAdmissionEnds: before the end, the admission's token adds a seat to the basket
// (the control); once the purchase completes, or the hold is released, the same token,
// in the header or the cookie, holds nothing more (a free order completes at
// checkout), the queue no longer counts the
// session admitted, and a new round starts by joining the queue again, whose new
// token holds.
func TestAdmissionEnds(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"purchase", "free purchase", "release"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			a := newTestApp(t, fastQueue)
			roomOn(t, a, a.EventID, 5, 100, time.Minute)
			seats := firstSeats(t, a.Pool, a.EventID, 4)
			if end == "free purchase" {
				if _, err := a.Pool.Exec(context.Background(), `UPDATE seats SET price_cents = 0 WHERE event_id = $1 AND id = ANY($2)`,
					a.EventID, seats[:2]); err != nil {
					t.Fatal(err)
				}
			}
			c := a.newClient(t)
			tok := c.queue("POST", a.EventID).Token
			if tok == "" {
				t.Fatal("joining: want admitted with a token")
			}
			withToken := http.Header{web.AdmissionHeader: {tok}}
			h := c.hold(a.EventID, seats[0])
			if st, e, _ := holdStatus(c, a.EventID, seats[1], withToken); st != http.StatusCreated {
				t.Fatalf("control, another seat before the end: got %d %q, want 201", st, e.Error)
			}
			switch end {
			case "purchase":
				c.pay(c.checkout(h.HoldID).OrderID, "")
			case "free purchase":
				if co := c.checkout(h.HoldID); co.Status != "confirmed" {
					t.Fatalf("free checkout: got status %q, want confirmed", co.Status)
				}
			case "release":
				if st := c.do("DELETE", "/api/v1/holds/"+h.HoldID, nil, nil); st != http.StatusNoContent {
					t.Fatalf("release: got %d, want 204", st)
				}
			}
			for name, hdr := range map[string]http.Header{"in the header": withToken, "in the cookie": nil} {
				if st, e, _ := holdStatus(c, a.EventID, seats[2], hdr); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
					t.Errorf("after the %s, the token %s: got %d %q, want 429 not_admitted", end, name, st, e.Error)
				}
			}
			if p := c.page("/events/"+demoSlug+"/seats", false); p.status != http.StatusSeeOther {
				t.Errorf("after the %s, the seat page: got %d, want 303 to the queue", end, p.status)
			}
			if q := c.queue("GET", a.EventID); q.Admitted {
				t.Errorf("after the %s, the queue says %+v, want not admitted", end, q)
			}
			again := c.queue("POST", a.EventID)
			if !again.Admitted || again.Token == "" || again.Token == tok {
				t.Fatalf("joining again: got %+v, want admitted with a new token", again)
			}
			if st, e, _ := holdStatus(c, a.EventID, seats[3], http.Header{web.AdmissionHeader: {again.Token}}); st != http.StatusCreated {
				t.Errorf("the new round's token: got %d %q, want 201", st, e.Error)
			}
		})
	}
}

// TestHoldOutlivesToken: a hold made with an admission whose token then ends is
// checked out and paid after the end, through the API and the checkout page, and
// keeps its slot taken meanwhile; the control: the ended token holds no new seat.
func TestHoldOutlivesToken(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, fastQueue)
	roomOn(t, a, a.EventID, 5, 100, 2*time.Second)
	seats := firstSeats(t, a.Pool, a.EventID, 2)
	c := a.newClient(t)
	q := c.queue("POST", a.EventID)
	if !q.Admitted || q.Token == "" {
		t.Fatalf("joining: got %+v, want admitted", q)
	}
	h := c.hold(a.EventID, seats[0])
	visitor := visitorOf(t, a, c)
	dbtest.Eventually(t, "the admission token's end", 10*time.Second, func() bool {
		_, err := a.App.Queue.Verify(q.Token, a.EventID, visitor)
		return err != nil
	})
	if st, e, _ := holdStatus(c, a.EventID, seats[1], nil); st != http.StatusTooManyRequests || e.Error != "not_admitted" {
		t.Errorf("control, a new seat after the token's end: got %d %q, want 429 not_admitted", st, e.Error)
	}
	if n, err := a.App.Queue.Counts(t.Context(), a.EventID); err != nil || n.Active != 1 {
		t.Errorf("slots in use after the token's end, the hold live: got %+v, %v; want 1", n, err)
	}
	if p := c.page("/holds/"+h.HoldID+"/checkout", false); p.status != http.StatusOK {
		t.Errorf("checkout page after the token's end: got %d, want 200", p.status)
	}
	co := c.checkout(h.HoldID)
	c.pay(co.OrderID, "")
	waitOrder(t, c, co.OrderID, "confirmed")
}
