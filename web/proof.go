package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/proof"
	"boxoffice/static"
	"boxoffice/views"
)

// The proof of work (internal/proof) in front of the two calls a script repeats to
// hoard: a queue join, and a session's first hold. Every join pays (a script that
// joins a thousand times solves a thousand challenges); a session that has proved
// once, by a join or a hold, is marked proved and holds again without a new proof, so
// a buyer solves one challenge in the usual visit. The browser solves in the
// background with ALTCHA's widget (static/js/proof.js); programs solve with
// proof.Solve and send the payload in X-Altcha.

const (
	proofHeader = "X-Altcha"
	proofField  = "altcha" // the widget's hidden field, in a form
	provedKey   = "proved" // in the session: it has spent a valid proof
)

// The refusals: 403 with what to do, in words for the API's callers; the pages word
// them for people (proofPageError).
var errProofRequired = &apiError{Status: http.StatusForbidden, Code: "proof_required",
	Message: "This needs a quick proof that you are not a script: solve a challenge from GET /api/v1/challenge and send the solution in the X-Altcha header. In a browser the page does this for you in under a second."}

func proofInvalid(err error) *apiError {
	msg := "That is not a solved challenge from this site."
	switch {
	case errors.Is(err, proof.ErrUnavailable):
		return &apiError{Status: http.StatusServiceUnavailable, Code: "proof_unavailable", RetryAfter: proofRetryAfter,
			Message: "Proofs cannot be checked for a moment. Send the same one again in a few seconds."}
	case errors.Is(err, proof.ErrExpired):
		msg = "That proof has run out."
	case errors.Is(err, proof.ErrSpent):
		msg = "That proof was used already; each counts once."
	}
	return &apiError{Status: http.StatusForbidden, Code: "proof_invalid",
		Message: msg + " Solve a fresh challenge from GET /api/v1/challenge and send it again."}
}

// proofRetryAfter is the Retry-After, in seconds, while spent proofs cannot be checked.
const proofRetryAfter = 2

// getChallenge hands out a fresh challenge, to the widget and to programs.
func (s *server) getChallenge(c echo.Context) error {
	return c.JSON(http.StatusOK, s.Proof.Challenge())
}

// spendProof checks the request's proof (the header, else the form field), spends it
// and marks the session proved. The mark is saved with the session, whatever the call
// then answers: the work was done.
func (s *server) spendProof(c echo.Context) error {
	p := c.Request().Header.Get(proofHeader)
	if p == "" {
		p = c.FormValue(proofField)
	}
	if p == "" {
		return errProofRequired
	}
	ctx := c.Request().Context()
	if err := s.Proof.Verify(ctx, p); err != nil {
		return proofInvalid(err)
	}
	s.Sessions.Put(ctx, provedKey, true)
	return nil
}

// proveHold asks for a proof before a hold, unless the session has proved already.
func (s *server) proveHold(c echo.Context) error {
	if !s.ProofOfWork || s.proved(c) {
		return nil
	}
	return s.spendProof(c)
}

// proveJoin asks for a proof before every join of a waiting room that is on (with it
// off, a join changes nothing and the first hold asks instead).
func (s *server) proveJoin(c echo.Context, ev booking.Event) error {
	if !s.ProofOfWork || !ev.QueueEnabled {
		return nil
	}
	return s.spendProof(c)
}

func (s *server) proved(c echo.Context) bool {
	return s.Sessions.GetBool(c.Request().Context(), provedKey)
}

// proofPageError words a refused proof for the queue or seat page (what is "join" or
// "hold"): without JavaScript nothing solves the challenge, and the page says so.
func proofPageError(err error, what string) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err
	}
	out := *ae
	switch {
	case ae.Code == errProofRequired.Code && what == "join":
		out.Message = "Joining the queue needs JavaScript for one quick step: your browser works out a small sum, in under a second, that shows it is not a script. Turn JavaScript on for this site and open the waiting room again."
	case ae.Code == errProofRequired.Code:
		out.Message = "Holding seats needs JavaScript for one quick step: your browser works out a small sum, in under a second, that shows it is not a script. Turn JavaScript on for this site, reload this page and choose again."
	case ae.Status == http.StatusServiceUnavailable:
		out.Message = "The check that this browser is not a script cannot be made for a moment. Try again in a few seconds."
	default:
		out.Message = "The check that this browser is not a script did not go through (it may have run out). Wait a moment while it runs again, then try again."
	}
	return &out
}

// The widget's files and the challenge's address, for the pages that ask.
var (
	proofModule = static.URL("js/vendor/altcha-3.2.2.min.js")
	proofWorker = static.URL("js/vendor/altcha-3.2.2-sha-worker.js")
	proofCSS    = static.URL("js/vendor/altcha-3.2.2.css")
	proofScript = static.URL("js/proof.js")
)

const challengeURL = "/api/v1/challenge"

// proofBox is a page's ask for a proof, for what ("join" or "hold").
func proofBox(what string) views.Proof {
	return views.Proof{Module: proofModule, Worker: proofWorker, CSS: proofCSS, Challenge: challengeURL, For: what}
}

// holdProof is the seat page's ask, for a session that has yet to prove; nil when none
// is needed.
func (s *server) holdProof(c echo.Context) *views.Proof {
	if !s.ProofOfWork || s.proved(c) {
		return nil
	}
	p := proofBox("hold")
	return &p
}
