package web_test

import (
	"net/http"
	"testing"
	"time"
)

// basketHoldJSON is the API's answer about a hold.
type basketHoldJSON struct {
	HoldID    string           `json:"holdId"`
	Seats     []map[string]any `json:"seats"`
	ExpiresAt time.Time        `json:"expiresAt"`
}

// TestAPIBasket: seats added to a hold through the API join it with its expiry, a
// repeat with the same Idempotency-Key answers the same, another session cannot touch
// it, and one seat removed is free again while the others stay.
func TestAPIBasket(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 3)
	var h basketHoldJSON
	if st := c.do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"seatIds": seats[:1]}, &h); st != http.StatusCreated {
		t.Fatalf("hold: got %d, want 201", st)
	}
	add := "/api/v1/holds/" + h.HoldID + "/seats"
	var got basketHoldJSON
	if st := c.do("POST", add, map[string]any{"seatIds": seats[1:]}, &got); st != http.StatusOK {
		t.Fatalf("add: got %d, want 200", st)
	}
	if got.HoldID != h.HoldID || len(got.Seats) != 3 || !got.ExpiresAt.Equal(h.ExpiresAt) {
		t.Errorf("add: got %s with %d seats until %v, want %s with 3 until %v", got.HoldID, len(got.Seats), got.ExpiresAt, h.HoldID, h.ExpiresAt)
	}
	st, first, _ := c.keyed(add, "k1", map[string]any{"seatIds": seats[2:]})
	st2, again, hdr := c.keyed(add, "k1", map[string]any{"seatIds": seats[2:]})
	if st != http.StatusOK || st2 != st || string(again) != string(first) || hdr.Get("Idempotent-Replayed") != "true" {
		t.Errorf("repeat with one key: got %d then %d (replayed %q), want 200 twice, the same answer", st, st2, hdr.Get("Idempotent-Replayed"))
	}
	other := app.newClient(t)
	if st := other.do("POST", add, map[string]any{"seatIds": []int64{seats[0] + 100}}, nil); st != http.StatusNotFound {
		t.Errorf("another session's add: got %d, want 404", st)
	}
	if st := other.do("DELETE", add+"/"+itoa(seats[0]), nil, nil); st != http.StatusNotFound {
		t.Errorf("another session's remove: got %d, want 404", st)
	}
	if st := c.do("DELETE", add+"/"+itoa(seats[1]), nil, nil); st != http.StatusNoContent {
		t.Errorf("remove: got %d, want 204", st)
	}
	if !seatFree(t, app.Pool, app.EventID, seats[1]) || seatFree(t, app.Pool, app.EventID, seats[0]) || seatFree(t, app.Pool, app.EventID, seats[2]) {
		t.Errorf("after the remove: want seat %d free and %d, %d held", seats[1], seats[0], seats[2])
	}
	if st := c.do("DELETE", add+"/"+itoa(seats[1]), nil, nil); st != http.StatusNotFound {
		t.Errorf("remove again: got %d, want 404 seat_not_in_hold", st)
	}
	if st := c.do("POST", add, map[string]any{"seatIds": []int64{}}, nil); st != http.StatusBadRequest {
		t.Errorf("add nothing: got %d, want 400", st)
	}
}

// TestAPIHoldJoinsBasket: the hold call of a buyer who already holds seats on the event
// adds to that hold (the same holdId and expiry, exact seats and best available
// alike), and once the basket's checkout has begun the next hold call opens a new one.
func TestAPIHoldJoinsBasket(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	holds := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	var first, second, best basketHoldJSON
	if st := c.do("POST", holds, map[string]any{"seatIds": seats[:1]}, &first); st != http.StatusCreated {
		t.Fatalf("first hold: got %d, want 201", st)
	}
	if st := c.do("POST", holds, map[string]any{"seatIds": seats[1:2]}, &second); st != http.StatusCreated {
		t.Fatalf("second hold: got %d, want 201", st)
	}
	if second.HoldID != first.HoldID || len(second.Seats) != 2 || !second.ExpiresAt.Equal(first.ExpiresAt) {
		t.Errorf("second hold: got %s with %d seats until %v, want %s with 2 until %v",
			second.HoldID, len(second.Seats), second.ExpiresAt, first.HoldID, first.ExpiresAt)
	}
	if st := c.do("POST", holds, map[string]any{"quantity": 1}, &best); st != http.StatusCreated {
		t.Fatalf("best available: got %d, want 201", st)
	}
	if best.HoldID != first.HoldID || len(best.Seats) != 3 || !best.ExpiresAt.Equal(first.ExpiresAt) {
		t.Errorf("best available: got %s with %d seats until %v, want %s with 3 until %v",
			best.HoldID, len(best.Seats), best.ExpiresAt, first.HoldID, first.ExpiresAt)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM holds WHERE event_id = $1 AND released_at IS NULL`, app.EventID); n != 1 {
		t.Errorf("holds kept: got %d, want 1", n)
	}
	if st := c.do("POST", "/api/v1/holds/"+first.HoldID+"/checkout", map[string]string{"email": "ada@example.com"}, nil); st != http.StatusCreated {
		t.Fatalf("checkout: got %d, want 201", st)
	}
	free := count(t, app.Pool, `SELECT min(id) FROM seats WHERE event_id = $1 AND held_by IS NULL AND sold_at IS NULL`, app.EventID)
	var after basketHoldJSON
	if st := c.do("POST", holds, map[string]any{"seatIds": []int{free}}, &after); st != http.StatusCreated {
		t.Fatalf("hold after checkout: got %d, want 201", st)
	}
	if after.HoldID == first.HoldID || len(after.Seats) != 1 {
		t.Errorf("hold after checkout: got %s with %d seats, want a new hold with 1", after.HoldID, len(after.Seats))
	}
}
