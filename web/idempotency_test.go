package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/web"
)

// keyed sends a POST with an Idempotency-Key and returns the status, body and headers.
func (c *client) keyed(path, key string, body any) (int, []byte, http.Header) {
	c.t.Helper()
	st, raw, hdr, err := c.send(context.Background(), "POST", path, body, http.Header{web.IdempotencyHeader: {key}})
	if err != nil {
		c.t.Fatal(err)
	}
	return st, raw, hdr
}

// TestIdempotencyKey: a POST that creates something, repeated with the same key by the
// same session, gets the first answer (status and body) and creates nothing more: a
// hold, a checkout, a payment (charged once), and a refusal too. The same key with
// another body is a 422 that changes nothing; another session's key is its own.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	c, d := app.newClient(t), app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 3)
	holds := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	body := map[string]any{"seatIds": []int64{seats[0]}}

	st1, first, _ := c.keyed(holds, "hold-1", body)
	st2, again, hdr := c.keyed(holds, "hold-1", body)
	if st1 != http.StatusCreated || st2 != st1 || !bytes.Equal(first, again) || hdr.Get(web.ReplayedHeader) != "true" {
		t.Fatalf("hold and its repeat: got %d %s and %d %s (replayed %q), want 201 twice, the same body",
			st1, truncate(first), st2, truncate(again), hdr.Get(web.ReplayedHeader))
	}
	var h web.HoldJSON
	if err := json.Unmarshal(first, &h); err != nil {
		t.Fatal(err)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM holds WHERE event_id = $1`, app.EventID); n != 1 {
		t.Errorf("holds: got %d, want 1", n)
	}

	before := saleState(t, app.Pool)
	st, raw, _ := c.keyed(holds, "hold-1", map[string]any{"seatIds": []int64{seats[1]}})
	if e, err := parseError(raw); st != http.StatusUnprocessableEntity || err != nil || e.Error != "idempotency_key_reused" {
		t.Errorf("same key, another body: got %d %s, want 422 idempotency_key_reused", st, truncate(raw))
	}
	if changed := stateDiff(before, saleState(t, app.Pool)); len(changed) > 0 {
		t.Errorf("a refused repeat changed the sale: %v", changed)
	}
	if st, _, _ := d.keyed(holds, "hold-1", map[string]any{"seatIds": []int64{seats[1]}}); st != http.StatusCreated {
		t.Errorf("another session's same key: got %d, want 201 (its own key)", st)
	}

	// A refusal is an answer too: the repeat gets it even once the seat is free.
	st1, first, _ = d.keyed(holds, "taken", body)
	if st1 != http.StatusConflict {
		t.Fatalf("hold of a taken seat: got %d, want 409", st1)
	}
	if st := c.do("DELETE", "/api/v1/holds/"+h.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("release: got %d", st)
	}
	if st2, again, _ = d.keyed(holds, "taken", body); st2 != st1 || !bytes.Equal(first, again) {
		t.Errorf("repeat of a refusal: got %d %s, want the first answer %d %s", st2, truncate(again), st1, truncate(first))
	}

	h2 := c.hold(app.EventID, seats[2])
	checkout := "/api/v1/holds/" + h2.HoldID + "/checkout"
	st1, first, _ = c.keyed(checkout, "checkout-1", map[string]string{"email": "ada@example.com"})
	st2, again, _ = c.keyed(checkout, "checkout-1", map[string]string{"email": "ada@example.com"})
	if st1 != http.StatusCreated || st2 != st1 || !bytes.Equal(first, again) {
		t.Fatalf("checkout and its repeat: got %d and %d, want 201 twice, the same body", st1, st2)
	}
	var co web.CheckoutAnswerJSON
	if err := json.Unmarshal(first, &co); err != nil {
		t.Fatal(err)
	}
	pay := "/api/v1/orders/" + itoa(co.OrderID) + "/pay"
	for i := range 3 {
		st, raw, _ := c.keyed(pay, "pay-1", map[string]string{"card": cardOK})
		if st != http.StatusAccepted {
			t.Fatalf("pay %d: got %d %s, want 202", i+1, st, truncate(raw))
		}
	}
	waitOrder(t, c, co.OrderID, "confirmed")
	if n := app.Provider.Charges(co.OrderID); n != 1 {
		t.Errorf("charges: got %d, want 1", n)
	}

	long := strings.Repeat("k", 256)
	if st, raw, _ := c.keyed(holds, long, body); st != http.StatusBadRequest || !strings.Contains(string(raw), "invalid_idempotency_key") {
		t.Errorf("a key too long: got %d %s, want 400 invalid_idempotency_key", st, truncate(raw))
	}
	app.settle(t)
}

// TestIdempotencyKeyConcurrent: eight copies of one best-available hold sent at once
// with one key make one hold of one seat; every answer is that hold, or "still
// running" (409). Negative control: the same eight without a key hold eight seats (in
// one basket or several, as the copies meet), so the count does catch repeats that
// were not recognised.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	t.Parallel()
	app := newMoneyApp(t)
	holds := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	body := map[string]any{"quantity": 1}
	held := func() int {
		return count(t, app.Pool, `SELECT count(*) FROM seats s WHERE s.event_id = $1 AND seat_is_held(s)`, app.EventID)
	}
	for _, keyed := range []bool{true, false} {
		c := app.newClient(t)
		before := held()
		const copies = 8
		answers := make([]int, copies)
		ids := make([]string, copies)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range copies {
			wg.Go(func() {
				<-start
				var hdr http.Header
				if keyed {
					hdr = http.Header{web.IdempotencyHeader: {"same"}}
				}
				st, raw, _, err := c.send(context.Background(), "POST", holds, body, hdr)
				if err != nil {
					return
				}
				answers[i] = st
				var h web.HoldJSON
				if json.Unmarshal(raw, &h) == nil {
					ids[i] = h.HoldID
				}
			})
		}
		close(start)
		wg.Wait()
		distinct := map[string]bool{}
		for i, st := range answers {
			switch {
			case st == http.StatusCreated:
				distinct[ids[i]] = true
			case keyed && st == http.StatusConflict:
			default:
				t.Errorf("keyed %v: copy %d got %d, want 201 (or 409 while the first runs)", keyed, i, st)
			}
		}
		want := 1
		if !keyed {
			want = copies
		}
		if keyed && len(distinct) != 1 {
			t.Errorf("keyed: got %d distinct holds, want 1", len(distinct))
		}
		if n := held() - before; n != want {
			t.Errorf("keyed %v: %d seats held, want %d", keyed, n, want)
		}
	}
	bookingtest.CheckMoney(t, app.Pool, app.EventID)
}

// TestIdempotencyAnswerBeforeSave: a keyed call's answer goes out whole before its
// key's save, which a trigger holds back (an advisory lock the test keeps); a repeat
// sent meanwhile gets the first answer replayed once the save is through. (That a
// repeat waits for a save under way rather than hearing 409 idempotency_key_in_use is
// booking's TestIdempotentSaveAfter: here the held save also holds the key's row.)
func TestIdempotencyAnswerBeforeSave(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	ctx := t.Context()
	const lockID = 4242
	if _, err := app.Pool.Exec(ctx, `
		CREATE FUNCTION test_saves_wait() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NEW; END $$;
		CREATE TRIGGER saves_wait BEFORE UPDATE ON idempotency_keys
		FOR EACH ROW WHEN (NEW.status IS NOT NULL) EXECUTE FUNCTION test_saves_wait()`); err != nil {
		t.Fatal(err)
	}
	lock, err := app.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockID); err != nil {
		t.Fatal(err)
	}
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			if _, err := lock.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, lockID); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer unlock()

	// A connection a request: the repeat, as from a client whose connection was lost,
	// is not queued behind the first request on its connection.
	c := app.newClientVia(t, &http.Transport{DisableKeepAlives: true}, 30*time.Second)
	holds := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	body := map[string]any{"seatIds": firstSeats(t, app.Pool, app.EventID, 1)}
	type answer struct {
		status int
		raw    []byte
		hdr    http.Header
		err    error
	}
	send := func() chan answer {
		out := make(chan answer, 1)
		go func() {
			st, raw, hdr, err := c.send(ctx, "POST", holds, body, http.Header{web.IdempotencyHeader: {"saved-after"}})
			out <- answer{st, raw, hdr, err}
		}()
		return out
	}

	var first answer
	select {
	case first = <-send():
	case <-time.After(10 * time.Second):
		t.Fatal("no answer while its key's save is held back: the answer waits for the save")
	}
	if first.err != nil || first.status != http.StatusCreated {
		t.Fatalf("the hold: got %d %s, %v; want 201", first.status, truncate(first.raw), first.err)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM idempotency_keys WHERE key = 'saved-after' AND status IS NULL`); n != 1 {
		t.Fatalf("keys in flight once the answer came: %d, want 1 (the save held back)", n)
	}

	again := send()
	unlock()
	select {
	case a := <-again:
		if a.err != nil || a.status != first.status || !bytes.Equal(a.raw, first.raw) || a.hdr.Get(web.ReplayedHeader) != "true" {
			t.Errorf("the repeat: got %d %s (replayed %q), %v; want the first answer %d %s replayed",
				a.status, truncate(a.raw), a.hdr.Get(web.ReplayedHeader), a.err, first.status, truncate(first.raw))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the repeat: no answer once the save went through")
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM holds WHERE event_id = $1`, app.EventID); n != 1 {
		t.Errorf("holds: got %d, want 1", n)
	}
}
