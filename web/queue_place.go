package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/proof"
	"boxoffice/internal/waitroom"
)

// The front door: a place in the waiting room that costs the origin nothing until its
// turn. POST …/queue/place gives an arrival a signed place token in a cookie (no
// session, no database, no Redis call of its own: the room counts arrivals per group
// in memory); the visitor works out its position and wait from the event's board and
// its place (the answers here do the same sum for API clients), and claims its
// admission with POST …/queue/claim once the board's cursor has passed its place: only
// then is a session made, and the admission token the seat calls ask for.

// placeRoute is the place calls' route under /api/v1.
const placeRoute = "/events/:id/queue/place"

// quietRoutes are the routes whose answered requests are logged at debug level: the
// crowd's arrivals, thousands a second at an onsale, which the HTTP metrics count
// anyway. Their refusals and errors are logged as any request's.
var quietRoutes = map[string]bool{"/api/v1" + placeRoute: true}

// placeCookie keeps an arrival's place token, one an event.
const placeCookie = "place-"

// placeHeader lets an API client without a cookie jar send its place token.
const placeHeader = "X-Place-Token"

// placeMaxAge is how long a place is kept: a waiting room lasts hours at most.
const placeMaxAge = 24 * 60 * 60

func placeCookieName(eventID int64) string { return placeCookie + strconv.FormatInt(eventID, 10) }

var (
	errNoPlace = &apiError{Status: http.StatusBadRequest, Code: "no_place",
		Message: "No place in the waiting room: take one with POST /api/v1/events/{id}/queue/place first."}
	errInvalidPlace = &apiError{Status: http.StatusForbidden, Code: "invalid_place",
		Message: "This place token is not one this waiting room gave for this event: take a place with POST /api/v1/events/{id}/queue/place."}
	errPlaceClaimed = &apiError{Status: http.StatusConflict, Code: "place_claimed",
		Message: "This place in the queue was claimed by another visitor: take a place of your own."}
	errPlaceUsed = &apiError{Status: http.StatusConflict, Code: "place_used",
		Message: "The admission this place gave has ended: take a new place to shop again."}
	errNotYourPlace = &apiError{Status: http.StatusForbidden, Code: "invalid_place",
		Message: "This onsale gives one place per confirmed email, and this place was taken by another buyer: take a place of your own."}
)

// placeJSON is the answer of the place calls: the documented queue figures worked out
// from the board and the place, and the place itself, which the board's cursor passes
// at its turn (turn: claim now).
type placeJSON struct {
	queueJSON
	Placed    bool    `json:"placed"`
	Group     uint64  `json:"group"`
	Tiebreak  float64 `json:"tiebreak"`
	Epoch     string  `json:"epoch,omitempty"`
	Turn      bool    `json:"turn"`
	CSRFToken string  `json:"csrfToken,omitempty"`
	// Board is the board of the place's room, which the door follows: the presale's
	// for a presale's code holder (Presale), else the event's.
	Board   string `json:"board,omitempty"`
	Presale bool   `json:"presale,omitempty"`
}

// placeOf is the request's place for the event: from the header, else the cookie.
// ok false: none; err: one that does not verify.
func (s *server) placeOf(c echo.Context, eventID int64) (waitroom.Place, string, bool, error) {
	tok := c.Request().Header.Get(placeHeader)
	if tok == "" {
		if ck, err := c.Cookie(placeCookieName(eventID)); err == nil {
			tok = ck.Value
		}
	}
	if tok == "" {
		return waitroom.Place{}, "", false, nil
	}
	p, err := s.Queue.VerifyPlace(tok, eventID)
	if err != nil {
		return p, tok, true, errInvalidPlace
	}
	return p, tok, true, nil
}

// keepPlace sets the place cookie: the header http.Cookie's String writes for it, in
// one string (the name and the token, base64url, need neither checks nor quoting).
func (s *server) keepPlace(c echo.Context, eventID int64, tok string) {
	attrs := placeCookieAttrs
	if s.CookieSecure {
		attrs = placeCookieAttrsSecure
	}
	c.Response().Header().Add(echo.HeaderSetCookie, placeCookieName(eventID)+"="+tok+attrs)
}

// The place cookie's attributes, as http.Cookie writes them: Path=/, Max-Age
// placeMaxAge, HttpOnly, Secure with COOKIE_SECURE, SameSite=Lax.
const (
	placeCookieAttrs       = "; Path=/; Max-Age=86400; HttpOnly; SameSite=Lax"
	placeCookieAttrsSecure = "; Path=/; Max-Age=86400; HttpOnly; Secure; SameSite=Lax"
)

// placeEvent is the event of the address, with its room on, and the room the
// session's place is in (room: a presale's for its code holders); with the room off,
// ok is false and the answer (admitted, no token needed) is written.
func (s *server) placeEvent(c echo.Context) (booking.Event, waitroom.Event, bool, error) {
	ev, ok := c.Get(placeEventKey).(booking.Event)
	if !ok {
		var err error
		if ev, err = eventOfPath(s, c); err != nil {
			return ev, waitroom.Event{}, false, err
		}
	}
	if !ev.QueueEnabled {
		return ev, waitroom.Event{}, false, c.JSON(http.StatusOK, placeJSON{queueJSON: queueJSON{Admitted: true}})
	}
	if ev.VerifiedOnly && !s.verifiedFor(c, ev.ID) {
		return ev, waitroom.Event{}, false, errNotVerified
	}
	qe, err := s.room(c, ev)
	if err != nil {
		return ev, qe, false, roomRefused(c, ev, err)
	}
	return ev, qe, true, nil
}

// placeEventKey is where placeSession leaves the place calls' event for placeEvent.
const placeEventKey = "place.event"

// placeSession loads the session of the place calls for an onsale of verified buyers,
// whose places are the buyer's own (ArriveAs), and while a presale room is on, whose
// arrivals are the sessions that entered a code (room): any other arrival touches no
// session store. It keeps the event it read for the handler.
//
// The place routes run without the request deadline (routes.go), whose context and
// timer every arrival would pay for: each call an arrival can make bounds itself (the
// event and board caches' loads, the board's Redis read, the address limit, the proof
// of work's memory), and the session's load, the one that does not, gets the deadline
// here.
func (s *server) placeSession(next echo.HandlerFunc) echo.HandlerFunc {
	withSession := deadline(requestTimeout)(s.loadSession(next))
	return func(c echo.Context) error {
		ev, err := eventOfPath(s, c)
		if err != nil {
			c.Set(noSessionContext, true)
			return next(c) // the handler answers the error, after the CSRF check
		}
		c.Set(placeEventKey, ev)
		if _, _, presale, perr := s.presaleRoom(c.Request().Context(), ev); ev.VerifiedOnly || presale || perr != nil {
			return withSession(c)
		}
		c.Set(noSessionContext, true)
		return next(c)
	}
}

// getPlace answers where the request's place stands, from the board (one cached read
// for the whole crowd); placed false without one. It writes nothing but the CSRF
// cookie, whose token it answers for the POSTs that follow.
func (s *server) getPlace(c echo.Context) error {
	ev, qe, on, err := s.placeEvent(c)
	if !on {
		return err
	}
	p, _, ok, err := s.placeOf(c, qe.ID)
	if err != nil {
		return err
	}
	b, berr := s.board(c.Request().Context(), qe)
	out := placeJSON{}
	if ok {
		out = placeView(p, b, berr == nil)
	}
	presaleBoard(&out, ev, qe)
	out.CSRFToken, _ = c.Get(csrfContext).(string)
	return placeAnswer(c, out)
}

// takePlace gives an arrival its place, keeping one it has (and counting it again
// should Redis have lost the counts since). A new place asks the proof of work and
// counts against the address's joins, as a join does; it touches no database and
// makes no Redis call of its own (the board is this instance's cached read; the
// proof's memory and the address's limit are the defences' calls).
func (s *server) takePlace(c echo.Context) error {
	ev, qe, on, err := s.placeEvent(c)
	if !on {
		return err
	}
	p, tok, ok, err := s.placeOf(c, qe.ID)
	if err != nil {
		return err
	}
	b, berr := s.board(c.Request().Context(), qe)
	if berr != nil {
		b = waitroom.Board{}
	}
	buyer := ""
	if ev.VerifiedOnly { // one place per confirmed email: the buyer's own (owned.go)
		buyer = s.pageBuyer(c)
		ok = ok && s.Queue.Owns(p, buyer)
	}
	if ok {
		p, tok = s.Queue.Recount(p, tok, b)
	} else if p, tok, err = s.newPlace(c, ev, qe, b, buyer); err != nil {
		return err
	}
	s.keepPlace(c, qe.ID, tok)
	out := placeView(p, b, berr == nil)
	presaleBoard(&out, ev, qe)
	return placeAnswer(c, out)
}

// presaleBoard names, in a place's answer, the presale room's board when the place is
// in it; a public place's answer is left as it was (its page knows the board).
func presaleBoard(out *placeJSON, ev booking.Event, qe waitroom.Event) {
	if qe.ID != ev.ID {
		out.Board, out.Presale = roomBoardURL(ev, qe), true
	}
}

// newPlace gives an arrival a new place (the buyer's own with a buyer, else a random
// one) once its proof of work and its address's joins allow it, and counts it. The
// proof is checked first, counted against the address next, and spent last, for the
// place: a call refused by the address's limit leaves its proof unspent, and a proof
// sent again after its answer was lost (the page repeats a call that got no answer)
// answers the place it bought, uncounted, rather than being refused as spent, which
// would send the visitor to the back of the line with a new proof.
func (s *server) newPlace(c echo.Context, ev booking.Event, qe waitroom.Event, b waitroom.Board, buyer string) (waitroom.Place, string, error) {
	var sol proof.Solution
	if s.ProofOfWork {
		pr := c.Request().Header.Get(proofHeader)
		if pr == "" {
			return waitroom.Place{}, "", errProofRequired
		}
		var err error
		if sol, err = s.Proof.Check(pr); err != nil {
			return waitroom.Place{}, "", proofInvalid(err)
		}
	}
	if err := s.limitAddress(c, limitedByJoins); err != nil {
		return waitroom.Place{}, "", err
	}
	p, tok := s.Queue.Issue(qe, b, buyer)
	if s.ProofOfWork {
		bought, err := s.Proof.Buy(c.Request().Context(), sol, tok)
		if err != nil {
			return waitroom.Place{}, "", proofInvalid(err)
		}
		if bought != tok {
			// The place this proof bought before, if it is one of this event's (and,
			// for a buyer's own place, this buyer's): counted then.
			was, verr := s.Queue.VerifyPlace(bought, qe.ID)
			if verr != nil || (buyer != "" && !s.Queue.Owns(was, buyer)) {
				return waitroom.Place{}, "", proofInvalid(proof.ErrSpent)
			}
			p, tok = s.Queue.Recount(was, bought, b)
			return p, tok, nil
		}
	}
	s.Queue.Count(p)
	return p, tok, nil
}

// claimPlace admits the session's buyer (made now, if new: the session is created at
// admission, not at arrival) on the request's place once the board's cursor has
// passed it. Before that it answers the place as takePlace does, making nothing. A
// claim sent again with its Idempotency-Key after its answer (and the new session's
// cookie) was lost is admitted as the buyer the first one made, in a new session;
// without the key it would be refused as another visitor's (place_claimed).
func (s *server) claimPlace(c echo.Context) error {
	ev, qe, on, err := s.placeEvent(c)
	if !on {
		return err
	}
	p, _, ok, err := s.placeOf(c, qe.ID)
	switch {
	case err != nil:
		return err
	case !ok:
		return errNoPlace
	}
	key := c.Request().Header.Get(idempotencyHeader)
	if key != "" && !validKey(key) {
		return errInvalidKey
	}
	ctx := c.Request().Context()
	visitor := s.pageBuyer(c)
	if ev.VerifiedOnly && !s.Queue.Owns(p, visitor) {
		return errNotYourPlace
	}
	if cl, tok, ok := s.sessionAdmission(c, qe.ID, visitor); ok && !s.admissionEnded(c, qe.ID, visitor, cl) {
		return c.JSON(http.StatusOK, placeJSON{queueJSON: queueView(waitroom.Status{Admitted: true, Token: tok, ExpiresAt: cl.ExpiresAt}), Placed: true, Turn: true})
	}
	b, err := s.board(ctx, qe)
	if err != nil {
		return err
	}
	if !p.Passed(b) {
		return c.JSON(http.StatusOK, placeView(p, b, true))
	}
	// A visitor without a session gets one only if admitted: a claim turned away at a
	// full room makes nothing. The address's limit on new sessions is looked at now
	// and counted at the admission.
	created := false
	if visitor == "" {
		if err := s.peekAddress(c, limitedBySessions); err != nil {
			return err
		}
		visitor, created = newBuyerID(), true
	}
	var st waitroom.Status
	if ev.VerifiedOnly {
		st, err = s.Queue.ClaimOwned(ctx, qe, p, visitor)
	} else {
		st, err = s.Queue.Claim(ctx, qe, p, visitor, key)
	}
	if err == nil && st.Visitor != "" {
		if !created {
			// The key is another visitor's claim's, sent with a session of its own.
			err = waitroom.ErrPlaceClaimed
		} else {
			// The first claim's answer, and the session it made, were lost on the way:
			// this browser is that claim's visitor, in a session made now.
			visitor = st.Visitor
		}
	}
	switch {
	case errors.Is(err, waitroom.ErrPlaceClaimed):
		return errPlaceClaimed
	case errors.Is(err, waitroom.ErrPlaceUsed):
		// The place is spent: without its cookie the next POST …/queue/place takes a new one.
		c.SetCookie(&http.Cookie{Name: placeCookieName(qe.ID), Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, Secure: s.CookieSecure, SameSite: http.SameSiteLaxMode})
		return errPlaceUsed
	case err != nil:
		return err
	case !st.Admitted:
		return c.JSON(http.StatusOK, placeView(p, b, true))
	}
	if _, verr := s.Queue.Verify(st.Token, qe.ID, visitor); verr != nil {
		return errors.Join(errors.New("a fresh admission token does not verify"), verr)
	}
	if created {
		// Counted, not refused: the peek let it through and the slot is taken.
		_ = s.limitAddress(c, limitedBySessions)
		s.Sessions.Put(ctx, buyerKey, visitor)
	}
	s.keepAdmission(c, qe.ID, st)
	if s.ProofOfWork {
		// The place was given for a proof of work: the session it admits has proved,
		// as a session that joined with one has, and its first hold asks no other.
		s.Sessions.Put(ctx, provedKey, true)
	}
	if created {
		if err := s.saveSession(c); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, placeJSON{queueJSON: queueView(st), Placed: true, Turn: true, Group: p.Group, Tiebreak: p.Tiebreak})
}

// placeView works a place's figures out from the board (known false: no board, the
// place alone): position, people ahead, the wait, and whether its turn has come.
func placeView(p waitroom.Place, b waitroom.Board, known bool) placeJSON {
	out := placeJSON{Placed: true, Group: p.Group, Tiebreak: p.Tiebreak, Epoch: p.Epoch}
	out.Number = p.Number
	if !known {
		out.PreQueue = p.Group == 0
		out.PollAfterSeconds = queueRetryAfter
		return out
	}
	// In the draw only if issued before it: a place of a later group read against a
	// board cached from before the draw is not drawn at random but queued after it.
	out.PreQueue = b.PreQueue && p.Group == 0
	out.Waiting = int(max(0, float64(b.Counted)-b.Passed))
	out.SeatsLeft, out.SoldOut, out.AllHeld = b.SeatsLeft, b.SoldOut, b.AllHeld
	out.PollAfterSeconds = pollSeconds(p.PollAfter(b))
	if p.Passed(b) {
		out.Turn = true
		return out
	}
	ahead := p.Ahead(b)
	out.Ahead, out.Position = ahead, ahead+1
	out.LikelyGone = waitroom.LikelyGone(out.Position, b.LastsFor)
	if !b.PreQueue && !out.LikelyGone {
		lo, est, hi := p.Wait(b)
		out.EtaSeconds, out.EtaMinSeconds, out.EtaMaxSeconds = nearSeconds(est), seconds(lo), seconds(hi)
	}
	return out
}
