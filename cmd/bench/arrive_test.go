package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/apptest"
	"boxoffice/internal/benchkit"
)

// TestArrivals runs the arrivals' measurement end to end, briefly, on a program of its
// own, with each client: the real server and the minimal one each serve arrivals, none
// refused or failed, and every arrival counted is a waiter in the pre-queue of its
// side's room.
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
	minimal, err := startMinimalFrontDoor(ctx, srv, target)
	if err != nil {
		t.Fatal(err)
	}
	defer minimal.Close()
	// Both clients arrive in the same rooms, one after the other: every check below
	// holds for the arrivals of each, since the rooms' counts only grow.
	for _, client := range []string{clientLean, clientNetHTTP} {
		o.client = client
		front, err := runArrivals(ctx, srv, o, client+" front", srv.URL, target, frontArrival, "")
		if err != nil {
			t.Fatal(err)
		}
		frontToken, err := runArrivals(ctx, srv, o, client+" front with a token", srv.URL, target, frontTokenArrival, "")
		if err != nil {
			t.Fatal(err)
		}
		api, err := runArrivals(ctx, srv, o, client+" api", srv.URL, target, joinArrival, "")
		if err != nil {
			t.Fatal(err)
		}
		bare, err := runArrivals(ctx, srv, o, client+" minimal", minimal.URL, target, joinArrival, "")
		if err != nil {
			t.Fatal(err)
		}
		checkArrivals(t, p, target, []*arriveResult{front, frontToken}, api, bare)
	}
	o.warmup, o.duration = 0, 500*time.Millisecond
	for _, client := range []string{clientLean, clientNetHTTP} {
		o.client = client
		checkCounting(t, srv, o, target)
	}
}

// checkCounting runs o.client's arrivals against a server that fails some first GETs
// and answers the POSTs in turn with a refusal, a 200 outside the pre-queue and an
// arrival, each only when the POST carries the cookies and token of its GET: each
// kind is counted as what it is.
func checkCounting(t *testing.T, srv *server, o options, target arriveTarget) {
	t.Helper()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		if r.Method == http.MethodGet {
			if i%7 == 0 {
				http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "a", Value: strconv.FormatInt(i, 10), Path: "/"})
			http.SetCookie(w, &http.Cookie{Name: "b", Value: strconv.FormatInt(i, 10), Path: "/", HttpOnly: true})
			fmt.Fprintf(w, `{"csrfToken":"t%d"}`, i)
			return
		}
		var a, b int64
		if _, err := fmt.Sscanf(r.Header.Get("Cookie"), "a=%d; b=%d", &a, &b); err != nil || a != b ||
			r.Header.Get("X-CSRF-Token") != "t"+strconv.FormatInt(a, 10) {
			http.Error(w, `{"error":"not_carried"}`, http.StatusBadRequest)
			return
		}
		switch i % 3 {
		case 0:
			http.Error(w, `{"error":"forbidden"}`, http.StatusForbidden)
		case 1:
			fmt.Fprint(w, `{"preQueue":false}`)
		default:
			fmt.Fprint(w, `{"preQueue":true}`)
		}
	}))
	defer ts.Close()
	r, err := runArrivals(t.Context(), srv, o, o.client+" counting", ts.URL, target, joinArrival, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Arrivals == 0 || r.Errors == 0 || !strings.Contains(r.FirstError, "status 500") || len(r.Refused) != 2 ||
		r.Refused["403 forbidden"] == 0 || r.Refused["200 not in the pre-queue"] == 0 {
		t.Errorf("%s: %d arrivals, refused %v, %d errors (%s); want arrivals, 403 forbidden, 200 not in the pre-queue and errors of status 500",
			r.Name, r.Arrivals, r.Refused, r.Errors, r.FirstError)
	}
}

// checkArrivals checks one client's arrivals of every side against the rooms: the
// front door's (each way of arriving), the API's join and the minimal server's.
func checkArrivals(t *testing.T, p *apptest.Program, target arriveTarget, fronts []*arriveResult, api, bare *arriveResult) {
	t.Helper()
	ctx := t.Context()
	// The front door's arrivals are counts in the program's memory until a flush:
	// then the board counts every one of them.
	if err := p.App.Queue.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var arrived int64
	for _, front := range fronts {
		arrived += front.Arrivals
		if front.Arrivals == 0 || len(front.Refused) > 0 || front.Errors > 0 {
			t.Errorf("%s: %d arrivals, refused %v, %d errors (%s); want arrivals only", front.Name, front.Arrivals, front.Refused, front.Errors, front.FirstError)
		}
	}
	if b, err := p.App.Queue.Board(ctx, target.roomEvent()); err != nil || b.Counted < arrived || !b.PreQueue {
		t.Errorf("the front door: the board counts %d arrivals (pre-queue %v, %v); want the %d arrivals counted at least",
			b.Counted, b.PreQueue, err, arrived)
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

// TestArrivalAnswers: the fields the arrivals read are found in answers as the servers
// write them, and in any other JSON by decoding.
func TestArrivalAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body     string
		csrf     string
		preQueue bool
	}{
		{`{"admitted":false,"preQueue":true,"csrfToken":"AB12","board":"x"}`, "AB12", true},
		{`{"preQueue":false,"csrfToken":"tok"}` + "\n", "tok", false},
		{`{"csrfToken": "spaced", "preQueue": true}`, "spaced", true},
		{`{"csrfToken":"a\"b"}`, `a"b`, false},
		{`{"error":"forbidden"}`, "", false},
		{`not json`, "", false},
	} {
		if got := string(csrfTokenOf([]byte(tc.body))); got != tc.csrf {
			t.Errorf("csrfTokenOf(%s): got %q, want %q", tc.body, got, tc.csrf)
		}
		if got := inPreQueue([]byte(tc.body)); got != tc.preQueue {
			t.Errorf("inPreQueue(%s): got %v, want %v", tc.body, got, tc.preQueue)
		}
	}
}
