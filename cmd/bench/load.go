package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"boxoffice/internal/benchkit"
)

// apiClient is the load generator's HTTP side: one keep-alive transport with an idle
// connection for every client, and cookies set by hand, so the client costs as
// little CPU as it can on the machine it shares with the server.
type apiClient struct {
	base string
	http *http.Client
}

func newAPIClient(base string, clients int) *apiClient {
	tr := &http.Transport{
		MaxIdleConns: 2 * clients, MaxIdleConnsPerHost: 2 * clients, IdleConnTimeout: time.Minute,
		DisableCompression: true, ForceAttemptHTTP2: false,
	}
	return &apiClient{base: base, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (c *apiClient) Close() { c.http.CloseIdleConnections() }

// buyer is one buyer session: its cookies (session and CSRF) and CSRF token; or a
// browser's page, whose calls carry Sec-Fetch-Site (fetchSite) instead.
type buyer struct {
	cookie    string
	csrf      string
	fetchSite string
}

// newSession starts a buyer session, as a client of the API does first.
func (c *apiClient) newSession(ctx context.Context) (buyer, error) {
	return c.firstGet(ctx, "/api/v1/session")
}

// firstGet is a first call that answers a CSRF token (and sets its cookie): path is
// GET /api/v1/session, or a front-door place call, which makes no session.
func (c *apiClient) firstGet(ctx context.Context, path string) (buyer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return buyer{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return buyer{}, err
	}
	defer resp.Body.Close()
	var body struct {
		CSRFToken string `json:"csrfToken"`
	}
	if resp.StatusCode != http.StatusOK {
		return buyer{}, fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.CSRFToken == "" {
		return buyer{}, fmt.Errorf("GET %s: no csrfToken (%v)", path, err)
	}
	var parts []string
	for _, ck := range resp.Cookies() {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return buyer{cookie: strings.Join(parts, "; "), csrf: body.CSRFToken}, nil
}

// createSessions creates n sessions with workers requests at a time.
func (c *apiClient) createSessions(ctx context.Context, n, workers int) ([]buyer, error) {
	out := make([]buyer, n)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return nil
				}
				s, err := c.newSession(gctx)
				if err != nil {
					return err
				}
				out[i] = s
			}
		})
	}
	return out, g.Wait()
}

// holdKind is what one request asks for.
type holdKind struct {
	name  string
	seats int // seats one successful hold takes
	// perBuyer is the successful holds a session makes before the next session takes
	// over: one, since a buyer's next hold joins the first's basket (a basket add,
	// unbatched, not the new hold an onsale's buyer makes and pgbench's UPDATE is).
	perBuyer int
	body     func(rng *rand.Rand, ev *event, buf []byte) []byte
}

func (k holdKind) seatsPerSession() int { return k.seats * k.perBuyer }

var (
	// exactKind holds the event's next seat by id: the clients walk through the
	// event together, so that every attempt finds its seat free while seats are left,
	// as pgbench's clients do (walkSeat).
	exactKind = holdKind{name: "exact one-seat holds", seats: 1, perBuyer: 1,
		body: func(_ *rand.Rand, ev *event, buf []byte) []byte {
			buf = append(buf[:0], `{"seatIds":[`...)
			i := (ev.next.Add(1) - 1) % int64(len(ev.SeatIDs))
			buf = strconv.AppendInt(buf, ev.SeatIDs[i], 10)
			return append(buf, "]}"...)
		}}
	// bestKind asks for the best 4 seats.
	bestKind = holdKind{name: "best available 4", seats: 4, perBuyer: 1,
		body: func(_ *rand.Rand, _ *event, buf []byte) []byte { return append(buf[:0], `{"quantity":4}`...) }}
)

// tally counts the answers of one client within the measured window.
type tally struct {
	requests  int64
	ok        int64            // 201
	refused   map[string]int64 // every other answer, by "status code", e.g. "409 seat_unavailable"
	samples   map[string]string
	errs      int64
	firstErr  error
	latencies []time.Duration // of the 201s
}

func (t *tally) refuse(key string, body []byte) {
	if t.refused == nil {
		t.refused, t.samples = map[string]int64{}, map[string]string{}
	}
	if t.refused[key]++; t.refused[key] == 1 {
		t.samples[key] = fmt.Sprintf("%.200s", bytes.TrimSpace(body))
	}
}

// record counts one call answered inside the window: c.want is success, with its
// latency.
func (t *tally) record(c call) {
	t.requests++
	switch {
	case c.err != nil:
		t.errs++
		t.firstErr = cmpErr(t.firstErr, c.err)
	case c.status == c.want:
		t.ok++
		t.latencies = append(t.latencies, c.done.Sub(c.sent))
	default:
		t.refuse(c.key, c.body)
	}
}

func (t *tally) add(o *tally) {
	t.requests += o.requests
	t.ok += o.ok
	t.errs += o.errs
	if t.firstErr == nil {
		t.firstErr = o.firstErr
	}
	for k, v := range o.refused {
		if t.refused == nil {
			t.refused, t.samples = map[string]int64{}, map[string]string{}
		}
		if _, ok := t.samples[k]; !ok {
			t.samples[k] = o.samples[k]
		}
		t.refused[k] += v
	}
	t.latencies = append(t.latencies, o.latencies...)
}

// answerKey is "status code" of an error answer: {"error": code, ...} is every error
// answer of the API.
func answerKey(status int, body []byte) string {
	code := "?"
	if c, ok := scanString(body, "error"); ok && len(c) < 64 {
		code = string(c)
	}
	return strconv.Itoa(status) + " " + code
}

// sessionSource hands the clients fresh sessions: the ones created before timing, then,
// should they run out, new ones (counted, as they are made inside the timing).
type sessionSource struct {
	cl   *apiClient
	list []buyer
	next atomic.Int64
	made atomic.Int64
}

func (s *sessionSource) take(ctx context.Context) (buyer, error) {
	if i := int(s.next.Add(1)) - 1; i < len(s.list) {
		return s.list[i], nil
	}
	s.made.Add(1)
	return s.cl.newSession(ctx)
}

// runAPI runs o.clients clients against one event for the warm-up and the measured
// window; answers that arrive inside the window are counted.
func runAPI(ctx context.Context, srv *server, cl *apiClient, sessions []buyer, ev event, kind holdKind, o options, profile string) (*apiResult, error) {
	res := &apiResult{Kind: kind.name, EventSeats: len(ev.SeatIDs), SetupHeld: ev.Held, Window: o.duration}
	src := &sessionSource{cl: cl, list: sessions}
	path := cl.base + "/api/v1/events/" + strconv.FormatInt(ev.ID, 10) + "/holds"
	tm := newTiming(o)
	var allOK atomic.Int64 // 201s of the whole run, warm-up included: the seats held must match
	all, w, err := drive(ctx, srv, o, tm, profile, func(i int) func() (call, bool) {
		rng := rand.New(rand.NewPCG(uint64(tm.start.UnixNano()), uint64(i)))
		var sess buyer
		used := kind.perBuyer // forces a session on the first request
		var body []byte
		var answer bytes.Buffer
		return func() (call, bool) {
			if used >= kind.perBuyer {
				s, err := src.take(ctx)
				if err != nil {
					return call{err: err, sent: time.Now(), done: time.Now()}, true
				}
				sess, used = s, 0
			}
			body = kind.body(rng, &ev, body)
			c := call{want: http.StatusCreated, sent: time.Now()}
			c.status, c.err = cl.post(ctx, path, sess, body, &answer)
			c.done, c.body = time.Now(), answer.Bytes()
			if c.status == http.StatusCreated {
				allOK.Add(1)
				used++
			} else if c.err == nil {
				if c.key = answerKey(c.status, c.body); c.key == "409 limit_exceeded" {
					used = kind.perBuyer // never expected: the sessions are changed in time
				}
			}
			return c, true
		}
	})
	res.CPU, res.Queries = w.cpu, w.queries
	if err != nil {
		return res, err
	}
	res.Requests, res.OK, res.Refused, res.Samples = all.requests, all.ok, all.refused, all.samples
	res.Errors, res.SessionsMade, res.FirstError = all.errs, src.made.Load(), errText(all.firstErr)
	res.P50, res.P99 = benchkit.Percentiles(all.latencies)

	held, err := srv.heldSeats(ctx, ev.ID)
	if err != nil {
		return res, err
	}
	res.FillAfter = float64(held) / float64(len(ev.SeatIDs))
	if want := ev.Held + int(allOK.Load())*kind.seats; held != want {
		res.Mismatch = fmt.Sprintf("%d seats held after the run, want %d (setup + 201s × %d)", held, want, kind.seats)
	}
	return res, nil
}

// post sends one POST with the headers of s that are set; answer receives the body.
func (c *apiClient) post(ctx context.Context, url string, s buyer, body []byte, answer *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range [...][2]string{{"X-CSRF-Token", s.csrf}, {"Cookie", s.cookie}, {"Sec-Fetch-Site", s.fetchSite}} {
		if h[1] != "" {
			req.Header.Set(h[0], h[1])
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	answer.Reset()
	if _, err := io.Copy(answer, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

func cmpErr(first, err error) error {
	if first != nil || errors.Is(err, context.Canceled) {
		return first
	}
	return err
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
