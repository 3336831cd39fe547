package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
)

// TestRequestLogShowsWhatAHoldWaitedFor: a hold's log line names its kind and carries
// what it spent outside its own code: exact seats their wait for the batched
// statement, best available and standing places their transaction's round trips
// (begin to commit) and their wait for a pooled connection. A request that touches
// neither PostgreSQL nor Redis carries no tally.
func TestRequestLogShowsWhatAHoldWaitedFor(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	app := newTestApp(t, func(o *appOptions) { o.Log = slog.New(slog.NewJSONHandler(&buf, nil)) })
	c := app.newClient(t)
	path := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	if st := c.do("POST", path, map[string]any{"quantity": 2}, nil); st != http.StatusCreated {
		t.Fatalf("best available: got %d, want 201", st)
	}
	tier := count(t, app.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, app.EventID)
	if st := c.do("POST", path, map[string]any{"gaTierId": tier, "quantity": 1}, nil); st != http.StatusCreated {
		t.Fatalf("standing: got %d, want 201", st)
	}
	resp, err := http.Get(app.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	type line struct {
		Msg        string `json:"msg"`
		Method     string `json:"method"`
		URI        string `json:"uri"`
		Hold       string `json:"hold"`
		DBWait     *int64 `json:"db_wait"`
		DB         *int64 `json:"db"`
		DBTrips    *int   `json:"db_trips"`
		DBBatched  *int64 `json:"db_batched"`
		Redis      *int64 `json:"redis"`
		RedisTrips *int   `json:"redis_trips"` // durations are in nanoseconds
	}
	var holds []line
	var health *line
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		switch {
		case l.Msg == "request" && l.Method == "POST" && l.URI == path:
			holds = append(holds, l)
		case l.Msg == "request" && l.URI == "/healthz":
			health = &l
		}
	}
	if len(holds) != 3 {
		t.Fatalf("got %d hold log lines, want 3: %s", len(holds), buf.String())
	}
	for i, want := range []string{"seats", "best", "standing"} {
		h := holds[i]
		if h.Hold != want {
			t.Errorf("hold %d: kind %q, want %q", i, h.Hold, want)
		}
		if h.DBWait == nil || h.DB == nil || h.DBTrips == nil || h.DBBatched == nil || h.Redis == nil || h.RedisTrips == nil {
			t.Errorf("%s hold: the log line lacks part of the tally: %+v", want, h)
			continue
		}
		// Every seat call passes the per-buyer rate limit, a Redis round trip.
		if *h.RedisTrips < 1 || *h.Redis <= 0 {
			t.Errorf("%s hold: Redis %d round trips in %d ns, want at least one", want, *h.RedisTrips, *h.Redis)
		}
		if want == "seats" {
			if *h.DBBatched <= 0 {
				t.Errorf("seats hold: no time waiting for the batched statement")
			}
			continue
		}
		// The buyer's lock (the begin goes with it: db.LazyTx), the hold row, the
		// claim, the commit at the least.
		if *h.DBTrips < 4 || *h.DB <= 0 {
			t.Errorf("%s hold: %d PostgreSQL round trips in %d ns, want a transaction's", want, *h.DBTrips, *h.DB)
		}
	}
	if health == nil {
		t.Fatal("no log line for /healthz")
	}
	if health.DBTrips != nil || health.RedisTrips != nil || health.DBWait != nil {
		t.Errorf("/healthz: got a tally (%+v), want none: it touches neither store", *health)
	}
}
