package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/apptest"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/waitroom"
	"boxoffice/web"
)

// frontQueue is fastQueue with short arrival groups, so that the cursor reaches an
// arrival within a fraction of a second.
func frontQueue(o *appOptions) {
	o.Queue = waitroom.Options{Tick: 20 * time.Millisecond, Lease: 500 * time.Millisecond, Refresh: 50 * time.Millisecond,
		GroupSpan: 100 * time.Millisecond, Flush: 50 * time.Millisecond, Settle: 100 * time.Millisecond}
}

// arrival is a visitor without a session who takes a place: a cookie jar, and the
// CSRF token the place call's GET gives (which makes no session).
func arrival(t *testing.T, a *testApp, eventID int64) (*client, web.PlaceJSON) {
	t.Helper()
	c := visitorVia(t, a, eventID, nil)
	var p web.PlaceJSON
	if st := c.do("POST", placePath(eventID), nil, &p); st != http.StatusOK || !p.Placed {
		t.Fatalf("POST place: got %d %+v, want 200 placed", st, p)
	}
	return c, p
}

// visitorVia is a visitor without a session over rt (nil: the default transport),
// with the CSRF token of the place call's GET, and no place yet.
func visitorVia(t *testing.T, a *testApp, eventID int64, rt http.RoundTripper) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, http: &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: rt}, base: a.URL}
	var p web.PlaceJSON
	if st := c.do("GET", placePath(eventID), nil, &p); st != http.StatusOK || p.CSRFToken == "" || p.Placed {
		t.Fatalf("GET place: got %d %+v, want 200 with a CSRF token and no place", st, p)
	}
	c.csrf = p.CSRFToken
	return c
}

func placePath(eventID int64) string { return "/api/v1/events/" + itoa(eventID) + "/queue/place" }
func claimPath(eventID int64) string { return "/api/v1/events/" + itoa(eventID) + "/queue/claim" }

// placeToken is the client's place cookie for the event.
func placeToken(t *testing.T, c *client, eventID int64) string {
	t.Helper()
	u, _ := url.Parse(c.base + "/")
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == web.PlaceCookie(eventID) {
			return ck.Value
		}
	}
	t.Fatalf("no place cookie for event %d", eventID)
	return ""
}

// TestPlaceArrivalsCostNoSessionNorRedisCallEach: a hundred arrivals take places
// without a session row and with no Redis call each (the board's cached read and the
// counts' flush are per instance and second); the old join, the negative control,
// costs a session and Redis calls for each. Taking a place twice keeps it.
func TestPlaceArrivalsCostNoSessionNorRedisCallEach(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, frontQueue)
	roomOn(t, a, a.EventID, 10, 50, time.Minute)
	const n = 100
	var calls dbtest.RedisCalls
	a.Redis.AddHook(&calls)
	sessions := count(t, a.Pool, `SELECT count(*) FROM sessions`)
	// A connection's set-up calls (HELLO, CLIENT) come once, not per visitor: a first
	// arrival opens it.
	arrival(t, a, a.EventID)
	start, before := time.Now(), calls.N()
	var first *client
	for i := range n {
		c, _ := arrival(t, a, a.EventID)
		if i == 0 {
			first = c
		}
	}
	took, used := time.Since(start), calls.N()-before
	if got := count(t, a.Pool, `SELECT count(*) FROM sessions`); got != sessions {
		t.Errorf("%d arrivals: sessions went from %d to %d, want unchanged", n, sessions, got)
	}
	// The board is read at most once a second (boardTTL), a script call each; the
	// admitter is not running; the counts are flushed only by it.
	if most := int64(took/time.Second) + 2; used > most {
		t.Errorf("%d arrivals in %v: got %d Redis commands, want at most %d (one board read a second)", n, took, used, most)
	}
	tok := placeToken(t, first, a.EventID)
	var again web.PlaceJSON
	if st := first.do("POST", placePath(a.EventID), nil, &again); st != http.StatusOK || placeToken(t, first, a.EventID) != tok {
		t.Errorf("taking a place twice: got %d and another token; want the same place", st)
	}

	// Negative control: the old join costs each arrival a session and Redis calls.
	before = calls.N()
	for range 10 {
		c := a.newClient(t)
		c.queue("POST", a.EventID)
	}
	if used := calls.N() - before; used < 10 {
		t.Errorf("10 old joins: got %d Redis commands, want 10 at least (the counter must see per-visitor calls)", used)
	}
	if got := count(t, a.Pool, `SELECT count(*) FROM sessions`); got < sessions+10 {
		t.Errorf("10 old joins: sessions went from %d to %d, want 10 more", sessions, got)
	}
}

// TestPlaceInOneRequestFromThePage: the door page's browser takes a place with one
// POST and nothing before it: Sec-Fetch-Site: same-origin passes the CSRF check with
// neither cookie nor token, and the place is its cookie; the same POST again keeps it.
// A cross-site POST, and one with neither the header nor a token (the control: the
// route is checked), are refused and given no place.
func TestPlaceInOneRequestFromThePage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, frontQueue)
	roomOn(t, a, a.EventID, 10, 50, time.Minute)
	newVisitor := func() *client {
		jar, _ := cookiejar.New(nil)
		return &client{t: t, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}, base: a.URL}
	}
	c := newVisitor()
	page := http.Header{"Sec-Fetch-Site": {"same-origin"}}
	var p web.PlaceJSON
	st, raw, _ := c.raw("POST", placePath(a.EventID), nil, page)
	if st != http.StatusOK || json.Unmarshal(raw, &p) != nil || !p.Placed {
		t.Fatalf("the page's POST place: got %d %s, want 200 placed", st, raw)
	}
	tok := placeToken(t, c, a.EventID)
	if st, raw, _ := c.raw("POST", placePath(a.EventID), nil, page); st != http.StatusOK || placeToken(t, c, a.EventID) != tok {
		t.Errorf("the page's POST place again: got %d %s and token changed %v; want the same place", st, raw, placeToken(t, c, a.EventID) != tok)
	}
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"cross-site", http.Header{"Sec-Fetch-Site": {"cross-site"}}},
		{"no Sec-Fetch-Site, no token", nil},
	} {
		v := newVisitor()
		st, raw, h := v.raw("POST", placePath(a.EventID), nil, tc.header)
		if st != http.StatusForbidden || !strings.Contains(string(raw), "csrf_failed") {
			t.Errorf("%s POST place: got %d %s, want 403 csrf_failed", tc.name, st, raw)
		}
		for _, ck := range h.Values("Set-Cookie") {
			if strings.HasPrefix(ck, web.PlaceCookie(a.EventID)+"=") {
				t.Errorf("%s POST place: refused, yet given a place cookie %q", tc.name, ck)
			}
		}
	}
}

// TestPlaceClaimAdmitsAtItsTurn: an arrival's place is claimed once the cursor passes
// it: before that the claim makes nothing; then it makes the session and the
// admission, and a seat can be held with it. A forged token or another event's is
// refused.
func TestPlaceClaimAdmitsAtItsTurn(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, frontQueue)
	roomOn(t, a, a.EventID, 10, 50, time.Minute)
	other := smallEvent(t, a.Pool, "front-other")
	roomOn(t, a, other, 10, 50, time.Minute)
	c, p := arrival(t, a, a.EventID)
	if p.Group == 0 || p.Admitted {
		t.Fatalf("an arrival after the onsale: got %+v, want a group after the draw, not admitted", p)
	}
	sessions := count(t, a.Pool, `SELECT count(*) FROM sessions`)
	var early web.PlaceJSON
	if st := c.do("POST", claimPath(a.EventID), nil, &early); st != http.StatusOK || early.Admitted {
		t.Fatalf("claim before the admitter ran: got %d %+v, want 200 not admitted", st, early)
	}
	if got := count(t, a.Pool, `SELECT count(*) FROM sessions`); got != sessions {
		t.Errorf("a claim before its turn made a session (%d → %d)", sessions, got)
	}

	// Refused: a forged token, and a token of another event.
	forged := placeToken(t, c, a.EventID)
	forged = forged[:len(forged)-2] + map[bool]string{true: "AA", false: "AB"}[forged[len(forged)-2:] != "AA"]
	o2, _ := arrival(t, a, other)
	for name, tok := range map[string]string{"forged": forged, "another event's": placeToken(t, o2, other)} {
		st, raw, _ := c.raw("POST", claimPath(a.EventID), nil, http.Header{"X-Place-Token": {tok}})
		if e, _ := parseError(raw); st != http.StatusForbidden || e.Error != "invalid_place" {
			t.Errorf("claim with %s token: got %d %s, want 403 invalid_place", name, st, raw)
		}
	}

	runQueue(t, a)
	untilTurn(t, c, a.EventID)
	var got web.PlaceJSON
	if st := c.do("POST", claimPath(a.EventID), nil, &got); st != http.StatusOK || !got.Admitted || got.Token == "" {
		t.Fatalf("claim at its turn: got %d %+v, want admitted with a token", st, got)
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM sessions`); n != sessions+1 {
		t.Errorf("the claim: sessions went from %d to %d, want one more", sessions, n)
	}
	seat := firstSeats(t, a.Pool, a.EventID, 1)[0]
	held := c.hold(a.EventID, seat)
	// Another visitor showing the same place is refused.
	thief, _ := arrival(t, a, a.EventID)
	st, raw, _ := thief.raw("POST", claimPath(a.EventID), nil, http.Header{"X-Place-Token": {placeToken(t, c, a.EventID)}})
	if e, _ := parseError(raw); st != http.StatusConflict || e.Error != "place_claimed" {
		t.Errorf("another visitor claims the place: got %d %s, want 409 place_claimed", st, raw)
	}
	// Released: the admission has ended and the place is spent; a new place is taken.
	used := placeToken(t, c, a.EventID)
	if st := c.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("release: got %d, want 204", st)
	}
	st, raw, _ = c.raw("POST", claimPath(a.EventID), nil, nil)
	if e, _ := parseError(raw); st != http.StatusConflict || e.Error != "place_used" {
		t.Errorf("claim after the admission ended: got %d %s, want 409 place_used", st, raw)
	}
	var again web.PlaceJSON
	if st := c.do("POST", placePath(a.EventID), nil, &again); st != http.StatusOK || placeToken(t, c, a.EventID) == used {
		t.Errorf("a place after the spent one: got %d and the same token, want a new place", st)
	}
}

// untilTurn polls the visitor's place, as its page follows the board, until the
// cursor has passed it.
func untilTurn(t *testing.T, c *client, eventID int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var q web.PlaceJSON
		if st := c.do("GET", placePath(eventID), nil, &q); st != http.StatusOK {
			t.Fatalf("GET place: %d", st)
		}
		if q.Turn {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cursor never passed the place: last %+v", q)
		}
		time.Sleep(50 * time.Millisecond) // polling the board, as the queue page does
	}
}

// TestPlaceClaimWaitsAtAFullRoom: one slot, and two places passed (the first not
// claimed within its claim window, so the cursor passed its slot on to the second).
// The first claim takes the slot; the second, at its turn, is answered not admitted
// (ask again), and goes in once the first shopper releases what it held.
func TestPlaceClaimWaitsAtAFullRoom(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, frontQueue, func(o *appOptions) { o.Queue.ClaimWindow = 100 * time.Millisecond })
	roomOn(t, a, a.EventID, 1, 50, time.Minute)
	first, _ := arrival(t, a, a.EventID)
	second, _ := arrival(t, a, a.EventID)
	runQueue(t, a)
	untilTurn(t, first, a.EventID)
	untilTurn(t, second, a.EventID)
	var in, out web.PlaceJSON
	if st := first.do("POST", claimPath(a.EventID), nil, &in); st != http.StatusOK || !in.Admitted {
		t.Fatalf("the first claim: got %d %+v, want admitted", st, in)
	}
	sessions := count(t, a.Pool, `SELECT count(*) FROM sessions`)
	if st := second.do("POST", claimPath(a.EventID), nil, &out); st != http.StatusOK || out.Admitted || !out.Turn {
		t.Fatalf("the second claim with the one slot taken: got %d %+v, want 200, its turn, not admitted", st, out)
	}
	// Turned away, it made no session: none stored, no session cookie.
	if got := count(t, a.Pool, `SELECT count(*) FROM sessions`); got != sessions {
		t.Errorf("a claim turned away: sessions went from %d to %d, want unchanged", sessions, got)
	}
	if hasSessionCookie(a, second) {
		t.Error("a claim turned away: the visitor got a session cookie")
	}
	held := first.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 1)[0])
	if st := first.do("DELETE", "/api/v1/holds/"+held.HoldID, nil, nil); st != http.StatusNoContent {
		t.Fatalf("release: got %d, want 204", st)
	}
	if st := second.do("POST", claimPath(a.EventID), nil, &out); st != http.StatusOK || !out.Admitted {
		t.Errorf("the second claim asked again once the slot came back: got %d %+v, want admitted", st, out)
	}
	// The control: admitted, it made the session.
	if got := count(t, a.Pool, `SELECT count(*) FROM sessions`); got != sessions+1 || !hasSessionCookie(a, second) {
		t.Errorf("the second claim admitted: sessions went from %d to %d (cookie %v), want one more, with its cookie",
			sessions, got, hasSessionCookie(a, second))
	}
}

// hasSessionCookie reports whether the client holds a buyer session cookie.
func hasSessionCookie(a *testApp, c *client) bool { return sessionCookie(nil, a, c) != "" }

// TestPlaceClaimCountsNewSessions: a claim that makes a session counts against the
// address's new sessions; past the limit the next visitor's claim from that address
// is refused at its turn with 429 (its session not made, no slot taken), while one
// from another address is admitted (the control).
func TestPlaceClaimCountsNewSessions(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, frontQueue, func(o *appOptions) { o.Env = map[string]string{"ADDRESS_SESSIONS_PER_HOUR": "1"} })
	roomOn(t, a, a.EventID, 5, 50, time.Minute)
	home := func(i int) *fromAddress { return at(fmt.Sprintf("2001:db8:cc:1:%x::%x", i, i+1)) } // one /64
	first := visitorVia(t, a, a.EventID, home(0))
	second := visitorVia(t, a, a.EventID, home(1))
	other := visitorVia(t, a, a.EventID, at("2001:db8:cc:2::1"))
	for _, c := range []*client{first, second, other} {
		if st := c.do("POST", placePath(a.EventID), nil, nil); st != http.StatusOK {
			t.Fatalf("POST place: got %d, want 200", st)
		}
	}
	runQueue(t, a)
	for _, c := range []*client{first, second, other} {
		untilTurn(t, c, a.EventID)
	}
	if st, q := claim(t, first, a.EventID); st != http.StatusOK || !q.Admitted {
		t.Fatalf("the first claim: got %d %+v, want admitted", st, q)
	}
	st, raw, h := second.raw("POST", claimPath(a.EventID), nil, nil)
	wantLimited(t, "a second new session's claim from the address", st, raw, h, web.LimitedBySessions, 3600)
	if hasSessionCookie(a, second) {
		t.Error("the refused claim: the visitor got a session cookie")
	}
	if st, q := claim(t, other, a.EventID); st != http.StatusOK || !q.Admitted {
		t.Errorf("a claim from another address: got %d %+v, want admitted", st, q)
	}
}

// TestPlaceRequestsLoggedAtDebug: the crowd's place calls are logged at debug level
// when answered, so a server logging at info writes no line for them, while their
// refusals (a POST without its CSRF token) and the other routes' requests (the board,
// the negative control) are logged as before; a server logging at debug writes them.
func TestPlaceRequestsLoggedAtDebug(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			t.Parallel()
			var buf lockedBuffer
			a := newTestApp(t, func(o *appOptions) {
				o.Log = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}))
			})
			roomOn(t, a, a.EventID, 10, 50, time.Minute)
			arrival(t, a, a.EventID) // its GET and its POST, both answered 200
			c := visitorVia(t, a, a.EventID, nil)
			c.csrf = ""
			if st := c.do("POST", placePath(a.EventID), nil, nil); st != http.StatusForbidden {
				t.Fatalf("POST place without the CSRF token: got %d, want 403", st)
			}
			board := "/api/v1/events/" + itoa(a.EventID) + "/queue/board"
			if st := c.do("GET", board, nil, nil); st != http.StatusOK {
				t.Fatalf("GET board: got %d, want 200", st)
			}

			lines := map[string][]int{} // "METHOD uri" → statuses logged
			sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
			for sc.Scan() {
				var l struct {
					Msg, Method, URI string
					Status           int
				}
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("log line %q: %v", sc.Text(), err)
				}
				if l.Msg == "request" {
					lines[l.Method+" "+l.URI] = append(lines[l.Method+" "+l.URI], l.Status)
				}
			}
			answered := 3 // the arrival's GET and POST, the refused visitor's GET
			if level == slog.LevelInfo {
				answered = 0
			}
			place := placePath(a.EventID)
			if got := len(lines["GET "+place]) + count200(lines["POST "+place]); got != answered {
				t.Errorf("answered place calls logged: %d (%v), want %d", got, lines, answered)
			}
			if got := lines["POST "+place]; !contains(got, http.StatusForbidden) {
				t.Errorf("the refused place call: logged statuses %v, want its 403", got)
			}
			if got := lines["GET "+board]; len(got) != 1 {
				t.Errorf("the board: logged %v, want one line", got)
			}
		})
	}
}

func count200(statuses []int) int {
	n := 0
	for _, s := range statuses {
		if s == http.StatusOK {
			n++
		}
	}
	return n
}

func contains(statuses []int, want int) bool {
	for _, s := range statuses {
		if s == want {
			return true
		}
	}
	return false
}

// BenchmarkPlaceArrival is what the origin does for one arrival at the front door, in
// process, without a network or a client: the place call's GET (a CSRF token), then
// its POST (a signed place), through the program's whole handler and its middleware,
// logging as in production (JSON at info level, thrown away). Its allocations an
// arrival are the steady figure to compare; its time depends on the machine's load.
// bench arrive (cmd/bench) measures arrivals over HTTP against a minimal server.
func BenchmarkPlaceArrival(b *testing.B) {
	p := apptest.New(b, apptest.Options{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	roomOn(b, &testApp{Pool: p.Pool}, p.EventID, 2000, 128, time.Minute)
	if _, err := p.Pool.Exec(b.Context(), `UPDATE events SET onsale_at = now() + interval '1 hour' WHERE id = $1`, p.EventID); err != nil {
		b.Fatal(err)
	}
	path := placePath(p.EventID)
	for b.Loop() {
		get := httptest.NewRecorder()
		p.Handler.ServeHTTP(get, httptest.NewRequest(http.MethodGet, path, nil))
		ck := get.Result().Cookies()
		if get.Code != http.StatusOK || len(ck) != 1 {
			b.Fatalf("GET place: %d, cookies %v", get.Code, ck)
		}
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.Header.Set("X-CSRF-Token", ck[0].Value)
		req.AddCookie(ck[0])
		post := httptest.NewRecorder()
		p.Handler.ServeHTTP(post, req)
		if post.Code != http.StatusOK || !strings.Contains(post.Body.String(), `"placed":true`) {
			b.Fatalf("POST place: %d %s", post.Code, post.Body)
		}
	}
}

// TestPlaceClaimSentAgain: a claim's answer, and the new session's cookie with it, is
// lost on the way; the page sends the claim again with its Idempotency-Key and is
// admitted as the buyer the first claim made (its hold is that buyer's basket), in a
// session of its own. Sent again without the key (the negative control, as before
// keys), or by another buyer with a session of its own, the place and the key, it is
// refused as another visitor's.
func TestPlaceClaimSentAgain(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, frontQueue)
	roomOn(t, a, a.EventID, 10, 50, time.Minute)
	c, _ := arrival(t, a, a.EventID)
	runQueue(t, a)
	untilTurn(t, c, a.EventID)
	// The first claim goes out with the page's cookies; its answer reaches another jar.
	u, _ := url.Parse(a.URL + "/")
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(u, c.http.Jar.Cookies(u))
	lost := &client{t: t, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}, base: a.URL, csrf: c.csrf}
	key := http.Header{"Idempotency-Key": {"claim-key-1"}}
	if st, raw, _ := lost.raw("POST", claimPath(a.EventID), nil, key); st != http.StatusOK || !strings.Contains(string(raw), `"admitted":true`) {
		t.Fatalf("the first claim: got %d %s, want admitted", st, raw)
	}
	if st, raw, _ := c.raw("POST", claimPath(a.EventID), nil, nil); st != http.StatusConflict || !strings.Contains(string(raw), "place_claimed") {
		t.Errorf("sent again without the key: got %d %s, want 409 place_claimed", st, raw)
	}
	// Another buyer (a session that holds seats elsewhere) showing the place and the key.
	elsewhere := smallEvent(t, a.Pool, "claim-elsewhere")
	thief := a.newClient(t)
	thief.hold(elsewhere, firstSeats(t, a.Pool, elsewhere, 1)...)
	if st, raw, _ := thief.raw("POST", claimPath(a.EventID), nil, http.Header{"Idempotency-Key": {"claim-key-1"}, "X-Place-Token": {placeToken(t, c, a.EventID)}}); st != http.StatusConflict || !strings.Contains(string(raw), "place_claimed") {
		t.Errorf("another buyer with the place and the key: got %d %s, want 409 place_claimed", st, raw)
	}

	sessions := count(t, a.Pool, `SELECT count(*) FROM sessions`)
	var got web.PlaceJSON
	if st, raw, _ := c.raw("POST", claimPath(a.EventID), nil, key); st != http.StatusOK {
		t.Fatalf("sent again with the key: got %d %s, want 200", st, raw)
	} else if err := json.Unmarshal(raw, &got); err != nil || !got.Admitted || got.Token == "" {
		t.Fatalf("sent again with the key: got %s (%v), want admitted with a token", raw, err)
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM sessions`); n != sessions+1 {
		t.Errorf("sent again: sessions went from %d to %d, want one more (the page's own)", sessions, n)
	}
	seats := firstSeats(t, a.Pool, a.EventID, 2)
	first := lost.hold(a.EventID, seats[0])
	if second := c.hold(a.EventID, seats[1]); second.HoldID != first.HoldID {
		t.Errorf("the page's hold %s, the first claim's session's %s: want one buyer's basket", second.HoldID, first.HoldID)
	}
}
