package web_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"boxoffice/internal/mail/mailtest"
	"boxoffice/web"
)

// TestVerifiedPlaceAtTheDoor: an onsale for verified buyers lets them in at the front
// door, one place per confirmed email. A session that has not confirmed one gets no
// place; two sessions of one address take places that stand in one spot (the same
// draw), and another address's place stands elsewhere; a place is worth nothing to
// another buyer. The buyer claims, shops and leaves; the place the other session took
// before that claim then admits nothing (409 place_used): another round starts at the
// end of the line. The control, an event that does not ask for verified buyers: one
// visitor with a second place taken beforehand is admitted a second time on it.
func TestVerifiedPlaceAtTheDoor(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t, frontQueue)
	control := smallEvent(t, a.Pool, "door-unverified")
	verifiedOnly(t, a, a.EventID)
	// Slots for every place: the cursor passes a group's places by their share of it.
	roomOn(t, a, a.EventID, 10, 100, time.Minute)
	roomOn(t, a, control, 10, 100, time.Minute)

	stranger := a.newClient(t)
	st, raw, _ := stranger.raw("POST", placePath(a.EventID), nil, nil)
	if e, _ := parseError(raw); st != http.StatusForbidden || e.Error != "email_not_verified" {
		t.Errorf("a place without a confirmed email: got %d %s, want 403 email_not_verified", st, raw)
	}

	first, second, other := threeBuyers(t, a, catcher)
	places := map[*client]web.PlaceJSON{}
	for _, c := range []*client{first, second, other} {
		var p web.PlaceJSON
		if st := c.do("POST", placePath(a.EventID), nil, &p); st != http.StatusOK || !p.Placed {
			t.Fatalf("a confirmed buyer's place: got %d %+v, want 200 placed", st, p)
		}
		places[c] = p
	}
	if places[first].Tiebreak != places[second].Tiebreak {
		t.Errorf("two sessions of one address: tiebreaks %v and %v, want one draw", places[first].Tiebreak, places[second].Tiebreak)
	}
	if places[other].Tiebreak == places[first].Tiebreak {
		t.Errorf("another address: the same tiebreak %v, want a draw of its own", places[other].Tiebreak)
	}
	st, raw, _ = other.raw("POST", claimPath(a.EventID), nil, http.Header{"X-Place-Token": {placeToken(t, first, a.EventID)}})
	if e, _ := parseError(raw); st != http.StatusForbidden || e.Error != "invalid_place" {
		t.Errorf("another buyer claims the place: got %d %s, want 403 invalid_place", st, raw)
	}

	runQueue(t, a)
	secondRound(t, a, first, second, placeToken(t, second, a.EventID), a.EventID, false)
	// The control: a visitor with two places of an event that gives any number.
	c1 := a.newClient(t)
	if st := c1.do("POST", placePath(control), nil, nil); st != http.StatusOK {
		t.Fatalf("control place: got %d", st)
	}
	c2, _ := arrival(t, a, control)
	secondRound(t, a, c1, c1, placeToken(t, c2, control), control, true)
}

// secondRound: shopper claims its place at its turn, holds and releases; then again
// (the same buyer) claims on place tok, taken before that claim, at its turn: admitted
// a second time or refused place_used, as want says.
func secondRound(t *testing.T, a *testApp, shopper, again *client, tok string, eventID int64, want bool) {
	t.Helper()
	waitTurn(t, shopper, eventID, 20*time.Second)
	if st, q := claim(t, shopper, eventID); st != http.StatusOK || !q.Admitted {
		t.Fatalf("claim at its turn: got %d %+v, want admitted", st, q)
	}
	held := shopper.hold(eventID, firstSeats(t, a.Pool, eventID, 1)[0])
	if st := shopper.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("release: got %d, want 204", st)
	}
	h := http.Header{"X-Place-Token": {tok}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, raw, _ := again.raw("GET", placePath(eventID), nil, h)
		var q web.PlaceJSON
		if st == http.StatusOK && json.Unmarshal(raw, &q) == nil && q.Turn {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cursor did not pass the earlier place: last %d %s", st, raw)
		}
		time.Sleep(50 * time.Millisecond) // polling the board, as the door's page does
	}
	st, raw, _ := again.raw("POST", claimPath(eventID), nil, h)
	e, _ := parseError(raw)
	switch {
	case want && st != http.StatusOK:
		t.Errorf("control: a second round on a place taken before: got %d %s, want 200 admitted", st, raw)
	case !want && (st != http.StatusConflict || e.Error != "place_used"):
		t.Errorf("a second round on a place taken before the buyer's claim: got %d %s, want 409 place_used", st, raw)
	}
}

// threeBuyers are three sessions that confirmed an email for a's event: the first two
// the same address (one buyer), the third another.
func threeBuyers(t *testing.T, a *testApp, catcher *mailtest.Catcher) (first, second, other *client) {
	t.Helper()
	addr := mailtest.Address(t)
	first, second, other = a.newClient(t), a.newClient(t), a.newClient(t)
	first.verifyEmail(catcher, a.EventID, addr, 1)
	linkGapPassed(t, a)
	second.verifyEmail(catcher, a.EventID, addr, 2)
	other.verifyEmail(catcher, a.EventID, mailtest.Address(t), 1)
	return first, second, other
}
