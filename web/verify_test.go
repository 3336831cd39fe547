package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/mail"
	"boxoffice/internal/mail/mailtest"
	"boxoffice/internal/session"
	"boxoffice/internal/staff"
	"boxoffice/web"
)

// Verified buyers through HTTP: registering, the link by email (mailpit), one place in
// the queue and one buyer limit per confirmed address, and the box office's counts.

// verifiedOnly makes the event an onsale for verified buyers, as an organiser would.
// Call it before the first request about the event: the server keeps events' settings
// for a second.
func verifiedOnly(t testing.TB, a *testApp, eventID int64) {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE events SET verified_only = true WHERE id = $1`, eventID); err != nil {
		t.Fatal(err)
	}
}

// newMailApp is a test app whose email reaches mailpit, with its job queue running.
func newMailApp(t *testing.T, opts ...func(*appOptions)) (*testApp, *mailtest.Catcher) {
	t.Helper()
	a := newTestApp(t, append(opts, func(o *appOptions) { o.Mail = true })...)
	a.App.RunJobs(t)
	return a, mailtest.New(t)
}

var linkToken = regexp.MustCompile(`/verify\?token=([A-Za-z0-9_-]+)`)

// linkIn waits until n emails reached addr and returns the token of the newest's link.
func linkIn(t testing.TB, catcher *mailtest.Catcher, addr string, n int) string {
	t.Helper()
	list := catcher.Wait(t, addr, n)
	msg, err := catcher.Message(t.Context(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	m := linkToken.FindStringSubmatch(msg.Text)
	if m == nil {
		t.Fatalf("no link in the email to %s: %q", addr, msg.Text)
	}
	return m[1]
}

// registerEmail registers addr for the event through the API, or stops the test.
func (c *client) registerEmail(eventID int64, addr string) {
	c.t.Helper()
	if st := c.do("POST", "/api/v1/events/"+itoa(eventID)+"/verification", map[string]string{"email": addr}, nil); st != http.StatusAccepted {
		c.t.Fatalf("register %s: got status %d, want 202", addr, st)
	}
}

// verifyEmail registers addr and confirms it in c's session with the link that n-th
// email to addr carries.
func (c *client) verifyEmail(catcher *mailtest.Catcher, eventID int64, addr string, n int) {
	c.t.Helper()
	c.registerEmail(eventID, addr)
	tok := linkIn(c.t, catcher, addr, n)
	var out web.ConfirmedJSON
	if st := c.do("POST", "/api/v1/verification/confirm", map[string]string{"token": tok}, &out); st != http.StatusOK || out.EventID != eventID {
		c.t.Fatalf("confirm %s: got %d %+v, want 200 for event %d", addr, st, out, eventID)
	}
}

// linkGapPassed makes the next registration of every address send a link at once,
// as a minute later it would.
func linkGapPassed(t testing.TB, a *testApp) {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE email_registrations SET last_link_at = now() - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
}

// TestVerifiedOnePlacePerEmail: two sessions that confirmed one address are one buyer
// with one place: both are admitted to the one slot, and another confirmed address
// then waits behind it. A session with an address registered but not confirmed, or
// none, cannot join or hold. The control, two sessions of an event that does not ask
// for verified buyers, takes two places (one admitted, one waiting).
func TestVerifiedOnePlacePerEmail(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	control := smallEvent(t, a.Pool, "unverified")
	verifiedOnly(t, a, a.EventID)
	roomOn(t, a, a.EventID, 1, 100, time.Minute)
	roomOn(t, a, control, 1, 100, time.Minute)
	addr := mailtest.Address(t)
	first, second := a.newClient(t), a.newClient(t)
	first.verifyEmail(catcher, a.EventID, addr, 1)
	linkGapPassed(t, a)
	second.verifyEmail(catcher, a.EventID, addr, 2)
	if v1, v2 := visitorOf(t, a, first), visitorOf(t, a, second); v1 != v2 {
		t.Errorf("two sessions of one address: got buyers %q and %q, want one", v1, v2)
	}
	if q := first.queue("POST", a.EventID); !q.Admitted {
		t.Fatalf("first session: got %+v, want admitted", q)
	}
	if q := second.queue("POST", a.EventID); !q.Admitted {
		t.Errorf("second session of the same address: got %+v, want the same admission", q)
	}
	if n, err := a.App.Queue.Counts(t.Context(), a.EventID); err != nil || n.Active != 1 || n.Waiting != 0 {
		t.Errorf("room after two sessions of one address joined: got %+v, %v; want 1 admitted, none waiting", n, err)
	}
	other := a.newClient(t)
	other.verifyEmail(catcher, a.EventID, mailtest.Address(t), 1)
	if q := other.queue("POST", a.EventID); q.Admitted || q.Position != 1 {
		t.Errorf("another confirmed address: got %+v, want waiting first behind the one place", q)
	}

	pending, stranger := a.newClient(t), a.newClient(t)
	pending.registerEmail(a.EventID, mailtest.Address(t))
	seat := firstSeats(t, a.Pool, a.EventID, 1)[0]
	for name, c := range map[string]*client{"registered, not confirmed": pending, "never registered": stranger} {
		var e errorBody
		if st := c.do("POST", "/api/v1/events/"+itoa(a.EventID)+"/queue", nil, &e); st != http.StatusForbidden || e.Error != "email_not_verified" {
			t.Errorf("%s: join got %d %q, want 403 email_not_verified", name, st, e.Error)
		}
		if st, e, _ := holdStatus(c, a.EventID, seat, nil); st != http.StatusForbidden || e.Error != "email_not_verified" {
			t.Errorf("%s: hold got %d %q, want 403 email_not_verified", name, st, e.Error)
		}
	}

	c1, c2 := a.newClient(t), a.newClient(t)
	if q := c1.queue("POST", control); !q.Admitted {
		t.Fatalf("control, first session: got %+v, want admitted", q)
	}
	if q := c2.queue("POST", control); q.Admitted || q.Position != 1 {
		t.Errorf("control, second session: got %+v, want a place of its own, waiting", q)
	}
}

// TestVerifiedLimitPerEmail: the per-buyer limit (4 here) counts the holds of every
// session of a confirmed address together: a second session may add only what the
// first left. The hold belongs to the address, so the second session sees it, and a
// session of another address does not. The control, two sessions of an event that
// does not ask for verified buyers, holds past the limit between them.
func TestVerifiedLimitPerEmail(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t, func(o *appOptions) { o.Env = map[string]string{"MAX_SEATS_PER_BUYER": "4"} })
	control := smallEvent(t, a.Pool, "unverified")
	verifiedOnly(t, a, a.EventID)
	first, second, other := threeBuyers(t, a, catcher)
	seats := firstSeats(t, a.Pool, a.EventID, 8)

	h := first.hold(a.EventID, seats[0], seats[1], seats[2])
	var e errorBody
	if st := second.do("POST", "/api/v1/events/"+itoa(a.EventID)+"/holds", map[string]any{"seatIds": seats[3:5]}, &e); st != http.StatusConflict || e.Error != "limit_exceeded" {
		t.Errorf("second session, 2 more of the address's 4: got %d %q, want 409 limit_exceeded", st, e.Error)
	}
	second.hold(a.EventID, seats[3]) // the fourth fits
	other.hold(a.EventID, seats[5], seats[6])
	if st := second.do("GET", "/api/v1/holds/"+h.HoldID, nil, nil); st != http.StatusOK {
		t.Errorf("the address's hold from its second session: got %d, want 200", st)
	}
	if st := other.do("GET", "/api/v1/holds/"+h.HoldID, nil, nil); st != http.StatusNotFound {
		t.Errorf("the address's hold from another address's session: got %d, want 404", st)
	}

	cs := firstSeats(t, a.Pool, control, 6)
	c1, c2 := a.newClient(t), a.newClient(t)
	c1.hold(control, cs[:3]...)
	if st := c2.do("POST", "/api/v1/events/"+itoa(control)+"/holds", map[string]any{"seatIds": cs[3:6]}, nil); st != http.StatusCreated {
		t.Errorf("control, a second session past 4 between them: got %d, want 201", st)
	}
}

// TestVerifyLink: the pages' way through (the seat page sends an unverified browser to
// the registration form; the email's link opens a page whose button confirms; the
// browser then reaches the seats with a new session cookie); the link works once, a
// link with a character changed is refused, and registering an address answers the
// same whether it is new or confirmed already.
func TestVerifyLink(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	verifiedOnly(t, a, a.EventID)
	c := a.newClient(t)
	register := "/events/" + demoSlug + "/verify"
	if p := c.page("/events/"+demoSlug+"/seats", false); p.status != http.StatusSeeOther || p.header.Get("Location") != register {
		t.Fatalf("seat page before verifying: got %d to %q, want 303 to %s", p.status, p.header.Get("Location"), register)
	}
	addr := mailtest.Address(t)
	p := c.postForm(register, url.Values{"email": {addr}, "_csrf": {c.csrf}}, false)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Check your email") {
		t.Fatalf("registration form: got %d, want 200 saying to check the email", p.status)
	}
	tok := linkIn(t, catcher, addr, 1)
	landing := c.page("/verify?token="+tok, false)
	action, _ := landing.doc.Find("form").Attr("action")
	if landing.status != http.StatusOK || action != "/verify" {
		t.Fatalf("the link's page: got %d with a form to %q, want 200 with a form to /verify", landing.status, action)
	}
	before := sessionCookie(t, a, c)
	confirmed := c.postForm("/verify", url.Values{"token": {tok}, "_csrf": {c.csrf}}, false)
	if confirmed.status != http.StatusSeeOther || confirmed.header.Get("Location") != "/events/"+demoSlug+"/seats" {
		t.Fatalf("confirming: got %d to %q, want 303 to the seats", confirmed.status, confirmed.header.Get("Location"))
	}
	if after := sessionCookie(t, a, c); after == before || after == "" {
		t.Error("confirming: the session token stayed the same, want a new one")
	}
	if p := c.page("/events/"+demoSlug+"/seats", false); p.status != http.StatusOK {
		t.Errorf("seat page once verified: got %d, want 200", p.status)
	}

	var e errorBody
	if st := a.newClient(t).do("POST", "/api/v1/verification/confirm", map[string]string{"token": tok}, &e); st != http.StatusGone || e.Error != "link_expired" {
		t.Errorf("the link a second time: got %d %q, want 410 link_expired", st, e.Error)
	}
	forged := []byte(tok)
	forged[len(forged)/2] ^= 1
	if p := c.page("/verify?token="+string(forged), false); p.status != http.StatusBadRequest {
		t.Errorf("the page of a forged link: got %d, want 400", p.status)
	}
	if st := a.newClient(t).do("POST", "/api/v1/verification/confirm", map[string]string{"token": string(forged)}, &e); st != http.StatusBadRequest || e.Error != "invalid_link" {
		t.Errorf("confirming a forged link: got %d %q, want 400 invalid_link", st, e.Error)
	}

	newcomer := a.newClient(t)
	stFresh, fresh, _ := newcomer.raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/verification", map[string]string{"email": mailtest.Address(t)}, nil)
	stKnown, known, _ := newcomer.raw("POST", "/api/v1/events/"+itoa(a.EventID)+"/verification", map[string]string{"email": strings.ToUpper(addr)}, nil)
	if stFresh != http.StatusAccepted || stFresh != stKnown || string(fresh) != string(known) {
		t.Errorf("registering a new and a confirmed address: got %d %s and %d %s, want the same 202", stFresh, fresh, stKnown, known)
	}
}

// sessionCookie is the client's buyer session token ("" without one).
func sessionCookie(_ testing.TB, a *testApp, c *client) string {
	u, _ := url.Parse(a.URL)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == session.BuyerCookie {
			return ck.Value
		}
	}
	return ""
}

// TestVerifyRegisterLimit: one address registers at most registerLimit addresses an
// hour, then gets 429 with Retry-After; a neighbour at another address still
// registers (the limit is the address's, not everyone's).
func TestVerifyRegisterLimit(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	verifiedOnly(t, a, a.EventID)
	c := a.newClient(t)
	path := "/api/v1/events/" + itoa(a.EventID) + "/verification"
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	for i := range web.RegisterLimit.Burst {
		if st, raw, _ := c.raw("POST", path, map[string]string{"email": "limit" + itoa(int64(i)) + "@boxoffice.test"}, from("203.0.113.7")); st != http.StatusAccepted {
			t.Fatalf("registration %d: got %d %s, want 202", i+1, st, raw)
		}
	}
	st, raw, h := c.raw("POST", path, map[string]string{"email": "one-more@boxoffice.test"}, from("203.0.113.7"))
	if e, _ := parseError(raw); st != http.StatusTooManyRequests || e.Error != "rate_limited" || h.Get("Retry-After") == "" {
		t.Errorf("one registration past the limit: got %d %q, Retry-After %q; want 429 rate_limited with Retry-After", st, e.Error, h.Get("Retry-After"))
	}
	if st, raw, _ := c.raw("POST", path, map[string]string{"email": "neighbour@boxoffice.test"}, from("203.0.113.8")); st != http.StatusAccepted {
		t.Errorf("another address: got %d %s, want 202", st, raw)
	}
	if st, raw, _ := c.raw("POST", path, map[string]string{"email": "not an address"}, from("203.0.113.9")); st != http.StatusBadRequest {
		t.Errorf("no address: got %d %s, want 400", st, raw)
	}
}

// TestVerifiedCountsForBoxOffice: the event's admin page (admins) and its control room
// (the box office) say how many addresses registered and how many confirmed.
func TestVerifiedCountsForBoxOffice(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	verifiedOnly(t, a, a.EventID)
	buyer := a.newClient(t)
	buyer.registerEmail(a.EventID, "one@boxoffice.test")
	buyer.registerEmail(a.EventID, "two@boxoffice.test")
	var emailID int64
	if err := a.Pool.QueryRow(t.Context(), `SELECT id FROM buyer_emails WHERE email = 'two@boxoffice.test'`).Scan(&emailID); err != nil {
		t.Fatal(err)
	}
	msg, err := a.App.Verify.LinkMail(t.Context(), a.EventID, emailID, mail.Site{BaseURL: a.URL})
	if err != nil {
		t.Fatal(err)
	}
	m := linkToken.FindStringSubmatch(msg.Text)
	if m == nil {
		t.Fatalf("no link in %q", msg.Text)
	}
	if st := buyer.do("POST", "/api/v1/verification/confirm", map[string]string{"token": m[1]}, nil); st != http.StatusOK {
		t.Fatalf("confirm: got %d, want 200", st)
	}
	admin, _ := a.staffClient(t, staff.Admin)
	p := admin.page("/admin/events/"+itoa(a.EventID), false)
	if got := strings.TrimSpace(p.doc.Find("#event-verified-counts").Text()); p.status != http.StatusOK || got != "Verified buyers: 2 registered, 1 confirmed." {
		t.Errorf("admin event page: got %d %q, want 200 saying 2 registered, 1 confirmed", p.status, got)
	}
	boxOffice, _ := a.staffClient(t, staff.BoxOffice)
	ctl := boxOffice.page("/admin/events/"+itoa(a.EventID)+"/control", false)
	tile := ctl.doc.Find(".tile").FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.Contains(s.Find("dt").Text(), "Verified buyers")
	})
	if got := strings.Join(strings.Fields(tile.Find("dd").Text()), " "); ctl.status != http.StatusOK || got != "1 confirmed of 2 registered" {
		t.Errorf("control room: got %d, tile %q; want 200 with 1 confirmed of 2 registered", ctl.status, got)
	}
}
