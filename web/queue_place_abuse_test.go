package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

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
		other := visitorVia(t, a, a.EventID, nil)
		st, raw, _ = other.raw("POST", placePath(a.EventID), nil, withProof(p))
		if st == http.StatusOK {
			t.Errorf("the same proof for a second place: got 200 %s, want it refused", raw)
		}
	})
}
