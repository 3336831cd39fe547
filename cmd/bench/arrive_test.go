package main

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/waitroom"
)

// TestArrivals runs the arrivals' measurement end to end, briefly, on a database of its
// own: the real server and the minimal one each serve arrivals, none refused or
// failed, and every arrival counted is a waiter in the pre-queue of its side's room.
func TestArrivals(t *testing.T) {
	t.Parallel()
	redisURL := os.Getenv("REDIS_URL")
	if redisURL == "" {
		t.Fatal("REDIS_URL not set: run tests through `make test`")
	}
	ctx := t.Context()
	opts := options{clients: 4, warmup: 200 * time.Millisecond, duration: time.Second, pool: 4}
	srv, err := startServer(ctx, dbtest.URL(t), redisURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	target, err := srv.arriveEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	api, err := runArrivals(ctx, srv, opts, "api", srv.URL, target, "")
	if err != nil {
		t.Fatal(err)
	}
	minimal, err := startMinimalFrontDoor(ctx, srv, target)
	if err != nil {
		t.Fatal(err)
	}
	defer minimal.Close()
	bare, err := runArrivals(ctx, srv, opts, "minimal", minimal.URL, target, "")
	if err != nil {
		t.Fatal(err)
	}

	ev := waitroom.Event{ID: target.ID, OnsaleAt: target.OnsaleAt, Settings: waitroom.Settings{
		Enabled: true, Slots: arriveQueue.Slots, Rate: arriveQueue.Rate, TokenTTL: arriveQueue.TokenTTL}}
	for _, side := range []struct {
		res    *arriveResult
		prefix string
	}{{api, srv.prefix}, {bare, srv.prefix + "minimal:"}} {
		r := side.res
		if r.Arrivals == 0 || len(r.Refused) > 0 || r.Errors > 0 || r.P50 <= 0 || r.P50 > r.P99 || !r.CPU.OK {
			t.Errorf("%s: %d arrivals, refused %v, %d errors (%s), p50 %v p99 %v, CPU measured %v; want arrivals only",
				r.Name, r.Arrivals, r.Refused, r.Errors, r.FirstError, r.P50, r.P99, r.CPU.OK)
		}
		// One more arrival, straight into the same room, sees everyone before it.
		room := waitroom.New(srv.rdb, side.prefix, []waitroom.Key{{ID: "test", Secret: []byte("test")}},
			waitroom.Hooks{}, slog.New(slog.DiscardHandler), waitroom.Options{})
		if err := room.LoadScripts(ctx); err != nil {
			t.Fatal(err)
		}
		st, err := room.Join(ctx, ev, "probe")
		if err != nil {
			t.Fatal(err)
		}
		if !st.PreQueue || int64(st.Waiting) <= r.Arrivals {
			t.Errorf("%s: a later arrival sees %d waiting (pre-queue %v); want more than the %d arrivals counted", r.Name, st.Waiting, st.PreQueue, r.Arrivals)
		}
	}
}
