package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/proof"
	"boxoffice/web"
)

// The proof of work in front of queue joins and a session's first hold: refused
// without, accepted once with, replay refused, and the pages' words without JavaScript.

// proofAsShipped asks for the proof at the default difficulty.
func proofAsShipped(o *appOptions) {
	if o.Env == nil {
		o.Env = map[string]string{}
	}
	o.Env["PROOF_OF_WORK"] = "on"
}

// proofOn asks for the proof, at an easy difficulty: these tests are about the rules,
// not the cost (the browser tests solve the default one).
func proofOn(o *appOptions) {
	proofAsShipped(o)
	o.Env["PROOF_OF_WORK_MAXNUMBER"] = "2000"
}

// solve fetches a challenge and solves it, as the page's widget does; it returns the
// payload for X-Altcha (or the form field altcha).
func (c *client) solve() string {
	c.t.Helper()
	var ch proof.Challenge
	if st := c.do("GET", "/api/v1/challenge", nil, &ch); st != http.StatusOK {
		c.t.Fatalf("GET /api/v1/challenge: got status %d, want 200", st)
	}
	p, err := proof.Solve(ch)
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

func withProof(p string) http.Header { return http.Header{"X-Altcha": {p}} }

// joinStatus joins the event's queue through the API with the given headers.
func joinStatus(c *client, eventID int64, header http.Header) (int, errorBody) {
	c.t.Helper()
	st, raw, _ := c.raw("POST", "/api/v1/events/"+itoa(eventID)+"/queue", nil, header)
	var e errorBody
	if st >= 400 {
		var err error
		if e, err = parseError(raw); err != nil {
			c.t.Fatal(err)
		}
	}
	return st, e
}

// TestProofJoin: a join without a solved challenge is refused and puts nobody in the
// queue; a solved one is accepted once; the same solution from another session is
// refused; and every join pays, even the same session's next. With the proof off
// (the negative control) the same unproved join goes through.
func TestProofJoin(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, proofOn)
	roomOn(t, a, a.EventID, 1, 1, time.Minute)
	c := a.newClient(t)
	for _, tc := range []struct {
		name   string
		header http.Header
		code   string
	}{
		{"no proof", nil, "proof_required"},
		{"not a proof", withProof("bm90IGEgcHJvb2Y="), "proof_invalid"},
	} {
		if st, e := joinStatus(c, a.EventID, tc.header); st != http.StatusForbidden || e.Error != tc.code {
			t.Errorf("join, %s: got %d %q, want 403 %s", tc.name, st, e.Error, tc.code)
		}
	}
	if q := c.queue("GET", a.EventID); q.Admitted || q.Position != 0 {
		t.Fatalf("after refused joins: got %+v, want nowhere in the queue", q)
	}

	p := c.solve()
	if st, e := joinStatus(c, a.EventID, withProof(p)); st != http.StatusOK {
		t.Fatalf("join with a solved challenge: got %d %q, want 200", st, e.Error)
	}
	if q := c.queue("GET", a.EventID); !q.Admitted && q.Position == 0 {
		t.Fatalf("after the join: got %+v, want a place or an admission", q)
	}
	other := a.newClient(t)
	st, e := joinStatus(other, a.EventID, withProof(p))
	if st != http.StatusForbidden || e.Error != "proof_invalid" || !strings.Contains(e.Message, "used already") {
		t.Errorf("the same solution again: got %d %q %q, want 403 proof_invalid, used already", st, e.Error, e.Message)
	}
	if st, e := joinStatus(c, a.EventID, nil); st != http.StatusForbidden || e.Error != "proof_required" {
		t.Errorf("the same session's next join without a proof: got %d %q, want 403 proof_required", st, e.Error)
	}

	off := newTestApp(t) // the negative control: the proof off
	roomOn(t, off, off.EventID, 1, 1, time.Minute)
	if st, e := joinStatus(off.newClient(t), off.EventID, nil); st != http.StatusOK {
		t.Fatalf("proof off, a join without one: got %d %q, want 200 (else this test cannot tell)", st, e.Error)
	}
}

// TestProofFirstHold: an anonymous session's first hold without a proof is refused and
// holds nothing; with one it holds, and the session's later holds need none; the spent
// solution does nothing for another session. A refusal is never kept as an
// Idempotency-Key's answer. With the proof off the unproved hold goes through.
func TestProofFirstHold(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, proofOn)
	seats := firstSeats(t, a.Pool, a.EventID, 5)
	c := a.newClient(t)
	if st, e, _ := holdStatus(c, a.EventID, seats[0], nil); st != http.StatusForbidden || e.Error != "proof_required" {
		t.Fatalf("first hold without a proof: got %d %q, want 403 proof_required", st, e.Error)
	}
	if !seatFree(t, a.Pool, a.EventID, seats[0]) {
		t.Fatal("a refused hold held the seat")
	}
	p := c.solve()
	if st, e, _ := holdStatus(c, a.EventID, seats[0], withProof(p)); st != http.StatusCreated {
		t.Fatalf("first hold with a proof: got %d %q, want 201", st, e.Error)
	}
	if st, e, _ := holdStatus(c, a.EventID, seats[1], nil); st != http.StatusCreated {
		t.Fatalf("the session's next hold, no proof: got %d %q, want 201", st, e.Error)
	}
	other := a.newClient(t)
	if st, e, _ := holdStatus(other, a.EventID, seats[2], withProof(p)); st != http.StatusForbidden || e.Error != "proof_invalid" {
		t.Fatalf("another session with the spent solution: got %d %q, want 403 proof_invalid", st, e.Error)
	}
	if !seatFree(t, a.Pool, a.EventID, seats[2]) {
		t.Fatal("the replayed solution held a seat")
	}

	key := http.Header{"Idempotency-Key": {"first-hold"}}
	if st, e, _ := holdStatus(other, a.EventID, seats[3], key); st != http.StatusForbidden || e.Error != "proof_required" {
		t.Fatalf("with a key, no proof: got %d %q, want 403 proof_required", st, e.Error)
	}
	key.Set("X-Altcha", other.solve())
	if st, e, _ := holdStatus(other, a.EventID, seats[3], key); st != http.StatusCreated {
		t.Fatalf("the same key, now with a proof: got %d %q, want 201 (the refusal was not kept)", st, e.Error)
	}

	off := newTestApp(t) // the negative control: the proof off
	if st, e, _ := holdStatus(off.newClient(t), off.EventID, seats[4], nil); st != http.StatusCreated {
		t.Fatalf("proof off, a first hold without one: got %d %q, want 201 (else this test cannot tell)", st, e.Error)
	}
}

// TestProofJoinProves: a session that proved by joining holds without another proof:
// a buyer solves one challenge in the usual visit.
func TestProofJoinProves(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, proofOn)
	roomOn(t, a, a.EventID, 10, 100, time.Minute)
	seat := firstSeats(t, a.Pool, a.EventID, 1)[0]
	c := a.newClient(t)
	if st, e := joinStatus(c, a.EventID, withProof(c.solve())); st != http.StatusOK {
		t.Fatalf("join: got %d %q, want 200", st, e.Error)
	}
	if q := c.queue("GET", a.EventID); !q.Admitted {
		t.Fatalf("with free slots: got %+v, want admitted", q)
	}
	if st, e, _ := holdStatus(c, a.EventID, seat, nil); st != http.StatusCreated {
		t.Fatalf("first hold after a proved join: got %d %q, want 201", st, e.Error)
	}
}

// TestProofChallenge: a challenge is fresh each time, never cached, and names its
// difficulty and expiry in ALTCHA's fields.
func TestProofChallenge(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, proofOn)
	c := a.newClient(t)
	var one, two proof.Challenge
	st, raw, h := c.raw("GET", "/api/v1/challenge", nil, nil)
	if st != http.StatusOK || !strings.Contains(h.Get("Cache-Control"), "no-store") {
		t.Fatalf("GET /api/v1/challenge: got %d, Cache-Control %q, want 200 no-store", st, h.Get("Cache-Control"))
	}
	if err := json.Unmarshal(raw, &one); err != nil {
		t.Fatal(err)
	}
	c.do("GET", "/api/v1/challenge", nil, &two)
	if one.Challenge == two.Challenge || one.Salt == two.Salt {
		t.Errorf("two challenges alike: %+v and %+v", one, two)
	}
	if one.Algorithm != "SHA-256" || one.MaxNumber != 2000 || !strings.Contains(one.Salt, "?expires=") || len(one.Signature) != 64 {
		t.Errorf("challenge %+v: want SHA-256, maxnumber 2000, the expiry in the salt, a signature", one)
	}
}

// TestProofSeatPage: the seat page asks a session that has yet to prove, and says what
// to do without JavaScript; the no-JS form without a proof is refused in those words
// and holds nothing; with the widget's field it holds, and the page asks no more.
func TestProofSeatPage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, proofOn)
	seat := firstSeats(t, a.Pool, a.EventID, 1)[0]
	b := a.newBrowser(t)
	doc, token := b.page("/events/" + demoSlug + "/seats")
	box := doc.Find("[data-proof]")
	web.CheckAttrs(t, "proof box", box, map[string]string{"data-proof-challenge": "/api/v1/challenge", "data-proof-worker": web.ProofWorker, "data-proof-module": web.ProofModule})
	if got := box.Find("noscript").Text(); !strings.Contains(got, "Holding seats needs JavaScript") {
		t.Errorf("the box without script: got %q, want what to do", got)
	}
	if doc.Find(`script[src="`+web.ProofScript+`"]`).Length() != 1 {
		t.Error("the seat page does not load proof.js")
	}

	form := url.Values{"_csrf": {token}, "seat": {itoa(seat)}}
	st, body, _ := b.do("POST", "/events/"+demoSlug+"/holds", form, nil)
	if st != http.StatusForbidden || !strings.Contains(parseHTML(t, body).Find("#seat-message").Text(), "Holding seats needs JavaScript") {
		t.Fatalf("no-JS hold without a proof: got %d %q, want 403 saying JavaScript is needed", st, parseHTML(t, body).Find("#seat-message").Text())
	}
	if !seatFree(t, a.Pool, a.EventID, seat) {
		t.Fatal("a refused form held the seat")
	}
	form.Set("altcha", (&client{t: t, http: b.http, base: a.URL}).solve())
	if st, _, _ := b.do("POST", "/events/"+demoSlug+"/holds", form, nil); st != http.StatusSeeOther {
		t.Fatalf("form with the widget's field: got %d, want 303", st)
	}
	if seatFree(t, a.Pool, a.EventID, seat) {
		t.Fatal("the proved form held nothing")
	}
	if doc, _ := b.page("/events/" + demoSlug + "/seats"); doc.Find("[data-proof]").Length() != 0 {
		t.Error("after the first hold the page still asks for a proof")
	}
}

// TestProofQueuePage: the queue page never joins by itself while joins need a proof: a
// visitor who stands nowhere gets the join form with the proof box (and no reload
// every few seconds); the form without a proof is refused in words with the way back;
// with the widget's field it joins, and the page then shows the place.
func TestProofQueuePage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, proofOn)
	roomOn(t, a, a.EventID, 1, 1, time.Minute)
	holder := a.newClient(t) // takes the one slot, so that the browser waits
	if st, _ := joinStatus(holder, a.EventID, withProof(holder.solve())); st != http.StatusOK {
		t.Fatalf("holder's join: got %d, want 200", st)
	}
	b := a.newBrowser(t)
	path := "/events/" + demoSlug + "/queue"
	st, body, _ := b.do("GET", path, nil, nil)
	doc := parseHTML(t, body)
	join := doc.Find("#queue form[data-proof-submit]")
	if st != http.StatusOK || join.Length() != 1 || join.Find("[data-proof]").Length() != 1 || doc.Find("[data-poll-after]").Length() != 0 {
		t.Fatalf("queue page before joining: got %d, join form %d, want 200 and the join form instead of a status", st, join.Length())
	}
	if doc.Find(`meta[http-equiv="refresh"]`).Length() != 0 || strings.Contains(string(body), `http-equiv="refresh"`) {
		t.Error("the join form reloads itself, want it left alone")
	}
	if got := join.Find("noscript").Text(); !strings.Contains(got, "Joining the queue needs JavaScript") {
		t.Errorf("the join form without script: got %q, want what to do", got)
	}
	token, _ := join.Find(`input[name="_csrf"]`).Attr("value")

	form := url.Values{"_csrf": {token}}
	st, body, _ = b.do("POST", path, form, nil)
	refused := parseHTML(t, body)
	if back, _ := refused.Find(`a[href="` + path + `"]`).Attr("href"); st != http.StatusForbidden || !strings.Contains(refused.Text(), "Joining the queue needs JavaScript") || back != path {
		t.Fatalf("join form without a proof: got %d, want 403 saying JavaScript is needed, with a link back", st)
	}
	if h := refused.Find("h1").Text(); h != "One quick step first" {
		t.Errorf("refused join's heading: got %q, want One quick step first", h)
	}
	form.Set("altcha", (&client{t: t, http: b.http, base: a.URL}).solve())
	if st, _, h := b.do("POST", path, form, nil); st != http.StatusSeeOther || h.Get("Location") != path {
		t.Fatalf("join form with the widget's field: got %d to %q, want 303 to the queue page", st, h.Get("Location"))
	}
	_, body, _ = b.do("GET", path, nil, nil)
	if doc = parseHTML(t, body); doc.Find("[data-proof]").Length() != 0 || !strings.Contains(doc.Find("#queue h2").Text(), "number 1") {
		t.Fatalf("after joining: got %q, want the place and no join form", doc.Find("#queue h2").Text())
	}
}

// TestProofRedisAway: with Redis away, proofs still count, once each on this instance
// (its own memory of spent solutions decides): a new session's first hold goes
// through, a proved session holds without one, and the same proof from another session
// is refused, then and after Redis is back.
func TestProofRedisAway(t *testing.T) {
	t.Parallel()
	proxy, viaProxy := redisProxy(t)
	a := newTestApp(t, viaProxy, proofOn)
	seats := firstSeats(t, a.Pool, a.EventID, 4)
	proved, late, replay := a.newClient(t), a.newClient(t), a.newClient(t)
	if st, e, _ := holdStatus(proved, a.EventID, seats[0], withProof(proved.solve())); st != http.StatusCreated {
		t.Fatalf("first hold with Redis up: got %d %q, want 201", st, e.Error)
	}
	p := late.solve()
	proxy.Down()
	if st, e, _ := holdStatus(late, a.EventID, seats[1], withProof(p)); st != http.StatusCreated {
		t.Errorf("first hold with Redis away: got %d %q, want 201", st, e.Error)
	}
	if st, e, _ := holdStatus(proved, a.EventID, seats[2], nil); st != http.StatusCreated {
		t.Errorf("a proved session with Redis away: got %d %q, want 201", st, e.Error)
	}
	if st, e, _ := holdStatus(replay, a.EventID, seats[3], withProof(p)); st != http.StatusForbidden || e.Error != "proof_invalid" {
		t.Errorf("the same proof from another session, Redis away: got %d %q, want 403 proof_invalid", st, e.Error)
	}
	proxy.Up()
	if st, e, _ := holdStatus(replay, a.EventID, seats[3], withProof(p)); st != http.StatusForbidden || e.Error != "proof_invalid" {
		t.Errorf("the same proof from another session, Redis back: got %d %q, want 403 proof_invalid", st, e.Error)
	}
	if !seatFree(t, a.Pool, a.EventID, seats[3]) {
		t.Error("a hold refused for a spent proof held the seat")
	}
}
