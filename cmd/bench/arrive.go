package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"boxoffice/internal/demo"
	"boxoffice/internal/waitroom"
)

// An arrival is what each of the crowd does first at an onsale: it starts a session
// (GET /api/v1/session) and joins the event's waiting room (POST …/queue). Nobody can
// be metered before doing so, so the arrivals an instance serves a second is the
// front door's capacity: what a million people in a minute (16,667 a second) ask of
// it. The measurement's ceiling, in the same run, is the least an origin can do for
// an arrival: a minimal net/http server that sets a random cookie and runs the same
// join in the same Redis (waitroom.Room.Join), without sessions, CSRF or middleware.

// arriveResult is one side of the arrivals' measurement.
type arriveResult struct {
	Name       string
	Window     time.Duration
	Arrivals   int64            // a session and a join, both answered 200, inside the window
	Refused    map[string]int64 // any other answer of the join, by "status code"
	Errors     int64
	FirstError string
	P50, P99   time.Duration // a whole arrival: the session and the join
	CPU        cpuUse
	Queries    *queryReport // -queries: the window's round trips
}

func (r *arriveResult) rate() float64 { return float64(r.Arrivals) / r.Window.Seconds() }

// arriveQueue is the arrivals' event's waiting room, make onsale's: both sides join a
// room with these settings.
var arriveQueue = demo.Queue{Slots: 2000, Rate: 128, TokenTTL: 3 * time.Minute}

// arriveTarget is the event the arrivals join.
type arriveTarget struct {
	ID       int64
	OnsaleAt time.Time
}

// arriveEvent is an event whose waiting room is on and whose onsale is an hour ahead,
// so that every arrival joins the pre-queue, as the crowd of an announced onsale does.
func (s *server) arriveEvent(ctx context.Context) (arriveTarget, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	now := time.Now()
	spec := demo.BigSpec(fmt.Sprintf("bench-arrive-%d", now.UnixNano()), 100, now)
	spec.OnsaleAt = now.Add(time.Hour).Truncate(time.Second)
	q := arriveQueue
	spec.Queue = &q
	id, err := demo.Create(ctx, s.setup, spec)
	if err != nil {
		return arriveTarget{}, fmt.Errorf("create event: %w", err)
	}
	return arriveTarget{ID: id, OnsaleAt: spec.OnsaleAt}, nil
}

// runArrivals runs opts.clients clients, each arriving again and again (a new session,
// then the join) for the warm-up and the measured window, against base. An arrival
// counts when the join answered 200 and put the visitor in the pre-queue.
func runArrivals(ctx context.Context, srv *server, opts options, name, base string, ev arriveTarget, profileSuffix string) (*arriveResult, error) {
	res := &arriveResult{Name: name, Window: opts.duration}
	cl := newAPIClient(base, opts.clients)
	defer cl.Close()
	join := base + "/api/v1/events/" + strconv.FormatInt(ev.ID, 10) + "/queue"
	start := time.Now()
	warmEnd := start.Add(opts.warmup)
	end := warmEnd.Add(opts.duration)

	tallies := make([]tally, opts.clients)
	var wg sync.WaitGroup
	for i := range opts.clients {
		wg.Go(func() {
			t := &tallies[i]
			var answer bytes.Buffer
			for ctx.Err() == nil && time.Now().Before(end) {
				sent := time.Now()
				answer.Reset()
				b, err := cl.newSession(ctx)
				status := 0
				if err == nil {
					status, err = cl.post(ctx, join, b, nil, &answer)
				}
				done := time.Now()
				if done.Before(warmEnd) || done.After(end) {
					continue
				}
				want, key := http.StatusOK, answerKey(status, answer.Bytes())
				if status == http.StatusOK && !inPreQueue(answer.Bytes()) {
					want, key = 0, "200 not in the pre-queue"
				}
				t.record(status, want, err, key, answer.Bytes(), done.Sub(sent))
			}
		})
	}
	win := startWindow(ctx, srv, opts, profileSuffix, warmEnd, end)
	wg.Wait()
	var err error
	if res.CPU, res.Queries, err = win.finish(); err != nil {
		return res, err
	}
	var all tally
	for i := range tallies {
		all.add(&tallies[i])
	}
	res.Arrivals, res.Refused, res.Errors = all.ok, all.refused, all.errs
	if all.firstErr != nil {
		res.FirstError = all.firstErr.Error()
	}
	slices.Sort(all.latencies)
	res.P50, res.P99 = percentile(all.latencies, 0.50), percentile(all.latencies, 0.99)
	if res.Arrivals == 0 {
		return res, fmt.Errorf("%s: no arrival answered (errors %d, first %q; refused %v)", name, res.Errors, res.FirstError, res.Refused)
	}
	return res, nil
}

// minimalFrontDoor is the ceiling: an arrival done with net/http alone, a random
// cookie for the session and the waiting room's own join in the same Redis (keys of
// its own), answered in JSON.
type minimalFrontDoor struct {
	URL  string
	http *http.Server
}

// queueAnswer is the shape of the minimal join's answer, a little of what
// boxoffice's queue answer carries.
type queueAnswer struct {
	Admitted   bool `json:"admitted"`
	Position   int  `json:"position"`
	Ahead      int  `json:"ahead"`
	Waiting    int  `json:"waiting"`
	ETASeconds int  `json:"etaSeconds"`
	PreQueue   bool `json:"preQueue"`
}

func startMinimalFrontDoor(ctx context.Context, srv *server, target arriveTarget) (*minimalFrontDoor, error) {
	room := waitroom.New(srv.rdb, srv.prefix+"minimal:", []waitroom.Key{{ID: "bench", Secret: []byte(rand.Text())}},
		waitroom.Hooks{}, slog.New(slog.DiscardHandler), waitroom.Options{})
	if err := room.LoadScripts(ctx); err != nil {
		return nil, err
	}
	ev := waitroom.Event{ID: target.ID, OnsaleAt: target.OnsaleAt,
		Settings: waitroom.Settings{Enabled: true, Slots: arriveQueue.Slots, Rate: arriveQueue.Rate, TokenTTL: arriveQueue.TokenTTL}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/session", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "visitor", Value: rand.Text(), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(map[string]string{"csrfToken": rand.Text()})
	})
	mux.HandleFunc("POST /api/v1/events/{id}/queue", func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie("visitor")
		if err != nil || r.Header.Get("X-CSRF-Token") == "" {
			http.Error(w, "no session", http.StatusForbidden)
			return
		}
		st, err := room.Join(r.Context(), ev, ck.Value)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(queueAnswer{Admitted: st.Admitted, Position: st.Position, Ahead: st.Ahead,
			Waiting: st.Waiting, ETASeconds: int(st.ETA.Seconds()), PreQueue: st.PreQueue})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &minimalFrontDoor{URL: "http://" + ln.Addr().String(),
		http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}}
	go m.http.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on Close
	return m, nil
}

func (m *minimalFrontDoor) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.http.Shutdown(ctx)
}

// inPreQueue says whether a join's answer puts the visitor in the pre-queue, where
// every arrival an hour before the onsale belongs.
func inPreQueue(answer []byte) bool {
	var a struct {
		PreQueue bool `json:"preQueue"`
	}
	return json.Unmarshal(answer, &a) == nil && a.PreQueue
}
