package web_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/demo"
	"boxoffice/internal/live"
	"boxoffice/web"
)

// streamApp is the test app with a live hub of its own feeding its seat map cache and
// the stream endpoint served alone (web.NewStreamServer, on the server the program's
// Deps build), so that its limits and heartbeat can be set small (the real route is in
// routes.go; the CDN test streams through it).
type streamApp struct {
	*testApp
	hub     *live.Hub
	url     string // the stream server
	synced  chan int64
	streams *web.SeatStreams
}

func newStreamApp(t *testing.T, o web.StreamOptions) *streamApp {
	t.Helper()
	return newStreamAppWith(t, o, nil)
}

// newStreamAppWith is newStreamApp with the hub's options adjusted by tune.
func newStreamAppWith(t *testing.T, o web.StreamOptions, tune func(*testApp, *live.HubOptions)) *streamApp {
	t.Helper()
	a := newTestApp(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sa := &streamApp{testApp: a, synced: make(chan int64, 10)}
	hopt := live.HubOptions{
		Flush: 10 * time.Millisecond,
		Apply: a.Booking.Maps.ApplySeatChanges,
		Reset: func(ctx context.Context, ev, v int64) {
			a.Booking.Maps.ResyncSeatMap(ctx, ev, v)
			sa.synced <- v
		},
		Unwatched: a.Booking.Maps.SeatMapUnwatched,
	}
	if tune != nil {
		tune(a, &hopt)
	}
	sa.hub = live.NewHub(a.Redis, a.Prefix, quiet, hopt)
	o.Hub = sa.hub
	o.Log = quiet
	h, streams, err := web.NewStreamServer(a.App.WebDeps(), o)
	if err != nil {
		t.Fatal(err)
	}
	sa.streams = streams
	srv := httptest.NewUnstartedServer(h)
	// Deadlines for ordinary requests, far shorter than a stream: the stream lifts them.
	// (Half a second, not less: a stream lifts them once it has found its event and its
	// place, which under the whole suite's load took past 100 ms, and the stream was
	// cut before it began.)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 500*time.Millisecond, 500*time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(sa.hub.Close) // before srv.Close: streams end, so Close need not wait
	sa.url = srv.URL
	return sa
}

// sseEvent is one server-sent event as a browser would dispatch it.
type sseEvent struct {
	id, event, data string
	comment         bool
}

// stream is one open stream, its events read as they come.
type stream struct {
	events chan sseEvent
	cancel func()
}

// open connects to the event's stream; header may carry Last-Event-ID or a cookie.
func (sa *streamApp) open(t *testing.T, query string, header http.Header) (*stream, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, sa.url+"/events/"+demo.DemoSpec(time.Now()).Slug+"/stream"+query, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open stream: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		cancel()
		return nil, res.StatusCode
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("got Content-Type %q, want text/event-stream", ct)
	}
	s := &stream{events: make(chan sseEvent, 100), cancel: cancel}
	t.Cleanup(cancel)
	go func() {
		defer res.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch {
			case line == "":
				if ev.comment || data != nil || ev.event != "" || ev.id != "" {
					ev.data = strings.Join(data, "\n")
					s.events <- ev
				}
				ev, data = sseEvent{}, nil
			case field == "":
				ev.comment = true
			case field == "id":
				ev.id = value
			case field == "event":
				ev.event = value
			case field == "data":
				data = append(data, value)
			}
		}
	}()
	return s, http.StatusOK
}

// next returns the stream's next event that is not a comment.
func (s *stream) next(t *testing.T) sseEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatal("stream ended, want an event")
			}
			if !ev.comment {
				return ev
			}
		case <-deadline:
			t.Fatal("got no event, want one")
		}
	}
}

func (sa *streamApp) waitSynced(t *testing.T) {
	t.Helper()
	select {
	case <-sa.synced:
	case <-time.After(10 * time.Second):
		t.Fatal("the hub never synced the event")
	}
}

func (sa *streamApp) holdSeat(t *testing.T, buyer string, seat int64) {
	t.Helper()
	if _, err := sa.Booking.Buyer.Hold(t.Context(), booking.HoldRequest{EventID: sa.EventID, Buyer: buyer, SeatIDs: []int64{seat}}); err != nil {
		t.Fatalf("hold seat %d: %v", seat, err)
	}
}

// TestStreamSendsChanges: a hold after the stream opened arrives as a seats event with
// the version as its id and the seat, now held, as an out-of-band swap; a reconnection
// with an older Last-Event-ID gets just what it missed; one from a version the hub
// cannot vouch for gets a reset.
func TestStreamSendsChanges(t *testing.T) {
	t.Parallel()
	sa := newStreamApp(t, web.StreamOptions{})
	m, err := sa.Booking.Maps.SeatMap(t.Context(), sa.EventID)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := sa.open(t, "?v="+itoa(m.Version), nil)
	sa.waitSynced(t)
	x, y := m.Seats[0].ID, m.Seats[1].ID

	sa.holdSeat(t, "ann", x)
	ev := first.next(t)
	if ev.event != "seats" || ev.id != "1" {
		t.Fatalf("got event %q id %q, want seats with id 1", ev.event, ev.id)
	}
	if want := `id="seat-` + itoa(x) + `"`; !strings.Contains(ev.data, want) || !strings.Contains(ev.data, `hx-swap-oob="true"`) || !strings.Contains(ev.data, "held") {
		t.Errorf("got data %q, want seat %d held, marked for an out-of-band swap", ev.data, x)
	}
	sa.holdSeat(t, "bob", y)
	if ev := first.next(t); ev.id != "2" || !strings.Contains(ev.data, "seat-"+itoa(y)) {
		t.Fatalf("got %+v, want seat %d with id 2", ev, y)
	}

	// The Last-Event-ID header wins over the page's ?v=.
	again, _ := sa.open(t, "?v=0", http.Header{"Last-Event-Id": {"1"}})
	ev = again.next(t)
	if ev.event != "seats" || ev.id != "2" || !strings.Contains(ev.data, "seat-"+itoa(y)) || strings.Contains(ev.data, "seat-"+itoa(x)+`"`) {
		t.Errorf("reconnecting from 1 got %+v, want seat %d alone with id 2", ev, y)
	}
	ahead, _ := sa.open(t, "?v=99", nil)
	if ev := ahead.next(t); ev.event != "reset" || ev.id != "2" {
		t.Errorf("connecting from 99 got %+v, want a reset with id 2", ev)
	}
}

// TestStreamLimits: a session may hold MaxPerSession streams and no more (429); other
// sessions are not affected, and a closed stream frees its place.
func TestStreamLimits(t *testing.T) {
	t.Parallel()
	sa := newStreamApp(t, web.StreamOptions{MaxPerSession: 2, Known: knownTokens("ann", "bob")})
	ann := http.Header{"Cookie": {"boxoffice_session=ann"}}
	a1, _ := sa.open(t, "", ann)
	if _, code := sa.open(t, "", ann); code != http.StatusOK {
		t.Fatalf("second stream: got %d, want 200", code)
	}
	if _, code := sa.open(t, "", ann); code != http.StatusTooManyRequests {
		t.Errorf("third stream of a session: got %d, want 429", code)
	}
	if _, code := sa.open(t, "", http.Header{"Cookie": {"boxoffice_session=bob"}}); code != http.StatusOK {
		t.Errorf("another session's stream: got %d, want 200", code)
	}
	a1.cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, code := sa.open(t, "", ann)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing a stream got %d, want 200", code)
		}
		<-time.After(10 * time.Millisecond) // the server notices the closed connection
	}
}

// TestStreamEnds: streams send heartbeats while quiet, outlive the server's read and
// write timeouts (500 ms here), and end when the hub closes.
func TestStreamEnds(t *testing.T) {
	t.Parallel()
	sa := newStreamApp(t, web.StreamOptions{Heartbeat: 20 * time.Millisecond})
	s, _ := sa.open(t, "", nil)
	pings := 0
	deadline := time.After(10 * time.Second)
	for pings < 40 { // at least 780 ms of stream
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended after %d heartbeats, want 40", pings)
			}
			if ev.comment {
				pings++
			}
		case <-deadline:
			t.Fatalf("got %d heartbeats, want 40", pings)
		}
	}
	sa.hub.Close()
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("stream still open after the hub closed, want it ended")
		}
	}
}

// TestStreamSendsSale: a sale is a seat change too: once the payment's webhook
// confirms the order, the stream carries the seat as sold.
func TestStreamSendsSale(t *testing.T) {
	t.Parallel()
	sa := newStreamApp(t, web.StreamOptions{})
	m, err := sa.Booking.Maps.SeatMap(t.Context(), sa.EventID)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := sa.open(t, "?v="+itoa(m.Version), nil)
	sa.waitSynced(t)
	seat := m.Seats[0].ID
	c := sa.newClient(t)
	co := c.checkout(c.hold(sa.EventID, seat).HoldID)
	c.pay(co.OrderID, "")
	waitOrder(t, c, co.OrderID, booking.StatusConfirmed)
	for {
		ev := s.next(t) // fails the test past its deadline
		if ev.event == "seats" && strings.Contains(ev.data, `id="seat-`+itoa(seat)+`"`) && strings.Contains(ev.data, "sold") {
			return
		}
	}
}
