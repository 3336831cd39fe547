package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
	"boxoffice/web"
)

// TestPlaceAbuseLimits: a new place counts against the address's joins and needs a
// proof of work, as a join does; a place taken again is not counted again, and other
// addresses are not refused (the negative controls).
func TestPlaceAbuseLimits(t *testing.T) {
	t.Parallel()
	home := func(i int) *fromAddress { return at(fmt.Sprintf("2001:db8:bb:1:%x::%x", i, i+1)) } // one /64

	t.Run("address joins", func(t *testing.T) {
		t.Parallel()
		a := limitApp(t, "ADDRESS_JOINS_PER_HOUR", "3")
		roomOn(t, a, a.EventID, 1, 1, time.Minute)
		var first *client
		for i := range 3 {
			c := visitorVia(t, a, a.EventID, home(i))
			if st := c.do("POST", placePath(a.EventID), nil, nil); st != http.StatusOK {
				t.Fatalf("place %d: got status %d, want 200", i+1, st)
			}
			if i == 0 {
				first = c
			}
		}
		st, raw, h := visitorVia(t, a, a.EventID, home(3)).raw("POST", placePath(a.EventID), nil, nil)
		wantLimited(t, "a 4th place", st, raw, h, web.LimitedByJoins, 3600)
		if st := first.do("POST", placePath(a.EventID), nil, nil); st != http.StatusOK {
			t.Errorf("a place taken again from the limited address: got status %d, want 200 (not counted again)", st)
		}
		if st := visitorVia(t, a, a.EventID, at("2001:db8:bb:2::1")).do("POST", placePath(a.EventID), nil, nil); st != http.StatusOK {
			t.Errorf("a place from another address: got status %d, want 200", st)
		}
	})

	t.Run("proof of work", func(t *testing.T) {
		t.Parallel()
		a := newTestApp(t, proofOn)
		roomOn(t, a, a.EventID, 1, 1, time.Minute)
		c := visitorVia(t, a, a.EventID, nil)
		st, raw, _ := c.raw("POST", placePath(a.EventID), nil, nil)
		if e, _ := parseError(raw); st != http.StatusForbidden || e.Error != "proof_required" {
			t.Errorf("a place without a proof: got %d %s, want 403 proof_required", st, raw)
		}
		p := c.solve()
		var got web.PlaceJSON
		st, raw, _ = c.raw("POST", placePath(a.EventID), nil, withProof(p))
		if err := json.Unmarshal(raw, &got); st != http.StatusOK || err != nil || !got.Placed {
			t.Fatalf("a place with a solved proof: got %d %s, want 200 placed", st, raw)
		}
		// The same proof from a browser without the place's cookie (the first answer,
		// which set it, was lost): the place it bought, not a second one.
		lost := visitorVia(t, a, a.EventID, nil)
		var again web.PlaceJSON
		st, raw, _ = lost.raw("POST", placePath(a.EventID), nil, withProof(p))
		if err := json.Unmarshal(raw, &again); st != http.StatusOK || err != nil {
			t.Fatalf("the same proof sent again: got %d %s, want 200", st, raw)
		}
		if again.Group != got.Group || again.Tiebreak != got.Tiebreak || again.Number != got.Number ||
			placeToken(t, lost, a.EventID) != placeToken(t, c, a.EventID) {
			t.Errorf("the same proof sent again: got place %+v, want the first %+v", again, got)
		}
		// Counted once: the next arrival's number is one past the first's.
		var next web.PlaceJSON
		st, raw, _ = visitorVia(t, a, a.EventID, nil).raw("POST", placePath(a.EventID), nil, withProof(c.solve()))
		if err := json.Unmarshal(raw, &next); st != http.StatusOK || err != nil || next.Number != got.Number+1 {
			t.Errorf("the next arrival: got %d %s, want number %d (the proof's place counted once)", st, raw, got.Number+1)
		}
		// A place of one event is not another's: the proof spent here buys nothing there.
		elsewhere := smallEvent(t, a.Pool, "place-proof-elsewhere")
		roomOn(t, a, elsewhere, 1, 1, time.Minute)
		st, raw, _ = visitorVia(t, a, elsewhere, nil).raw("POST", placePath(elsewhere), nil, withProof(p))
		if e, _ := parseError(raw); st != http.StatusForbidden || e.Error != "proof_invalid" {
			t.Errorf("the proof spent for this event's place, at another event: got %d %s, want 403 proof_invalid", st, raw)
		}
	})

	t.Run("proof unspent when the address is refused", func(t *testing.T) {
		t.Parallel()
		a := newTestApp(t, func(o *appOptions) {
			proofOn(o)
			o.Env["ADDRESS_JOINS_PER_HOUR"] = "1"
		})
		roomOn(t, a, a.EventID, 1, 1, time.Minute)
		first := visitorVia(t, a, a.EventID, home(0))
		if st, raw, _ := first.raw("POST", placePath(a.EventID), nil, withProof(first.solve())); st != http.StatusOK {
			t.Fatalf("the address's one place: got %d %s, want 200", st, raw)
		}
		limited := visitorVia(t, a, a.EventID, home(1))
		p := limited.solve()
		st, raw, h := limited.raw("POST", placePath(a.EventID), nil, withProof(p))
		wantLimited(t, "the address's second place", st, raw, h, web.LimitedByJoins, 3600)
		// The refused call did not spend its proof: from elsewhere it buys a new place,
		// counted (the next arrival's number is one past it), not one the refused
		// call left behind uncounted.
		var got, next web.PlaceJSON
		st, raw, _ = visitorVia(t, a, a.EventID, at("2001:db8:bb:3::1")).raw("POST", placePath(a.EventID), nil, withProof(p))
		if err := json.Unmarshal(raw, &got); st != http.StatusOK || err != nil {
			t.Fatalf("the refused call's proof, from another address: got %d %s, want 200 (unspent)", st, raw)
		}
		st, raw, _ = visitorVia(t, a, a.EventID, at("2001:db8:bb:4::1")).raw("POST", placePath(a.EventID), nil, withProof(first.solve()))
		if err := json.Unmarshal(raw, &next); st != http.StatusOK || err != nil || next.Number != got.Number+1 {
			t.Errorf("the next arrival: got %d %s, want number %d (the refused call's proof bought a counted place)", st, raw, got.Number+1)
		}
	})
}

// admittedArrival is a visitor who took a place in a's event, waited for its turn and
// claimed it: admitted, with a session made at the claim.
func admittedArrival(t *testing.T, a *testApp) *client {
	t.Helper()
	c, _ := arrival(t, a, a.EventID)
	waitTurn(t, c, a.EventID, 20*time.Second)
	if st, q := claim(t, c, a.EventID); st != http.StatusOK || !q.Admitted {
		t.Fatalf("claim: got %d %+v, want admitted", st, q)
	}
	return c
}

// waitTurn polls the place until the board's cursor has passed it, as the page does.
func waitTurn(t *testing.T, c *client, eventID int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var q web.PlaceJSON
		if st := c.do("GET", placePath(eventID), nil, &q); st == http.StatusOK && q.Turn {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cursor did not pass the place within %v", within)
		}
		time.Sleep(50 * time.Millisecond) // polling the board, as the queue page does
	}
}

// claim claims the client's place and answers whether it was admitted.
func claim(t *testing.T, c *client, eventID int64) (int, web.PlaceJSON) {
	t.Helper()
	var q web.PlaceJSON
	st := c.do("POST", claimPath(eventID), nil, &q)
	return st, q
}

// TestPlaceRedisHung: Redis stops answering during a queued onsale. Arrivals still get
// their places (counted in memory); a claim admits nobody; a buyer admitted before
// keeps holding. Redis resumes: the counts kept go in, the late arrival's turn comes,
// and it is admitted and holds.
func TestPlaceRedisHung(t *testing.T) {
	t.Parallel()
	srv := dbtest.StartRedisServer(t, "")
	a := newTestApp(t, func(o *appOptions) {
		frontQueue(o)
		o.Env = map[string]string{"REDIS_URL": "redis://" + srv.Addr() + "/0"}
	})
	roomOn(t, a, a.EventID, 5, 100, time.Minute)
	runQueue(t, a)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	admitted := admittedArrival(t, a)

	srv.Hang()
	late, _ := arrival(t, a, a.EventID) // a place with Redis hung
	if st, q := claim(t, late, a.EventID); q.Admitted {
		t.Errorf("claim with Redis hung: got %d admitted, want nobody admitted", st)
	}
	admitted.hold(a.EventID, seats[0])

	srv.Resume()
	waitTurn(t, late, a.EventID, 20*time.Second)
	if st, q := claim(t, late, a.EventID); st != http.StatusOK || !q.Admitted {
		t.Fatalf("claim after Redis resumed: got %d %+v, want admitted", st, q)
	}
	if st, e, _ := holdStatus(late, a.EventID, seats[0], nil); st != http.StatusConflict || e.Error != "seat_unavailable" {
		t.Errorf("hold of a seat held while Redis hung: got %d %q, want 409 seat_unavailable", st, e.Error)
	}
	late.hold(a.EventID, seats[1])
	bookingtest.Check(t, a.Pool, a.EventID)
}
