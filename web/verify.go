package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/verification"
	"boxoffice/views"
)

// Verified buyers, for onsales that ask for them (an event's VerifiedOnly): a buyer
// registers an email, opens the link sent to it, and confirming binds the address to
// the session. The session then takes the address's buyer id (verification.Confirm),
// so every session that confirmed one address is one buyer: one place in the waiting
// room (keyed by the buyer id), one per-buyer limit (counted by buyer id in the hold
// statements), and the same holds and orders, which belong to the address rather than
// to one browser. Only a session that clicked a link sent to the address gets there.

// verifiedKey is the session key saying the session confirmed an email for the event;
// its value is the buyer id the address gave the session.
func verifiedKey(eventID int64) string { return "verified:" + strconv.FormatInt(eventID, 10) }

// verifiedFor reports whether the session confirmed an email for the event and is
// still the buyer the address made it (a later confirmation of another address in
// the same session may have made it another).
func (s *server) verifiedFor(c echo.Context, eventID int64) bool {
	b := s.pageBuyer(c)
	return b != "" && s.Sessions.GetString(c.Request().Context(), verifiedKey(eventID)) == b
}

// errNotVerified turns away a session that has not confirmed an email for an onsale
// that asks for one.
var errNotVerified = &apiError{Status: http.StatusForbidden, Code: "email_not_verified",
	Message: "This onsale is for verified buyers: register your email with POST /api/v1/events/{id}/verification, " +
		"then confirm it in this session with the link we send (or send its token to POST /api/v1/verification/confirm)."}

// notVerified is the answer to a session that has not confirmed an email for ev: the
// API's 403, or, for pages, the registration page.
func (s *server) notVerified(c echo.Context, ev booking.Event) error {
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		return errNotVerified
	}
	return seeOther(c, verifyURL(ev))
}

func verifyURL(ev booking.Event) string { return "/events/" + ev.Slug + "/verify" }

// registerLimit bounds registrations per client address (IPv6 per /64): enough for an
// office or a household behind one address, each of whom registers once or twice,
// and few enough that an address cannot turn the site into a mail cannon aimed at
// strangers' inboxes. Each address itself gets a link at most a minute, ten in all
// (verification.Options), whoever asks.
var registerLimit = redis_rate.Limit{Rate: 30, Burst: 30, Period: time.Hour}

// routeVerify adds the verified buyers' pages and calls to the routes table.
func (s *server) routeVerify(e *echo.Echo, buyerPage, buyer []echo.MiddlewareFunc) {
	e.GET("/events/:slug/verify", s.showRegister, buyerPage...)
	e.POST("/events/:slug/verify", s.submitRegister, buyerPage...)
	e.GET("/verify", s.showConfirm, buyerPage...)
	e.POST("/verify", s.submitConfirm, buyerPage...)
	api := e.Group("/api/v1")
	api.GET("/events/:id/verification", s.getVerification, buyer...)
	api.POST("/events/:id/verification", s.registerEmail, buyer...)
	api.POST("/verification/confirm", s.confirmEmail, buyer...)
}

// register is registering for pages and the API alike. Its answer is the same for
// every address, registered before or not, confirmed or not, sent a link now or not.
func (s *server) register(c echo.Context, ev booking.Event, email string) error {
	if !ev.VerifiedOnly {
		return &apiError{Status: http.StatusConflict, Code: "verification_not_asked",
			Message: "This onsale does not ask buyers to confirm an email: queue or choose seats as you are."}
	}
	if _, err := verification.Normalise(email); err != nil {
		return badRequest("invalid_email", "Type one email address, such as name@example.com.")
	}
	if wait, ok := s.limiter.allow(c.Request().Context(), "verify:"+s.clientNet(c), registerLimit); !ok {
		return &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited", RetryAfter: wait,
			Message: "Too many emails were registered from your network lately; try again " + untilText(time.Duration(wait)*time.Second) + "."}
	}
	return s.Verify.Register(c.Request().Context(), ev.ID, email)
}

// confirm confirms the link's address for this session: the session is renewed (a
// token planted before is worth nothing after) and takes the address's buyer id.
func (s *server) confirm(c echo.Context, token string) (booking.Event, error) {
	ctx := c.Request().Context()
	buyer, _, err := s.newBuyer(c)
	if err != nil {
		return booking.Event{}, err
	}
	res, err := s.Verify.Confirm(ctx, token, buyer)
	switch {
	case errors.Is(err, verification.ErrInvalidLink):
		return booking.Event{}, errInvalidLink
	case errors.Is(err, verification.ErrLinkOver):
		return booking.Event{}, &apiError{Status: http.StatusGone, Code: "link_expired",
			Message: "This link has been used, has expired, or a newer one was sent: ask for a new link on the event's page."}
	case err != nil:
		return booking.Event{}, err
	}
	if err := s.Sessions.RenewToken(ctx); err != nil {
		return booking.Event{}, err
	}
	s.Sessions.Put(ctx, buyerKey, res.Buyer)
	s.Sessions.Put(ctx, verifiedKey(res.EventID), res.Buyer)
	if err := s.saveSession(c); err != nil {
		return booking.Event{}, err
	}
	return s.eventByID(ctx, res.EventID)
}

var errInvalidLink = badRequest("invalid_link", "This link is not one we sent: copy the whole link from the email, or ask for a new one.")

// onward is where a verified buyer goes next: the queue, or the seats with the room off.
func onward(ev booking.Event) views.ActionLink {
	if ev.QueueEnabled {
		return views.ActionLink{Href: wayInURL(ev), Text: "Join the queue"}
	}
	return views.ActionLink{Href: seatsURL(ev, ""), Text: "Choose seats"}
}

func (s *server) registerView(c echo.Context, ev booking.Event) views.VerifyRegister {
	return views.VerifyRegister{
		Page: buyerPage(c, "Verify your email: "+ev.Name), Event: eventHeader(ev, time.Now()),
		Action: verifyURL(ev), CSRFField: csrfForm, Confirmed: s.verifiedFor(c, ev.ID), Next: onward(ev),
	}
}

// showRegister is the registration page of a verified-only onsale.
func (s *server) showRegister(c echo.Context) error {
	ev, err := s.eventBySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return err
	}
	if !ev.VerifiedOnly {
		return seeOther(c, onward(ev).Href)
	}
	return render(c, http.StatusOK, personal, views.VerifyRegisterPage(s.registerView(c, ev)))
}

// submitRegister registers the typed address and says the same for every address.
func (s *server) submitRegister(c echo.Context) error {
	ev, err := s.eventBySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return err
	}
	v := s.registerView(c, ev)
	v.Email = strings.TrimSpace(c.FormValue("email"))
	err = s.register(c, ev, v.Email)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		v.Message = ae.Message
		return render(c, http.StatusBadRequest, personal, views.VerifyRegisterPage(v))
	} else if err != nil {
		return err
	}
	v.Sent = true
	return render(c, http.StatusOK, personal, views.VerifyRegisterPage(v))
}

// showConfirm is where the email's link lands: it confirms nothing by itself (mail
// programs fetch links to scan them), but asks for the press of a button.
func (s *server) showConfirm(c echo.Context) error {
	token := c.QueryParam("token")
	eventID, err := s.Verify.EventOf(token)
	if err != nil {
		return errInvalidLink
	}
	ev, err := s.eventByID(c.Request().Context(), eventID)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, personal, views.VerifyConfirmPage(views.VerifyConfirm{
		Page: buyerPage(c, "Confirm your email: "+ev.Name), Event: eventHeader(ev, time.Now()),
		Action: "/verify", CSRFField: csrfForm, Token: token,
	}))
}

// submitConfirm confirms the link's address for this browser and sends it on.
func (s *server) submitConfirm(c echo.Context) error {
	ev, err := s.confirm(c, c.FormValue("token"))
	if err != nil {
		return err
	}
	return seeOther(c, onward(ev).Href)
}

// verificationJSON is where a session stands with an onsale's verification.
type verificationJSON struct {
	Required  bool `json:"required"`
	Confirmed bool `json:"confirmed"`
}

func (s *server) getVerification(c echo.Context) error {
	ev, err := eventOfPath(s, c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, verificationJSON{Required: ev.VerifiedOnly, Confirmed: ev.VerifiedOnly && s.verifiedFor(c, ev.ID)})
}

// registeredJSON is the one answer to a registration.
type registeredJSON struct {
	Message string `json:"message"`
}

// confirmedJSON is a confirmation's answer.
type confirmedJSON struct {
	EventID   int64 `json:"eventId"`
	Confirmed bool  `json:"confirmed"`
}

// registerEmail registers an address for the onsale: 202 whatever the address's
// history, so that the answer tells nobody whether it was registered before.
func (s *server) registerEmail(c echo.Context) error {
	ev, err := eventOfPath(s, c)
	if err != nil {
		return err
	}
	var in struct {
		Email string `json:"email"`
	}
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if err := s.register(c, ev, in.Email); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, registeredJSON{
		Message: "If the address can receive email, a link to confirm it is on its way; it works once, for a day."})
}

// confirmEmail confirms a link's token for this session (the API's way of opening the
// link), and renews the session cookie.
func (s *server) confirmEmail(c echo.Context) error {
	var in struct {
		Token string `json:"token"`
	}
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	ev, err := s.confirm(c, in.Token)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, confirmedJSON{EventID: ev.ID, Confirmed: true})
}

// verifyCounts are an onsale's registrations for the box office; zero when it does
// not ask for verified buyers.
func (s *server) verifyCounts(ctx context.Context, ev booking.Event) (verification.Counts, error) {
	if !ev.VerifiedOnly {
		return verification.Counts{}, nil
	}
	return s.Verify.Counts(ctx, ev.ID)
}
