package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
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
	CPU        benchkit.CPUUse
	Queries    *queryReport // -queries: the window's round trips
}

func (r *arriveResult) rate() float64 { return float64(r.Arrivals) / r.Window.Seconds() }

// arriveQueue is the arrivals' event's waiting room, make onsale's: both sides join a
// room with these settings.
var arriveQueue = benchkit.Queue{Slots: 2000, Rate: 128, TokenTTL: 3 * time.Minute}

// arriveTarget is the event the arrivals join.
type arriveTarget struct {
	ID       int64
	OnsaleAt time.Time
}

// arriveBench is `bench arrive`: the crowd's arrivals through the API, against a
// minimal net/http server doing the same join in the same Redis.
type arriveBench struct{}

func (arriveBench) flags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.client, "client", clientLean, "the clients' HTTP: lean (one HTTP/1.1 connection each, requests from pre-built bytes) or nethttp (Go's net/http client)")
}

func (arriveBench) check(o options) []error {
	if o.client != clientLean && o.client != clientNetHTTP {
		return []error{fmt.Errorf("-client: want %s or %s, not %q", clientLean, clientNetHTTP, o.client)}
	}
	return nil
}

func (arriveBench) sessions(options) int { return 0 }

func (arriveBench) describe(o options) string {
	how := "lean HTTP/1.1 clients, one connection each"
	if o.client == clientNetHTTP {
		how = "Go's net/http client"
	}
	return fmt.Sprintf("an event whose waiting room is on (%d slots, %g a second), its onsale an hour ahead: every arrival joins the pre-queue; %s",
		arriveQueue.Slots, arriveQueue.Rate, how)
}

func (arriveBench) prepare(ctx context.Context, srv *server, _ options) ([]event, roundFunc, error) {
	target, err := srv.arriveEvent(ctx)
	if err != nil {
		return nil, nil, err
	}
	return nil, func(ctx context.Context, r *runner, tag string) error {
		step(fmt.Sprintf("arrive: a place in the waiting room through the API's front door on event %d", target.ID))
		front, err := runArrivals(ctx, r.srv, r.o, "API arrivals (front door: place token)", r.srv.URL, target, frontArrival, profileName("arrive-front", tag))
		if err != nil {
			return err
		}
		step(fmt.Sprintf("arrive: a place through the front door as an API client (a GET for the CSRF token first) on event %d", target.ID))
		frontToken, err := runArrivals(ctx, r.srv, r.o, "API arrivals (front door, GET for the token first)", r.srv.URL, target, frontTokenArrival, profileName("arrive-front-token", tag))
		if err != nil {
			return err
		}
		step(fmt.Sprintf("arrive: a new session and a waiting-room join through the API on event %d", target.ID))
		api, err := runArrivals(ctx, r.srv, r.o, "API arrivals (session + join)", r.srv.URL, target, joinArrival, profileName("arrive", tag))
		if err != nil {
			return err
		}
		minimal, err := startMinimalFrontDoor(ctx, r.srv, target)
		if err != nil {
			return err
		}
		step("arrive: the same against a minimal net/http server and the same Redis join")
		bare, err := runArrivals(ctx, r.srv, r.o, "minimal net/http arrivals (cookie + join)", minimal.URL, target, joinArrival, profileName("arrive-minimal", tag))
		minimal.Close()
		if err != nil {
			return err
		}
		r.rep.compare(tag, front, bare, "ratio arrivals front door / minimal", front.rate()/bare.rate(), true, "")
		r.rep.compare(tag, api, bare, "ratio arrivals API join / minimal", api.rate()/bare.rate(), true, "")
		r.rep.compare(tag, front, api, "ratio arrivals front door / API join", front.rate()/api.rate(), true, "")
		r.rep.compare(tag, frontToken, bare, "ratio arrivals front door with a GET for the token / minimal", frontToken.rate()/bare.rate(), true, "")
		return nil
	}, nil
}

// arriveEvent is an event whose waiting room is on and whose onsale is an hour ahead,
// so that every arrival joins the pre-queue, as the crowd of an announced onsale does.
func (s *server) arriveEvent(ctx context.Context) (arriveTarget, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	now := time.Now()
	q := arriveQueue
	e := benchkit.Event{Slug: fmt.Sprintf("bench-arrive-%d", now.UnixNano()), Seats: 100,
		OnsaleAt: now.Add(time.Hour).Truncate(time.Second), Queue: &q}
	id, err := benchkit.CreateEvent(ctx, s.setup, e)
	return arriveTarget{ID: id, OnsaleAt: e.OnsaleAt}, err
}

// roomEvent is the waiting room's view of the arrivals' event.
func (t arriveTarget) roomEvent() benchkit.RoomEvent {
	return benchkit.RoomEventOf(t.ID, t.OnsaleAt, arriveQueue)
}

// arrivalKind is how an arrival is made, under /api/v1: its first GET, which answers
// the CSRF token ("": none), and its POST. A browser's POST carries Sec-Fetch-Site:
// same-origin, as the door page's fetch does, which passes the CSRF check without a
// token.
type arrivalKind struct {
	first, post string
	browser     bool
}

var (
	// joinArrival is a new session and a waiting-room join: the API's session-then-join
	// way, and the minimal server's.
	joinArrival = arrivalKind{first: "/session", post: "/events/%d/queue"}
	// frontArrival is the front door's as the door page makes it: one POST for a signed
	// place cookie, counted in memory.
	frontArrival = arrivalKind{post: "/events/%d/queue/place", browser: true}
	// frontTokenArrival is the front door's as an API client without Sec-Fetch-Site
	// makes it: the place call's GET for the CSRF token (no session), then its POST.
	frontTokenArrival = arrivalKind{first: "/events/%d/queue/place", post: "/events/%d/queue/place"}
)

func (k arrivalKind) path(s string, eventID int64) string {
	if strings.Contains(s, "%d") {
		s = fmt.Sprintf(s, eventID)
	}
	return "/api/v1" + s
}

// runArrivals runs o.clients clients, each arriving again and again (the first GET,
// then the POST of kind) for the warm-up and the measured window, against base. An
// arrival counts when the POST answered 200 and put the visitor in the pre-queue.
func runArrivals(ctx context.Context, srv *server, o options, name, base string, ev arriveTarget, kind arrivalKind, profile string) (*arriveResult, error) {
	res := &arriveResult{Name: name, Window: o.duration}
	arrivers, closeAll, err := newArrivers(o.client, base, ev, kind, o.clients)
	if err != nil {
		return res, err
	}
	defer closeAll()
	all, w, err := drive(ctx, srv, o, newTiming(o), profile, func(i int) func() (call, bool) {
		arrive := arrivers[i]
		return func() (call, bool) {
			c := call{want: http.StatusOK, sent: time.Now()}
			c.status, c.body, c.err = arrive(ctx)
			c.done = time.Now()
			switch {
			case c.err != nil:
			case c.status != http.StatusOK:
				c.key = answerKey(c.status, c.body) // only a refusal is counted by its key
			case !inPreQueue(c.body):
				c.want, c.key = 0, "200 not in the pre-queue"
			}
			return c, true
		}
	})
	res.CPU, res.Queries = w.cpu, w.queries
	if err != nil {
		return res, err
	}
	res.Arrivals, res.Refused, res.Errors, res.FirstError = all.ok, all.refused, all.errs, errText(all.firstErr)
	res.P50, res.P99 = benchkit.Percentiles(all.latencies)
	if res.Arrivals == 0 {
		return res, fmt.Errorf("%s: no arrival answered (errors %d, first %q; refused %v)", name, res.Errors, res.FirstError, res.Refused)
	}
	return res, nil
}

// minimalPrefix is where the minimal front door's waiting room keeps its keys, under
// the program's prefix.
const minimalPrefix = "minimal:"

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

// startMinimalFrontDoor is the ceiling: an arrival done with net/http alone, a random
// cookie for the session and the waiting room's own join in the same Redis (keys of
// its own), answered in JSON.
func startMinimalFrontDoor(ctx context.Context, srv *server, target arriveTarget) (*benchkit.Server, error) {
	room, err := benchkit.NewRoom(ctx, srv.Redis, srv.Config.RedisPrefix+minimalPrefix)
	if err != nil {
		return nil, err
	}
	ev := target.roomEvent()
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
	return benchkit.Serve(mux)
}

func (r *arriveResult) row(rp *report, tag string) {
	cell := countsCell(r.Refused, r.Errors)
	if r.FirstError != "" {
		cell += " (first: " + r.FirstError + ")"
	}
	rp.row(r.Name+tag, rate(r.rate(), "arrivals/s"), cell, "", latency(r.P50, r.P99), "")
}

func (r *arriveResult) cpuUse() (string, benchkit.CPUUse) { return r.Name, r.CPU }

// millionAMinute is the arrival rate of a million people in one minute.
const millionAMinute = 1e6 / 60

// details says what an arrival costs the machine, and what a million arrivals in a
// minute would ask of instances like this one.
func (r *arriveResult) details(b *strings.Builder) {
	if r.Arrivals == 0 || !r.CPU.OK {
		return
	}
	per := r.CPU.Machine / r.rate() * 1000
	fmt.Fprintf(b, "%s: %s arrivals in %.0f s, %.2f ms of the machine's CPU each (bench, its clients included, %.2f ms; PostgreSQL's backends %.2f ms; Redis %.2f ms); "+
		"a million in a minute (%s a second) is %.1f times this rate.\n\n",
		r.Name, benchkit.Thousands(r.Arrivals), r.Window.Seconds(), per,
		r.CPU.Process/r.rate()*1000, r.CPU.Backends/r.rate()*1000, r.CPU.Redis/r.rate()*1000,
		benchkit.Thousands(math.Round(millionAMinute)), millionAMinute/r.rate())
	if r.Queries != nil {
		r.Queries.write(b, float64(r.Arrivals), "arrival")
		b.WriteString("\n")
	}
}
