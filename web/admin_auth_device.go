package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/session"
	"boxoffice/internal/staff"
)

// deviceCookie holds the browser's known-device tokens, one for each account that
// logged in with it (staff.Attempt.Devices), newest last. Only the login form's POST
// needs it. The account's own record decides how long a device stays known; the
// cookie lasts as long as browsers let one (400 days).
const (
	deviceCookie    = "boxoffice_staff_device" // over plain HTTP; deviceCookieOf names it
	deviceCookieAge = 400 * 24 * time.Hour
)

// deviceCookieOf is the device cookie's name and path: with secure cookies a __Host-
// name, which must be Path=/ (session.CookieName).
func (s *server) deviceCookieOf() (name, path string) {
	if s.CookieSecure {
		return session.CookieName(deviceCookie, true), "/"
	}
	return deviceCookie, "/admin/login"
}

// devicesOf is the browser's known-device tokens.
func (s *server) devicesOf(c echo.Context) []string {
	name, _ := s.deviceCookieOf()
	ck, err := c.Cookie(name)
	if err != nil || ck.Value == "" {
		return nil
	}
	return strings.Split(ck.Value, ".")
}

// keepDevice adds a new token to the browser's, dropping the oldest past
// staff.MaxDevices.
func (s *server) keepDevice(c echo.Context, tokens []string, token string) {
	tokens = append(slices.DeleteFunc(slices.Clone(tokens), func(t string) bool { return t == "" || t == token }), token)
	tokens = tokens[max(0, len(tokens)-staff.MaxDevices):]
	name, path := s.deviceCookieOf()
	c.SetCookie(&http.Cookie{Name: name, Value: strings.Join(tokens, "."), Path: path,
		MaxAge: int(deviceCookieAge.Seconds()), HttpOnly: true, Secure: s.StaffSessions.Cookie.Secure,
		SameSite: http.SameSiteStrictMode})
}

// waitWords says a wait as a person would: "1 second", "40 seconds", "5 minutes".
func waitWords(d time.Duration) string {
	unit, n := "second", int((d+time.Second-1)/time.Second)
	if n > 90 {
		unit, n = "minute", (n+59)/60
	}
	if n <= 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
