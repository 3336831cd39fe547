package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"boxoffice/internal/staff"
	"boxoffice/static"
	"boxoffice/views"
)

// Staff sessions (admin pages). A staff session holds the member's id and the
// account's auth epoch at login. Every admin request reads the account again
// (requireStaff), and the session store behind StaffSessions never caches: a logout,
// a disabled account, a password change or a role change is seen by the next request
// on every instance.
const (
	staffIDKey    = "staff_id"
	staffEpochKey = "staff_epoch"
	staffContext  = "staff"
)

// errLoginRequired answers a staff request without a live staff session (GET pages
// are sent to the login form instead).
var errLoginRequired = &apiError{Status: http.StatusUnauthorized, Code: "login_required",
	Message: "Log in as staff to use this page."}

// errForbiddenRole answers a member whose role does not reach the page.
var errForbiddenRole = &apiError{Status: http.StatusForbidden, Code: "forbidden_role",
	Message: "Your role does not give access to this page; ask an admin."}

// requireStaff lets through members whose role is one of roles (an admin always), and
// puts the member in the context (currentStaff). It must run after the staff session
// is loaded (routeAdmin's session middleware).
func (s *server) requireStaff(roles ...staff.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx := c.Request().Context()
			id := s.StaffSessions.GetInt64(ctx, staffIDKey)
			if id == 0 {
				return s.toLogin(c)
			}
			m, err := s.Staff.Get(ctx, id)
			if errors.Is(err, staff.ErrNotFound) || (err == nil && (m.Disabled || int64(m.AuthEpoch) != s.StaffSessions.GetInt64(ctx, staffEpochKey))) {
				// Disabled, deleted or its password changed since: the session ends here.
				if err := s.StaffSessions.Destroy(ctx); err != nil {
					return err
				}
				return s.toLogin(c)
			} else if err != nil {
				return err
			}
			c.Set(staffContext, m)
			if !m.Role.May(roles...) {
				return errForbiddenRole
			}
			return next(c)
		}
	}
}

// staffStillIn reports whether the member a long answer (a stream) was opened for is
// still logged in, enabled, under the same password and in a role that reaches
// roles: a stream checks it every round, so that a logout, a disable or a downgrade
// ends it as it would end the next request.
func (s *server) staffStillIn(ctx context.Context, c echo.Context, roles ...staff.Role) bool {
	m := currentStaff(c)
	ck, err := c.Cookie(s.StaffSessions.Cookie.Name)
	if err != nil {
		return false
	}
	if store, ok := s.StaffSessions.Store.(scs.CtxStore); ok {
		if _, found, err := store.FindCtx(ctx, ck.Value); err != nil || !found {
			return false
		}
	}
	now, err := s.Staff.Get(ctx, m.ID)
	return err == nil && !now.Disabled && now.AuthEpoch == m.AuthEpoch && now.Role.May(roles...)
}

// toLogin sends a browser's page request to the login form, to come back after; any
// other request is a 401.
func (s *server) toLogin(c echo.Context) error {
	r := c.Request()
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, "/admin/login?next="+url.QueryEscape(r.URL.RequestURI()))
	}
	return errLoginRequired
}

// currentStaff is the member requireStaff let through.
func currentStaff(c echo.Context) staff.Member {
	m, _ := c.Get(staffContext).(staff.Member)
	return m
}

// audit records a staff action of the current member. Handlers call it after the
// action succeeded; an action done in a transaction of its own records itself
// through staff.Audit in that transaction instead.
func (s *server) audit(c echo.Context, action, subject string, before, after any) error {
	return s.Staff.Audit(c.Request().Context(), currentStaff(c).ID, action, subject, before, after, c.RealIP())
}

// adminPage is the frame of an admin page: the CSRF token for its forms and htmx, and
// the member, whose role decides the menu.
func adminPage(c echo.Context, title string) views.AdminPage {
	m := currentStaff(c)
	p := buyerPage(c, title)
	p.Styles = append(p.Styles, adminCSS)
	return views.AdminPage{Page: p, StaffName: m.Name, Role: string(m.Role), Path: c.Request().URL.Path}
}

// adminCSS is the admin pages' stylesheet; the login page loads it too.
var adminCSS = static.URL("css/admin.css")

func loginPage(c echo.Context) views.Page {
	p := buyerPage(c, "Staff login")
	p.Styles = append(p.Styles, adminCSS)
	return p
}

// safeNext is where to go after login: a path under /admin on this site, never
// another site ("//evil.example", "https://…").
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/admin") || strings.HasPrefix(next, "/admin/login") ||
		strings.ContainsAny(next, "\\\r\n") {
		return "/admin"
	}
	if u, err := url.Parse(next); err != nil || u.Host != "" || u.Scheme != "" {
		return "/admin"
	}
	return next
}

// showLogin is the login form.
func (s *server) showLogin(c echo.Context) error {
	if id := s.StaffSessions.GetInt64(c.Request().Context(), staffIDKey); id != 0 {
		if m, err := s.Staff.Get(c.Request().Context(), id); err == nil && !m.Disabled {
			return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
		}
	}
	return render(c, http.StatusOK, "no-store", views.AdminLogin(loginPage(c), views.LoginForm{Next: safeNext(c.QueryParam("next"))}))
}

// login checks the form, and on success starts a new session under a new token (no
// fixation: a token planted before login is worth nothing after it), and keeps the
// device's token for the account in the browser, so that its next logins are not
// held up by a stranger's guesses.
func (s *server) login(c echo.Context) error {
	email, password := c.FormValue("email"), c.FormValue("password")
	next := safeNext(c.FormValue("next"))
	form := views.LoginForm{Email: email, Next: next}
	ctx := c.Request().Context()
	devices := s.devicesOf(c)
	m, err := s.Staff.Login(ctx, staff.Attempt{Email: email, Password: password, Address: c.RealIP(), Devices: devices})
	var throttled *staff.ThrottledError
	switch {
	case errors.Is(err, staff.ErrBadLogin):
		form.Error = "Wrong email or password."
		return render(c, http.StatusUnauthorized, "no-store", views.AdminLogin(loginPage(c), form))
	case errors.As(err, &throttled):
		form.Error = "Too many failed logins for this account from here. Wait " + waitWords(throttled.Wait) +
			", then try again. A device you have logged in with before is not held up by others' attempts."
		c.Response().Header().Set("Retry-After", strconv.Itoa(int((throttled.Wait+time.Second-1)/time.Second)))
		return render(c, http.StatusTooManyRequests, "no-store", views.AdminLogin(loginPage(c), form))
	case errors.Is(err, staff.ErrBusy):
		form.Error = "Many logins are being checked at the moment. Please try again in a few seconds."
		c.Response().Header().Set("Retry-After", "5")
		return render(c, http.StatusServiceUnavailable, "no-store", views.AdminLogin(loginPage(c), form))
	case err != nil:
		return err
	}
	if m.Device != "" {
		s.keepDevice(c, devices, m.Device)
	}
	if err := s.StaffSessions.RenewToken(ctx); err != nil {
		return err
	}
	s.StaffSessions.Put(ctx, staffIDKey, m.ID)
	s.StaffSessions.Put(ctx, staffEpochKey, int64(m.AuthEpoch))
	if err := saveSessionOf(c, s.StaffSessions); err != nil {
		return err
	}
	if err := s.Staff.Audit(ctx, m.ID, "staff.login", "", nil, nil, c.RealIP()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// logout ends the session everywhere: the row is deleted, and no instance caches it.
func (s *server) logout(c echo.Context) error {
	ctx := c.Request().Context()
	if id := s.StaffSessions.GetInt64(ctx, staffIDKey); id != 0 {
		if err := s.Staff.Audit(ctx, id, "staff.logout", "", nil, nil, c.RealIP()); err != nil {
			return err
		}
	}
	if err := s.StaffSessions.Destroy(ctx); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/login")
}
