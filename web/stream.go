package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/clientnet"
	"boxoffice/internal/live"
)

// StreamOptions configure the live seat stream, GET /events/:slug/stream.
type StreamOptions struct {
	// Hub is the process's one live hub: every stream is a watcher of it.
	Hub *live.Hub
	// Event finds the id of the event a slug names (booking.Buyer.EventBySlug), or
	// booking.ErrEventNotFound. It should answer from memory (the server's event
	// cache): reconnecting streams must not cost a query each.
	Event func(ctx context.Context, slug string) (int64, error)
	// Fragments renders seats as HTML marked for out-of-band swaps (views.SeatsOOB),
	// from the seat map cache, which the hub has updated before any stream hears of
	// the change. It is called once per batch, whatever the number of streams.
	// With ga set, the places left of the event's general-admission tiers come too.
	Fragments func(ctx context.Context, eventID int64, seatIDs []int64, ga bool) ([]byte, error)
	// SessionCookie names the cookie whose value the per-session limit counts. The
	// session's data is never read (a stream is public data), only whether the store
	// has it (Known).
	SessionCookie string
	// Known reports whether the server issued a session token that is still live
	// (the session store has it). Only those count as sessions: a stream with any
	// other cookie value counts by its address alone, so that making up cookies
	// makes up no sessions. Nil: no cookie is taken for a session.
	Known func(ctx context.Context, token string) bool
	// MaxPerSession is how many streams one session may hold at once (tabs of one
	// browser); default 6, the most an HTTP/1.1 browser opens to one host anyway.
	MaxPerSession int
	// MaxPerIP is how many streams one client address (IPv6: its /64) may hold at
	// once (a household or office behind one NAT shares it); default 64.
	MaxPerIP int
	// MaxStreams is how many streams the instance serves at once, whoever asks: each
	// is a connection and a goroutine for as long as a page stays open; default 10,000.
	MaxStreams int
	// Heartbeat is how often a quiet stream sends a comment, so that proxies keep it
	// open and a dead client is noticed; default 15 s.
	Heartbeat time.Duration
	// Retry is the reconnection delay suggested to browsers; default 2 s.
	Retry time.Duration
	// Done ends every stream when it is closed (server shutdown), besides Hub.Close.
	Done <-chan struct{}
	Log  *slog.Logger
}

// seatStreams serves the live seat stream and counts the streams open per session
// and per address, in memory: each instance bounds its own share.
type seatStreams struct {
	opt StreamOptions

	mu        sync.Mutex
	bySession map[string]int
	byIP      map[string]int
	total     int
}

func newSeatStreams(o StreamOptions) *seatStreams {
	if o.MaxPerSession <= 0 {
		o.MaxPerSession = 6
	}
	if o.MaxPerIP <= 0 {
		o.MaxPerIP = 64
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 10_000
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.Retry <= 0 {
		o.Retry = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &seatStreams{opt: o, bySession: map[string]int{}, byIP: map[string]int{}}
}

// Refused streams. The page's EventSource gives up on an answer that is not a stream,
// and the htmx SSE extension then connects again after 0.5, 1, 2 … 64 s.
var (
	// errTooManyStreams answers a client over its share of streams.
	errTooManyStreams = &apiError{Status: http.StatusTooManyRequests, Code: "too_many_streams", RetryAfter: 10,
		Message: "Too many live maps are open from here; close some tabs."}
	// errStreamsFull answers anyone while the instance serves all the streams it may.
	errStreamsFull = &apiError{Status: http.StatusServiceUnavailable, Code: "streams_full", RetryAfter: 10,
		Message: "The live seat map is full on this server right now; it reconnects by itself shortly."}
)

// streamSeats streams an event's seat changes as server-sent events:
//
//	id: <version>          on every event: the browser sends it back as Last-Event-ID
//	event: seats           data: seats as HTML for htmx out-of-band swaps
//	event: reset           data: "reset": changes were lost; fetch the map again
//	: ping                 a heartbeat comment
//
// The first connection names the version of the page's map in ?v=; a reconnection
// sends Last-Event-ID, which wins. Changes after that version are replayed if the hub
// still has them, else the first event is a reset. An id line is never empty: an
// empty one would reset the browser's Last-Event-ID.
func (st *seatStreams) streamSeats(c echo.Context) error {
	req := c.Request()
	eventID, err := st.opt.Event(req.Context(), c.Param("slug"))
	if err != nil {
		return err
	}
	since := versionParam(req.Header.Get("Last-Event-ID"))
	if since < 0 {
		since = versionParam(c.QueryParam("v"))
	}
	addr := clientnet.Key(c.RealIP())
	if err := st.room(addr); err != nil { // before the session lookup, which may ask the database
		return err
	}
	release, err := st.admit(st.session(req), addr)
	if err != nil {
		return err
	}
	defer release()

	ctx := req.Context()
	w, err := st.opt.Hub.Watch(ctx, eventID, max(since, 0))
	if errors.Is(err, live.ErrClosed) {
		return &apiError{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "The server is restarting; try again shortly."}
	} else if err != nil {
		return nil // the client is gone already
	}
	defer w.Close()

	res := c.Response()
	if ok, err := startSSE(c, st.opt.Retry); !ok {
		return err
	}

	beat := time.NewTicker(st.opt.Heartbeat)
	defer beat.Stop()
	for {
		var msg []byte
		select {
		case b, ok := <-w.C():
			if !ok {
				if err := w.Err(); errors.Is(err, live.ErrSlow) {
					st.opt.Log.InfoContext(ctx, "slow stream dropped", "event", eventID, "ip", c.RealIP())
				}
				return nil
			}
			msg = st.encode(ctx, eventID, b)
			beat.Reset(st.opt.Heartbeat)
		case <-beat.C:
			msg = []byte(": ping\n\n")
		case <-ctx.Done():
			return nil
		case <-st.opt.Done:
			return nil
		}
		if _, err := res.Write(msg); err != nil {
			return nil // the client went away
		}
		res.Flush()
	}
}

// startSSE begins an event stream: no deadlines, no caching, no proxy buffering, and
// the reconnection delay. ok is false when the stream cannot go on (err says why, or
// is nil when the client is gone).
func startSSE(c echo.Context, retry time.Duration) (ok bool, err error) {
	res := c.Response()
	// A stream outlives the deadlines a server sets for ordinary requests: a write
	// deadline would cut it, and a read deadline too (net/http's watch for the client
	// hanging up would take the timeout for a hang-up and cancel the request).
	rc := http.NewResponseController(res)
	for _, set := range []func(time.Time) error{rc.SetWriteDeadline, rc.SetReadDeadline} {
		if err := set(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false, err
		}
	}
	h := res.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	res.WriteHeader(http.StatusOK)
	if _, err := res.Write([]byte("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n: hello\n\n")); err != nil {
		return false, nil
	}
	res.Flush()
	return true, nil
}

// encode turns a batch into its events, rendered once for every stream that got the
// same batch.
func (st *seatStreams) encode(ctx context.Context, eventID int64, b live.Batch) []byte {
	msg, _ := b.Shared(func() ([]byte, error) {
		id := "id: " + strconv.FormatInt(b.Version, 10) + "\n"
		if b.Reset {
			return []byte(id + "event: reset\ndata: reset\n\n"), nil
		}
		var buf bytes.Buffer
		if len(b.SeatIDs) > 0 || b.GA {
			// Not the request's context: the first stream to get the batch renders it
			// for all, and its client leaving must not fail the others. General-
			// admission counts ride in the same rendering: a page asking for them
			// again on its own would cost every viewer a request per change.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			html, err := st.opt.Fragments(rctx, eventID, b.SeatIDs, b.GA)
			cancel()
			if err != nil {
				st.opt.Log.WarnContext(ctx, "seat fragments not rendered: streams reset", "event", eventID, "err", err)
				return []byte(id + "event: reset\ndata: reset\n\n"), nil
			}
			buf.WriteString(id + "event: seats\n")
			writeData(&buf, html)
		}
		if buf.Len() == 0 {
			buf.WriteString(id + "\n") // moves Last-Event-ID on, dispatches nothing
		}
		return buf.Bytes(), nil
	})
	return msg
}

// writeData writes p as the data of one event: one data line per line of p, since a
// line break inside a data field would end it.
func writeData(buf *bytes.Buffer, p []byte) {
	p = bytes.ReplaceAll(p, []byte("\r\n"), []byte("\n"))
	p = bytes.ReplaceAll(p, []byte("\r"), []byte("\n"))
	for line := range bytes.SplitSeq(bytes.TrimRight(p, "\n"), []byte("\n")) {
		buf.WriteString("data: ")
		buf.Write(line)
		buf.WriteByte('\n')
	}
	buf.WriteByte('\n')
}

// versionParam reads a version from Last-Event-ID or ?v=; -1 when absent or not one.
func versionParam(s string) int64 {
	if s == "" || len(s) > 19 {
		return -1
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return -1
	}
	return v
}

// session is the request's session token if the server issued it, else "".
func (st *seatStreams) session(req *http.Request) string {
	ck, err := req.Cookie(st.opt.SessionCookie)
	if err != nil || st.opt.SessionCookie == "" || st.opt.Known == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
	defer cancel()
	if !st.opt.Known(ctx, ck.Value) {
		return ""
	}
	return ck.Value
}

// room refuses a stream at once when its address or the instance has none left.
func (st *seatStreams) room(addr string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.full("", addr)
}

// full says which limit a new stream of session and addr would pass, if any; st.mu
// is held.
func (st *seatStreams) full(session, addr string) error {
	switch {
	case st.total >= st.opt.MaxStreams:
		return errStreamsFull
	case session != "" && st.bySession[session] >= st.opt.MaxPerSession, st.byIP[addr] >= st.opt.MaxPerIP:
		return errTooManyStreams
	}
	return nil
}

// admit counts a new stream against its session ("" for none), its address and the
// instance, or refuses it. The release it returns must be called when the stream
// ends.
func (st *seatStreams) admit(session, addr string) (release func(), err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.full(session, addr); err != nil {
		return nil, err
	}
	if session != "" {
		st.bySession[session]++
	}
	st.byIP[addr]++
	st.total++
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if session != "" {
			if st.bySession[session]--; st.bySession[session] <= 0 {
				delete(st.bySession, session)
			}
		}
		if st.byIP[addr]--; st.byIP[addr] <= 0 {
			delete(st.byIP, addr)
		}
		st.total--
	}, nil
}
