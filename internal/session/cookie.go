package session

import (
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"
)

// The session cookies, by their names over plain HTTP; CookieName gives the name each
// goes by.
const (
	BuyerCookie = "boxoffice_session" // the buyer's session
	StaffCookie = "boxoffice_staff"   // a staff login, sent only to /admin over plain HTTP
)

// CookieName is the name a cookie goes by. With secure cookies it carries the
// __Host- prefix, which browsers accept only from this very host, over HTTPS, for
// Path=/ and without a Domain: no other site, not even a subdomain or a neighbour on
// the same registrable domain, can plant or overwrite it (a planted session is a
// session fixation; a planted CSRF cookie with its matching token is a forgery).
func CookieName(name string, secure bool) string {
	if secure {
		return "__Host-" + name
	}
	return name
}

// Buyers is the buyers' session manager over store: a day's lifetime, a Lax cookie
// (a link from another site still finds the buyer's basket), the remembering codec.
func Buyers(store *Store, secure bool) *scs.SessionManager {
	sm := scs.New()
	sm.Store = store
	sm.Codec = NewCodec()
	sm.Lifetime = 24 * time.Hour
	sm.Cookie.Name = CookieName(BuyerCookie, secure)
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = secure
	return sm
}

// Staff is the staff logins' session manager over store (NewUncachedStore: a logout
// ends the login on every instance at once): a Strict cookie, sent only to /admin
// over plain HTTP, ending after idle without a request and after lifetime in all.
func Staff(store *Store, secure bool, idle, lifetime time.Duration) *scs.SessionManager {
	sm := scs.New()
	sm.Store = store
	sm.IdleTimeout = idle
	sm.Lifetime = lifetime
	sm.Cookie.Name = CookieName(StaffCookie, secure)
	if !secure {
		sm.Cookie.Path = "/admin" // __Host- cookies are Path=/ (its default)
	}
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteStrictMode
	sm.Cookie.Secure = secure
	return sm
}
