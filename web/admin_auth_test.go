package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"boxoffice/internal/staff"
	"boxoffice/web"
)

// adminRouteTable lists every /admin route of the router with the roles the routes
// table gives it, and fails the test for a route outside both the table and
// adminOpen: a route registered any other way would have no role check.
func adminRouteTable(t *testing.T, a *testApp) []web.AdminRoute {
	t.Helper()
	e, ok := a.App.Handler.(*echo.Echo)
	if !ok {
		t.Fatal("the handler is no longer an *echo.Echo: update this test")
	}
	table, open := web.AdminRoutes()
	var out []web.AdminRoute
	for _, r := range e.Routes() {
		if r.Path != "/admin" && !strings.HasPrefix(r.Path, "/admin/") {
			continue
		}
		key := r.Method + " " + r.Path
		if open[key] {
			continue
		}
		tr, ok := table[key]
		if !ok {
			t.Errorf("%s is routed outside the admin routes table: it has no role check", key)
			continue
		}
		out = append(out, tr)
	}
	if len(out) == 0 {
		t.Fatal("no admin routes found")
	}
	return out
}

// concrete fills a route's parameters with an id that names nothing.
var routeParam = regexp.MustCompile(`:[A-Za-z]+|\*`)

func concrete(path string) string { return routeParam.ReplaceAllString(path, "999999") }

// TestAdminAuthorisation walks every admin route as no one, as a buyer, and as each
// role: without a staff session a page sends the browser to the login form and any
// other request is 401; a role the route does not list gets 403; a role it lists gets
// past the check (whatever the handler then says of an id that names nothing, never a
// 5xx). State-changing routes without the CSRF token are refused even for an admin.
func TestAdminAuthorisation(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	routes := adminRouteTable(t, a)
	anonymous := a.newClient(t) // a buyer: a buyer session and CSRF token, no staff session
	clients := map[staff.Role]*client{}
	for _, role := range staff.Roles {
		clients[role], _ = a.staffClient(t, role)
	}
	for _, r := range routes {
		path := concrete(r.Path)
		name := r.Method + " " + path
		form := url.Values{"_csrf": {anonymous.csrf}}

		// No staff session.
		st := anonymous.pageRequest(r.Method, path, formFor(r.Method, form), false)
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			if st.status != http.StatusSeeOther || !strings.HasPrefix(st.header.Get("Location"), "/admin/login?next=") {
				t.Errorf("%s as a buyer: status %d to %q, want 303 to the login", name, st.status, st.header.Get("Location"))
			}
		case st.status != http.StatusUnauthorized:
			t.Errorf("%s as a buyer: status %d, want 401", name, st.status)
		}

		for _, role := range staff.Roles {
			c := clients[role]
			a := c.pageRequest(r.Method, path, formFor(r.Method, url.Values{"_csrf": {c.csrf}}), false)
			allowed := role.May(r.Roles...)
			switch {
			case a.status >= 500:
				t.Errorf("%s as %s: status %d", name, role, a.status)
			case allowed && (a.status == http.StatusForbidden || a.status == http.StatusUnauthorized ||
				(a.status == http.StatusSeeOther && strings.HasPrefix(a.header.Get("Location"), "/admin/login"))):
				t.Errorf("%s as %s: status %d, want past the role check", name, role, a.status)
			case !allowed && a.status != http.StatusForbidden:
				t.Errorf("%s as %s: status %d, want 403", name, role, a.status)
			}
		}

		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c := clients[staff.Admin]
			a := c.pageRequest(r.Method, path, url.Values{"x": {"1"}}, false) // no _csrf field, no header
			if a.status != http.StatusForbidden || !strings.Contains(a.body, "form has expired") {
				t.Errorf("%s as admin without the CSRF token: status %d, want 403 csrf_failed", name, a.status)
			}
		}
	}
}

// formFor is the form to send with method: none for GET and HEAD.
func formFor(method string, f url.Values) url.Values {
	if method == http.MethodGet || method == http.MethodHead {
		return nil
	}
	return f
}

// TestStaffLogin: a right password logs in under a new session token (a token planted
// before is worth nothing after), an unknown email and a wrong password get the same
// answer, logout ends the session under yet another token, and a member's markup in
// their name is shown as text.
func TestStaffLogin(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	m := a.addStaff(t, staff.BoxOffice, `<script>alert("x")</script> Ann`)
	c := a.newClient(t)

	// A session before login (the login page makes one only if something is put in
	// it; plant one the way an attacker would, by a cookie).
	planted := "planted-token-0123456789abcdef0123456789"
	u, _ := url.Parse(a.URL + "/admin")
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: "boxoffice_staff", Value: planted, Path: "/admin"}})

	wrong := c.postForm("/admin/login", url.Values{"email": {m.Email}, "password": {"not the password!"}, "_csrf": {c.csrf}}, false)
	unknown := c.postForm("/admin/login", url.Values{"email": {"nobody@example.com"}, "password": {"not the password!"}, "_csrf": {c.csrf}}, false)
	if wrong.status != http.StatusUnauthorized || unknown.status != http.StatusUnauthorized {
		t.Fatalf("wrong password %d, unknown email %d; want 401 both", wrong.status, unknown.status)
	}
	if w, u := wrong.doc.Find(".error").Text(), unknown.doc.Find(".error").Text(); w != u || w == "" {
		t.Errorf("wrong password says %q, unknown email %q: want the same message", w, u)
	}

	if st := c.login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Fatalf("login: status %d", st)
	}
	first := c.staffCookie()
	if first == "" || first == planted {
		t.Fatalf("session token after login %q: want a new one", first)
	}
	home := c.page("/admin", false)
	if home.status != http.StatusOK {
		t.Fatalf("GET /admin after login: %d", home.status)
	}
	if strings.Contains(home.body, `<script>alert`) || !strings.Contains(home.body, `&lt;script&gt;alert`) {
		t.Errorf("the member's name is not escaped on the page")
	}

	logout := c.postForm("/admin/logout", url.Values{"_csrf": {c.csrf}}, false)
	if logout.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", logout.status)
	}
	if after := c.page("/admin", false); after.status != http.StatusSeeOther {
		t.Errorf("GET /admin after logout: %d, want 303 to the login", after.status)
	}
	// The old token, replayed, is worth nothing.
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: "boxoffice_staff", Value: first, Path: "/admin"}})
	if replay := c.page("/admin", false); replay.status != http.StatusSeeOther {
		t.Errorf("GET /admin with the token from before logout: %d, want 303 to the login", replay.status)
	}
}

// TestStaffSessionChangesSeenAtOnce: a logout through one instance, a role change and
// a disabled account are seen by the very next request on another instance, which
// had just served the session.
func TestStaffSessionChangesSeenAtOnce(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	b := newTestApp(t, func(o *appOptions) {
		o.DBURL = func(testing.TB, string) string { return a.App.Config.DatabaseURL }
	})
	// on is the same browser at instance inst. Both listen on 127.0.0.1, and cookies
	// do not tell ports apart: the jar sends the same session to both.
	on := func(c *client, inst *testApp) *client {
		d := *c
		d.base = inst.URL
		return &d
	}

	t.Run("logout", func(t *testing.T) {
		c, _ := a.staffClient(t, staff.BoxOffice)
		cb := on(c, b)
		if st := cb.page("/admin", false).status; st != http.StatusOK {
			t.Fatalf("instance b before logout: %d", st)
		}
		tok := c.staffCookie()
		c.postForm("/admin/logout", url.Values{"_csrf": {c.csrf}}, false)
		// A second tab still holding the token, at instance b.
		cb.http.Jar.SetCookies(mustURL(b.URL+"/admin"), []*http.Cookie{{Name: "boxoffice_staff", Value: tok, Path: "/admin"}})
		if st := cb.page("/admin", false).status; st != http.StatusSeeOther {
			t.Errorf("instance b right after logout on a: %d, want 303 to the login", st)
		}
	})

	t.Run("role and disable", func(t *testing.T) {
		c, m := a.staffClient(t, staff.Admin)
		cb := on(c, b)
		const page = "/admin/staff" // admins only
		if st := cb.page(page, false).status; st != http.StatusOK {
			t.Fatalf("%s on b before the change: %d", page, st)
		}
		if _, _, err := a.App.Staff.SetRole(t.Context(), m.ID, staff.BoxOffice); err != nil {
			t.Fatal(err)
		}
		if st := cb.page(page, false).status; st != http.StatusForbidden {
			t.Errorf("%s on b right after the role became box office: %d, want 403", page, st)
		}
		if _, _, err := a.App.Staff.SetDisabled(t.Context(), m.ID, true); err != nil {
			t.Fatal(err)
		}
		if st := cb.page("/admin", false).status; st != http.StatusSeeOther {
			t.Errorf("/admin on b right after the account was disabled: %d, want 303 to the login", st)
		}
	})
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestStaffIdleTimeout: a session unused for STAFF_IDLE_TIMEOUT is gone, and each
// request pushes its end back. Time is moved by the session row, not by waiting.
func TestStaffIdleTimeout(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, func(o *appOptions) { o.Env = map[string]string{"STAFF_IDLE_TIMEOUT": "10m"} })
	c, _ := a.staffClient(t, staff.Door)
	tok := c.staffCookie()
	var before, after float64
	q := `SELECT extract(epoch FROM expiry - now()) FROM sessions WHERE token = $1`
	if err := a.Pool.QueryRow(t.Context(), `UPDATE sessions SET expiry = now() + interval '1 minute' WHERE token = $1 RETURNING extract(epoch FROM expiry - now())`, tok).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if st := c.page("/admin", false).status; st != http.StatusOK {
		t.Fatalf("GET /admin: %d", st)
	}
	if err := a.Pool.QueryRow(t.Context(), q, tok).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after <= before || after > 600 {
		t.Errorf("session end after a request: %.0fs away (was %.0fs): want pushed back to the idle timeout", after, before)
	}
	if _, err := a.Pool.Exec(t.Context(), `UPDATE sessions SET expiry = now() - interval '1 second' WHERE token = $1`, tok); err != nil {
		t.Fatal(err)
	}
	if st := c.page("/admin", false).status; st != http.StatusSeeOther {
		t.Errorf("GET /admin after the idle timeout: %d, want 303 to the login", st)
	}
}

// TestStaffSessionLifetime: a session ends at STAFF_SESSION_LIFETIME however busy it
// has been. scs keeps the absolute deadline inside the session's data and stores each
// commit's expiry as the earlier of the idle timeout and that deadline; the store
// finds nothing past its expiry. The test brings the deadline to a minute from now
// (as if the session were 11 h 59 m old) and checks a request's commit caps the
// expiry at it rather than pushing it 30 minutes on.
func TestStaffSessionLifetime(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.BoxOffice)
	tok := c.staffCookie()
	var data []byte
	if err := a.Pool.QueryRow(t.Context(), `SELECT data FROM sessions WHERE token = $1`, tok).Scan(&data); err != nil {
		t.Fatal(err)
	}
	deadline, values, err := scs.GobCodec{}.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(deadline); d < 11*time.Hour || d > 12*time.Hour+time.Minute {
		t.Fatalf("session deadline %v away, want the 12 h lifetime", d)
	}
	soon, err := scs.GobCodec{}.Encode(time.Now().Add(time.Minute), values)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pool.Exec(t.Context(), `UPDATE sessions SET data = $2 WHERE token = $1`, tok, soon); err != nil {
		t.Fatal(err)
	}
	if st := c.page("/admin", false).status; st != http.StatusOK {
		t.Fatalf("GET /admin: %d", st)
	}
	var left float64
	if err := a.Pool.QueryRow(t.Context(), `SELECT extract(epoch FROM expiry - now()) FROM sessions WHERE token = $1`, tok).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left > 61 {
		t.Errorf("after a request the session expires in %.0f s: want it capped at the lifetime's end, a minute away", left)
	}
	// And once that moment has come, the session is gone.
	if _, err := a.Pool.Exec(t.Context(), `UPDATE sessions SET expiry = now() - interval '1 second' WHERE token = $1`, tok); err != nil {
		t.Fatal(err)
	}
	if st := c.page("/admin", false).status; st != http.StatusSeeOther {
		t.Errorf("GET /admin past the session's end: %d, want 303 to the login", st)
	}
}
