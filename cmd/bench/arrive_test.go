package main

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/apptest"
	"boxoffice/internal/benchkit"
)

// TestArrivals runs the arrivals' measurement end to end, briefly, on a program of its
// own: the real server and the minimal one each serve arrivals, none refused or
// failed, and every arrival counted is a waiter in the pre-queue of its side's room.
func TestArrivals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	o := options{clients: 4, warmup: 200 * time.Millisecond, duration: time.Second, pool: 4}
	p := apptest.New(t, apptest.Options{Env: programEnv(o), PoolConfig: func(pc *pgxpool.Config) {
		pc.ConnConfig.RuntimeParams["application_name"] = serverApp
	}})
	prog, err := benchkit.ServeProgram(ctx, p.App, false)
	if err != nil {
		t.Fatal(err)
	}
	srv := &server{}
	if err := srv.open(ctx, prog, prog.Config.DatabaseURL); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	target, err := srv.arriveEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	front, err := runArrivals(ctx, srv, o, "front", srv.URL, target, frontArrival, "")
	if err != nil {
		t.Fatal(err)
	}
	api, err := runArrivals(ctx, srv, o, "api", srv.URL, target, joinArrival, "")
	if err != nil {
		t.Fatal(err)
	}
	minimal, err := startMinimalFrontDoor(ctx, srv, target)
	if err != nil {
		t.Fatal(err)
	}
	defer minimal.Close()
	bare, err := runArrivals(ctx, srv, o, "minimal", minimal.URL, target, joinArrival, "")
	if err != nil {
		t.Fatal(err)
	}

	// The front door's arrivals are counts in the program's memory until a flush:
	// then the board counts every one of them.
	if err := p.App.Queue.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := p.App.Queue.Board(ctx, target.roomEvent()); err != nil || b.Counted < front.Arrivals || !b.PreQueue {
		t.Errorf("front door: the board counts %d arrivals (pre-queue %v, %v); want the %d arrivals counted at least",
			b.Counted, b.PreQueue, err, front.Arrivals)
	}
	if front.Arrivals == 0 || len(front.Refused) > 0 || front.Errors > 0 {
		t.Errorf("front door: %d arrivals, refused %v, %d errors (%s); want arrivals only", front.Arrivals, front.Refused, front.Errors, front.FirstError)
	}
	for _, side := range []struct {
		res    *arriveResult
		prefix string
	}{{api, p.Prefix}, {bare, p.Prefix + minimalPrefix}} {
		r := side.res
		if r.Arrivals == 0 || len(r.Refused) > 0 || r.Errors > 0 || r.P50 <= 0 || r.P50 > r.P99 || !r.CPU.OK {
			t.Errorf("%s: %d arrivals, refused %v, %d errors (%s), p50 %v p99 %v, CPU measured %v; want arrivals only",
				r.Name, r.Arrivals, r.Refused, r.Errors, r.FirstError, r.P50, r.P99, r.CPU.OK)
		}
		// One more arrival, straight into the same room, sees everyone before it.
		room, err := benchkit.NewRoom(ctx, p.Redis, side.prefix)
		if err != nil {
			t.Fatal(err)
		}
		st, err := room.Join(ctx, target.roomEvent(), "probe")
		if err != nil {
			t.Fatal(err)
		}
		if !st.PreQueue || int64(st.Waiting) <= r.Arrivals {
			t.Errorf("%s: a later arrival sees %d waiting (pre-queue %v); want more than the %d arrivals counted", r.Name, st.Waiting, st.PreQueue, r.Arrivals)
		}
	}
}
