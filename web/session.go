package web

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"boxoffice/internal/session"
)

const (
	buyerKey   = "buyer"
	savedFlag  = "session-saved"
	csrfHeader = "X-CSRF-Token"
	// csrfCookie is the CSRF token's double, by its name over plain HTTP; s.csrf
	// names it by session.CookieName.
	csrfCookie  = "boxoffice_csrf"
	csrfContext = "csrf"
	csrfForm    = "_csrf" // the hidden field of buyer forms
)

// loadSession loads the scs session into the request context. It is Echo-native rather
// than scs.LoadAndSave wrapped, which writes the cookie twice when a handler fails: a
// session changed by a handler is committed by saveSession, or else just before the
// answer goes out.
func (s *server) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return loadSessions(s.Sessions, s.Log)(next)
}

// loadSessions is loadSession for any session manager: buyers' or staff's.
func loadSessions(sm *scs.SessionManager, log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			saved := savedFlag + ":" + sm.Cookie.Name
			var token string
			if ck, err := c.Cookie(sm.Cookie.Name); err == nil {
				token = ck.Value
			}
			ctx, err := sm.Load(c.Request().Context(), token)
			if err != nil {
				return err
			}
			c.SetRequest(c.Request().WithContext(ctx))
			c.Response().Header().Add("Vary", "Cookie")
			c.Response().Before(func() {
				// A handler that saved (saveSessionOf) has written the session as it
				// was then; it is written again only if it changed since.
				if snap, ok := c.Get(saved).(map[string]any); ok && reflect.DeepEqual(snap, sessionValues(ctx, sm)) {
					return
				}
				switch sm.Status(ctx) {
				case scs.Modified:
					tok, exp, err := sm.Commit(ctx)
					if err != nil {
						// A request its client gave up (a closed tab's stream) has
						// nobody to give the cookie to: that is no error of ours.
						if ctx.Err() == nil {
							log.ErrorContext(ctx, "session not saved", "err", err)
						}
						return
					}
					sm.WriteSessionCookie(ctx, c.Response(), tok, exp)
				case scs.Destroyed:
					sm.WriteSessionCookie(ctx, c.Response(), "", time.Time{})
				}
			})
			return next(c)
		}
	}
}

// saveSession commits a changed session now, so that a failure is the handler's error
// rather than a lost write after the answer.
func (s *server) saveSession(c echo.Context) error {
	return saveSessionOf(c, s.Sessions)
}

// saveSessionOf is saveSession for any session manager.
func saveSessionOf(c echo.Context, sm *scs.SessionManager) error {
	ctx := c.Request().Context()
	if sm.Status(ctx) != scs.Modified {
		return nil
	}
	tok, exp, err := sm.Commit(ctx)
	if err != nil {
		return err
	}
	sm.WriteSessionCookie(ctx, c.Response(), tok, exp)
	c.Set(savedFlag+":"+sm.Cookie.Name, sessionValues(ctx, sm))
	return nil
}

// renewSession gives the buyer's session a new token, its data kept, and sends the
// new cookie: called once an order is created, so that a session token planted in the
// buyer's browser beforehand (session fixation) does not reach the order. scs deletes
// the old token first; should the new one then fail to save, the request fails
// before anything is charged.
func (s *server) renewSession(c echo.Context) error {
	if err := s.Sessions.RenewToken(c.Request().Context()); err != nil {
		return err
	}
	return s.saveSession(c)
}

// fromBrowser reports whether a request comes from a browser, which sends fetch
// metadata with every request. A planted cookie can only be planted in a browser; a
// script keeps the cookie it was given, and one that lost an answer retries with it.
func fromBrowser(c echo.Context) bool {
	return c.Request().Header.Get(echo.HeaderSecFetchSite) != ""
}

// sessionValues is what the session holds, for telling whether it changed after a
// save: scs keeps a saved session marked modified, so its status cannot say.
func sessionValues(ctx context.Context, sm *scs.SessionManager) map[string]any {
	keys := sm.Keys(ctx)
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = sm.Get(ctx, k)
	}
	return out
}

// buyer returns the session's buyer id, creating one on first use. The id, not the
// session token, owns holds and orders: tokens change on login, the buyer does not.
func (s *server) buyer(c echo.Context) (string, error) {
	b, created, err := s.newBuyer(c)
	if err != nil || !created {
		return b, err
	}
	return b, s.saveSession(c)
}

// newBuyer is buyer without saving the session: for a handler that changes the
// session again after it and saves once at its end, one write instead of two. A new
// buyer counts against its address's new sessions (limitAddress): a request without
// the session cookie, a first visit's or a script's, is a new buyer every time.
func (s *server) newBuyer(c echo.Context) (b string, created bool, err error) {
	ctx := c.Request().Context()
	if b := s.Sessions.GetString(ctx, buyerKey); b != "" {
		return b, false, nil
	}
	if err := s.limitAddress(c, limitedBySessions); err != nil {
		return "", false, err
	}
	b = newBuyerID()
	s.Sessions.Put(ctx, buyerKey, b)
	return b, true, nil
}

// newBuyerID is a new buyer's id: 128 random bits.
func newBuyerID() string { return rand.Text() }

// csrf is Echo's CSRF middleware: browsers that send Sec-Fetch-Site are judged by it;
// other clients send the token from GET /api/v1/session in X-CSRF-Token, checked
// against its cookie.
func (s *server) csrf() echo.MiddlewareFunc {
	return middleware.CSRFWithConfig(middleware.CSRFConfig{
		TokenLookup:    "header:" + csrfHeader + ",form:" + csrfForm,
		CookieName:     session.CookieName(csrfCookie, s.CookieSecure),
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSecure:   s.CookieSecure,
		CookieSameSite: http.SameSiteStrictMode,
		ContextKey:     csrfContext,
		CookieMaxAge:   86400,
		ErrorHandler: func(err error, c echo.Context) error {
			return &apiError{Status: http.StatusForbidden, Code: "csrf_failed",
				Message: "Missing or wrong X-CSRF-Token header: get one from GET /api/v1/session."}
		},
		// A state-changing request a browser marks cross-site is refused whatever token
		// it carries; without this it would surface as Echo's bare 403 "forbidden"
		// rather than as csrf_failed. same-site falls back to the token, as by default.
		AllowSecFetchSiteFunc: func(c echo.Context) (bool, error) {
			if c.Request().Header.Get(echo.HeaderSecFetchSite) == "same-site" {
				return false, nil
			}
			return false, &apiError{Status: http.StatusForbidden, Code: "csrf_failed",
				Message: "Cross-site requests may not change anything here."}
		},
	})
}
