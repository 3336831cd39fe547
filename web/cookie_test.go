package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/demo"
	"boxoffice/internal/session"
	"boxoffice/internal/staff"
	"boxoffice/web"
)

// withCookieModes runs test on an app with secure cookies and on one without, in
// parallel.
func withCookieModes(t *testing.T, test func(t *testing.T, a *testApp, secure bool)) {
	for _, secure := range []bool{true, false} {
		t.Run("secure="+strconv.FormatBool(secure), func(t *testing.T) {
			t.Parallel()
			test(t, newTestApp(t, func(o *appOptions) { o.Env = map[string]string{"COOKIE_SECURE": strconv.FormatBool(secure)} }), secure)
		})
	}
}

// setCookies reads the cookies an answer sets, by name.
func setCookies(h http.Header) map[string]*http.Cookie {
	out := map[string]*http.Cookie{}
	for _, ck := range (&http.Response{Header: h}).Cookies() {
		out[ck.Name] = ck
	}
	return out
}

// rawRequest sends one request with exactly these headers, no cookie jar, and returns
// the status, body and headers.
func rawRequest(t *testing.T, method, url, body string, header http.Header) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// TestHostCookies: with COOKIE_SECURE the buyer's session, the CSRF cookie, the
// staff session and the staff's known-device cookie go by __Host- names, Secure,
// Path=/ and without a Domain, as browsers require of the prefix; the server then
// reads them by those names (a hold and an admin page work with them). Over plain
// HTTP they keep their plain names and the staff cookies stay on /admin and
// /admin/login.
func TestHostCookies(t *testing.T) {
	t.Parallel()
	withCookieModes(t, func(t *testing.T, a *testApp, secure bool) {
		check := func(ck *http.Cookie, name, path string) {
			t.Helper()
			switch {
			case ck == nil:
				t.Errorf("cookie %s: not set", name)
			case ck.Secure != secure || ck.Path != path || ck.Domain != "" || !ck.HttpOnly || ck.Value == "":
				t.Errorf("cookie %s: got %q, want Secure=%v, Path=%s, no Domain, HttpOnly", name, ck.Raw, secure, path)
			}
		}
		buyer, csrf, staffName, staffPath := session.BuyerCookie, web.CSRFCookie, session.StaffCookie, "/admin"
		if secure {
			buyer, csrf, staffName, staffPath = "__Host-"+buyer, "__Host-"+csrf, "__Host-"+staffName, "/"
		}

		st, raw, h := rawRequest(t, "GET", a.URL+"/api/v1/session", "", nil)
		var s web.SessionJSON
		if st != http.StatusOK || json.Unmarshal(raw, &s) != nil {
			t.Fatalf("session: got %d %s", st, truncate(raw))
		}
		got := setCookies(h)
		if got[buyer] == nil || got[csrf] == nil {
			t.Fatalf("session: got Set-Cookie %v, want %s and %s", h.Values("Set-Cookie"), buyer, csrf)
		}
		check(got[buyer], buyer, "/")
		check(got[csrf], csrf, "/")
		cookies := buyer + "=" + got[buyer].Value + "; " + csrf + "=" + got[csrf].Value
		hold := `{"seatIds": [` + itoa(firstSeats(t, a.Pool, a.EventID, 1)[0]) + `]}`
		st, raw, _ = rawRequest(t, "POST", a.URL+"/api/v1/events/"+itoa(a.EventID)+"/holds", hold,
			http.Header{"Cookie": {cookies}, "X-Csrf-Token": {s.CSRFToken}, "Content-Type": {"application/json"}})
		if st != http.StatusCreated {
			t.Errorf("hold with the cookies by their names: got %d %s, want 201", st, truncate(raw))
		}

		m := a.addStaff(t, staff.Admin, "Ada Admin")
		form := url.Values{"email": {m.Email}, "password": {staffPassword}}.Encode()
		st, _, h = rawRequest(t, "POST", a.URL+"/admin/login", form,
			http.Header{"Sec-Fetch-Site": {"same-origin"}, "Content-Type": {"application/x-www-form-urlencoded"}})
		ck := setCookies(h)[staffName]
		if st != http.StatusSeeOther || ck == nil {
			t.Fatalf("login: got %d setting %v, want 303 and the staff cookie %s", st, h.Values("Set-Cookie"), staffName)
		}
		check(ck, staffName, staffPath)
		device, devicePath := session.CookieName(web.DeviceCookie, secure), "/admin/login"
		if secure {
			devicePath = "/"
		}
		check(setCookies(h)[device], device, devicePath)
		if st, _, _ := rawRequest(t, "GET", a.URL+"/admin", "", http.Header{"Cookie": {staffName + "=" + ck.Value}}); st != http.StatusOK {
			t.Errorf("admin page with the staff cookie: got %d, want 200", st)
		}
	})
}

// TestSessionRenewedAtOrder: a session token planted in a buyer's browser before the
// checkout no longer reaches the order afterwards: the checkout sends a new token
// with the session's data (the order is the buyer's under it), for the API called
// from a browser and for the checkout page. A script without fetch metadata keeps
// its token, so that a repeat of a lost answer (Idempotency-Key) still finds it.
func TestSessionRenewedAtOrder(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	order := func(token string, id int64) int {
		t.Helper()
		st, _, _ := rawRequest(t, "GET", a.URL+"/api/v1/orders/"+itoa(id), "", http.Header{"Cookie": {session.BuyerCookie + "=" + token}})
		return st
	}
	// planted is a victim whose browser carries the attacker's session token.
	planted := func() (victim *client, token string) {
		attacker := a.newClient(t)
		token = attacker.sessionToken()
		victim = a.newClient(t)
		victim.http.Jar.SetCookies(mustURL(a.URL), []*http.Cookie{{Name: session.BuyerCookie, Value: token, Path: "/"}})
		return victim, token
	}

	victim, token := planted()
	h := victim.hold(a.EventID, seats[0])
	var co web.CheckoutAnswerJSON
	st, raw, hdr := victim.raw("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "ada@example.com"},
		http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if st != http.StatusCreated || json.Unmarshal(raw, &co) != nil {
		t.Fatalf("checkout: got %d %s, want 201", st, truncate(raw))
	}
	renewed := setCookies(hdr)[session.BuyerCookie]
	if renewed == nil || renewed.Value == token || victim.sessionToken() != renewed.Value {
		t.Fatalf("API checkout from a browser: got Set-Cookie %v, want a new session token", hdr.Values("Set-Cookie"))
	}
	if st := order(renewed.Value, co.OrderID); st != http.StatusOK {
		t.Errorf("the order by the new token: got %d, want 200", st)
	}
	if st := order(token, co.OrderID); st != http.StatusNotFound {
		t.Errorf("the order by the planted token: got %d, want 404", st)
	}

	victim, token = planted()
	h = victim.hold(a.EventID, seats[1])
	action, form := checkoutFormOf(t, victim.page("/holds/"+h.HoldID+"/checkout", false))
	form.Set("email", "ada@example.com")
	form.Set("card", "4242 4242 4242 4242")
	p := victim.postForm(action, form, false)
	id, _ := strconv.ParseInt(strings.TrimPrefix(p.header.Get("Location"), "/orders/"), 10, 64)
	if p.status != http.StatusSeeOther || id == 0 {
		t.Fatalf("checkout page: got %d to %q, want 303 to the order", p.status, p.header.Get("Location"))
	}
	if now := victim.sessionToken(); now == token || order(now, id) != http.StatusOK {
		t.Errorf("checkout page: the session token is %q (planted %q), want a new one that reaches the order", now, token)
	}
	if st := order(token, id); st != http.StatusNotFound {
		t.Errorf("the page's order by the planted token: got %d, want 404", st)
	}

	script := a.newClient(t)
	before := script.sessionToken()
	h = script.hold(a.EventID, seats[2])
	key := http.Header{"Idempotency-Key": {"checkout-" + h.HoldID}}
	body := map[string]string{"email": "ada@example.com"}
	first, raw1, _ := script.raw("POST", "/api/v1/holds/"+h.HoldID+"/checkout", body, key)
	again, raw2, hdr := script.raw("POST", "/api/v1/holds/"+h.HoldID+"/checkout", body, key)
	if first != http.StatusCreated || again != first || string(raw1) != string(raw2) || hdr.Get(web.ReplayedHeader) != "true" {
		t.Errorf("a script's checkout and its repeat: got %d then %d (replayed %q), want 201 twice, the same answer", first, again, hdr.Get(web.ReplayedHeader))
	}
	if script.sessionToken() != before {
		t.Errorf("a script's session token changed at checkout; want it kept")
	}
}

// sessionToken is the client's buyer session token in its cookie jar.
func (c *client) sessionToken() string {
	for _, ck := range c.http.Jar.Cookies(mustURL(c.base)) {
		if ck.Name == session.BuyerCookie {
			return ck.Value
		}
	}
	return ""
}

// TestSameSiteCSRF: a state-changing request a browser marks same-site (a sibling
// subdomain, another port) is never let through on its fetch metadata: it needs the
// token, checked against the CSRF cookie, for the API and for page forms; same-origin
// is let through on its metadata alone. With secure cookies a same-site page cannot
// plant the cookie to match its own token (cookie tossing): the server reads only the
// __Host- cookie, which a browser takes from this host alone. The same planted cookie
// against plain cookie names gets through (the negative control).
func TestSameSiteCSRF(t *testing.T) {
	t.Parallel()
	withCookieModes(t, func(t *testing.T, a *testApp, secure bool) {
		seats := firstSeats(t, a.Pool, a.EventID, 4)
		_, raw, h := rawRequest(t, "GET", a.URL+"/api/v1/session", "", nil)
		var s web.SessionJSON
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		csrf := session.CookieName(web.CSRFCookie, secure)
		ours := csrf + "=" + setCookies(h)[csrf].Value
		planted := web.CSRFCookie + "=tossed-by-a-sibling-site-0123456789"
		apiHold := func(seat int64, site, cookie, token string) int {
			t.Helper()
			hdr := http.Header{"Sec-Fetch-Site": {site}, "Content-Type": {"application/json"}, "Cookie": {cookie}}
			if token != "" {
				hdr.Set(web.CSRFHeader, token)
			}
			st, _, _ := rawRequest(t, "POST", a.URL+"/api/v1/events/"+itoa(a.EventID)+"/holds", `{"seatIds": [`+itoa(seat)+`]}`, hdr)
			return st
		}
		formHold := func(seat int64, site, cookie, token string) int {
			t.Helper()
			form := url.Values{"seat": {itoa(seat)}}
			if token != "" {
				form.Set(web.CSRFForm, token)
			}
			hdr := http.Header{"Sec-Fetch-Site": {site}, "Content-Type": {"application/x-www-form-urlencoded"}, "Cookie": {cookie}}
			st, _, _ := rawRequest(t, "POST", a.URL+"/events/"+demo.DemoSpec(time.Now()).Slug+"/holds", form.Encode(), hdr)
			return st
		}
		for _, hold := range []struct {
			name string
			send func(seat int64, site, cookie, token string) int
		}{{"API", apiHold}, {"form", formHold}} {
			if st := hold.send(seats[0], "same-site", ours, ""); st != http.StatusForbidden {
				t.Errorf("%s, same-site without a token: got %d, want 403", hold.name, st)
			}
			if st := hold.send(seats[0], "same-site", ours, "wrong"+s.CSRFToken); st != http.StatusForbidden {
				t.Errorf("%s, same-site with a wrong token: got %d, want 403", hold.name, st)
			}
		}
		if st := apiHold(seats[0], "same-site", ours, s.CSRFToken); st != http.StatusCreated {
			t.Errorf("same-site with the token: got %d, want 201", st)
		}
		if st := formHold(seats[1], "same-origin", "", ""); st != http.StatusSeeOther {
			t.Errorf("same-origin form without a token: got %d, want 303", st)
		}
		want := http.StatusForbidden
		if !secure {
			want = http.StatusCreated // the plain cookie name is what lets it through
		}
		if st := apiHold(seats[2], "same-site", planted, "tossed-by-a-sibling-site-0123456789"); st != want {
			t.Errorf("same-site with a planted %s cookie and its token: got %d, want %d", web.CSRFCookie, st, want)
		}
	})
}
