package web

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/iowait"
	"boxoffice/internal/waitroom"
)

// The waiting room's side of the web: where a visitor stands, and the admission token
// kept in the session. The room (internal/waitroom) decides; this file asks it for the
// session's visitor, the buyer id (not the session token, which changes at login).

// admissionHeader lets an API client that keeps no cookie jar between the queue call and
// the seat calls send its admission token back; with the cookies it is not needed: the
// admission cookie (admissionCookie) brings the token of the event back.
const admissionHeader = "X-Admission-Token"

// queueRetryAfter is the Retry-After, in seconds, of a paused queue and of a caller
// not yet admitted: about as often as the queue page looks again.
const queueRetryAfter = 5

// errQueuePaused is the answer to a new arrival while Redis is away: admitted buyers
// keep buying (their tokens verify without Redis), everyone else waits a moment.
var errQueuePaused = &apiError{Status: http.StatusServiceUnavailable, Code: "queue_paused", RetryAfter: queueRetryAfter,
	Message: "The waiting room is paused for a moment; nobody is let in until it is back. Try again in a few seconds."}

// leaveTimeout bounds giving a slot back after a release or a purchase: the buyer's
// answer must not wait on a Redis that hangs (the slot then lapses with the token).
const leaveTimeout = 500 * time.Millisecond

// An admission's token is kept in a cookie of its own, one an event, until the token
// expires. It needs no keeping on the server: the token is signed and bound to the
// session's buyer, so a cookie another visitor copies, or a client makes up, verifies
// for nobody else. In the session it would cost every admitted buyer a second session
// write (an INSERT and a commit) at the rate the room admits, while the sale runs:
// more than a third of the commits PostgreSQL makes in a 128/s onsale
// (docs/BENCHMARKS.md).
const admissionCookie = "admission-"

func admissionCookieName(eventID int64) string {
	return admissionCookie + strconv.FormatInt(eventID, 10)
}

// admissionKey is where sessions admitted before the cookie keep their token: read,
// no longer written, so that a deploy does not send admitted buyers back to the queue.
func admissionKey(eventID int64) string { return "admission:" + strconv.FormatInt(eventID, 10) }

// keepAdmission sets the admission cookie for st's token, to expire with it.
func (s *server) keepAdmission(c echo.Context, eventID int64, st waitroom.Status) {
	c.SetCookie(&http.Cookie{
		Name: admissionCookieName(eventID), Value: st.Token, Path: "/", Expires: st.ExpiresAt,
		HttpOnly: true, Secure: s.CookieSecure, SameSite: http.SameSiteLaxMode,
	})
}

// The queue page's progress bar starts from how many were ahead of the visitor when
// the page first saw them waiting (or when the draw placed them). That figure is kept
// in a cookie of its own, set and read by the queue page alone: it decides nothing,
// and in the session it cost every arrival a second session write (and every
// pre-queue visitor one more at the draw), in the minute when the crowd arrives and
// the database is busiest. API clients get the figures themselves (ahead, waiting).
const queueStartCookie = "queue-start-"

// queueStartMaxAge is how long the progress bar's start is kept: a waiting room lasts
// hours at most.
const queueStartMaxAge = 24 * 60 * 60

func queueStartName(eventID int64) string {
	return queueStartCookie + strconv.FormatInt(eventID, 10)
}

// queueStart is the progress bar's start, as the request's cookie says (0: not known).
func queueStart(c echo.Context, eventID int64) int {
	ck, err := c.Cookie(queueStartName(eventID))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(ck.Value)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// keepQueueStart moves the progress bar's start in the answer's cookie along with the
// visitor's status: up to how many are ahead when more are than the cookie says
// (joined, or placed by the draw), cleared once admitted. It answers the start to
// show. The cookie goes only to the event pages, where the queue page is.
func (s *server) keepQueueStart(c echo.Context, eventID int64, st waitroom.Status) int {
	start := queueStart(c, eventID)
	ck := &http.Cookie{
		Name: queueStartName(eventID), Value: strconv.Itoa(st.Ahead), Path: "/events/",
		MaxAge: queueStartMaxAge, HttpOnly: true, Secure: s.CookieSecure, SameSite: http.SameSiteLaxMode,
	}
	switch {
	case st.Admitted && start > 0:
		ck.Value, ck.MaxAge = "", -1
	case st.Admitted || st.Ahead <= start:
		return start
	}
	c.SetCookie(ck)
	return max(start, st.Ahead)
}

// eventCacheTTL is how long an event's settings are used before they are read again:
// turning a waiting room on or off takes effect within it. The queue's position checks
// and the admission check in front of every seat call would otherwise each cost a
// query.
const eventCacheTTL = time.Second

// eventCache keeps events for eventCacheTTL, by id and by slug, each read loading both.
// Only events that exist are kept, so the maps stay as small as the catalogue.
type eventCache struct {
	byID   *ttlCache[int64, booking.Event]
	bySlug *ttlCache[string, booking.Event]
}

func newEventCache() *eventCache {
	return &eventCache{byID: newTTLCache[int64, booking.Event](eventCacheTTL), bySlug: newTTLCache[string, booking.Event](eventCacheTTL)}
}

// eventByID is the event, at most eventCacheTTL old.
func (s *server) eventByID(ctx context.Context, id int64) (booking.Event, error) {
	return s.events.byID.get(ctx, id, func(ctx context.Context) (booking.Event, error) {
		ev, err := s.Buyer.Event(ctx, id)
		if err == nil {
			s.events.bySlug.put(ev.Slug, ev)
		}
		return ev, err
	})
}

// eventBySlug is the event of a page address, at most eventCacheTTL old.
func (s *server) eventBySlug(ctx context.Context, slug string) (booking.Event, error) {
	return s.events.bySlug.get(ctx, slug, func(ctx context.Context) (booking.Event, error) {
		ev, err := s.Buyer.EventBySlug(ctx, slug)
		if err == nil {
			s.events.byID.put(ev.ID, ev)
		}
		return ev, err
	})
}

// sessionAdmission is the session's admission to the event, if it holds a valid one, in
// the admission cookie (or, admitted before the cookie, in the session): checked by
// signature alone, no Redis.
func (s *server) sessionAdmission(c echo.Context, eventID int64, visitor string) (waitroom.Claims, string, bool) {
	if visitor == "" {
		return waitroom.Claims{}, "", false
	}
	if ck, err := c.Cookie(admissionCookieName(eventID)); err == nil {
		if cl, err := s.Queue.Verify(ck.Value, eventID, visitor); err == nil {
			return cl, ck.Value, true
		}
	}
	tok := s.Sessions.GetString(c.Request().Context(), admissionKey(eventID))
	if tok == "" {
		return waitroom.Claims{}, "", false
	}
	cl, err := s.Queue.Verify(tok, eventID, visitor)
	return cl, tok, err == nil
}

// queueAsk is how a queue status is asked for.
type queueAsk int

const (
	queueLook   queueAsk = iota // where the visitor stands, never joining
	queueJoin                   // join, keeping an existing place or admission
	queueRejoin                 // look, and join again at the end if the place was lost
)

// queueStatus says where the session's visitor stands in the event's queue (see
// queueAsk). A visitor who lost the place was gone too long, or Redis came back
// empty. A session already holding a valid admission that has not ended is admitted
// without asking more of Redis, so that admitted buyers are unaffected when it is
// away. An admission is kept in a cookie, whose requests then need no header. With
// the room off everyone is admitted, no token needed. An onsale for verified buyers
// queues only sessions that confirmed an email (errNotVerified): their visitor is the
// address's buyer id, so one address has one place however many sessions join. A
// presale's code holders stand in its room (room); before the onsale, a session
// without a code stands nowhere (presaleOnly).
func (s *server) queueStatus(c echo.Context, ev booking.Event, ask queueAsk) (waitroom.Status, error) {
	if ev.VerifiedOnly && !s.verifiedFor(c, ev.ID) {
		return waitroom.Status{}, errNotVerified
	}
	if !ev.QueueEnabled {
		return waitroom.Status{Admitted: true}, nil
	}
	qe, err := s.room(c, ev)
	if err != nil {
		return waitroom.Status{}, roomRefused(c, ev, err)
	}
	visitor := s.pageBuyer(c)
	if cl, tok, ok := s.sessionAdmission(c, qe.ID, visitor); ok && !s.admissionEnded(c, qe.ID, visitor, cl) {
		return waitroom.Status{Admitted: true, Token: tok, ExpiresAt: cl.ExpiresAt}, nil
	}
	created := false
	if visitor == "" {
		if ask == queueLook {
			return waitroom.Status{}, nil // a session that never joined stands nowhere
		}
		// A new buyer is saved once, with what the join puts in the session (save
		// below). Should that save fail, the answer is the error and the place or
		// admission made for this id lapses unused (KeepPlace, the token's lifetime).
		var err error
		if visitor, created, err = s.newBuyer(c); err != nil {
			return waitroom.Status{}, err
		}
	}
	st, err := s.askRoom(c, qe, visitor, ask)
	if created && err == nil {
		err = s.saveSession(c)
	}
	return st, err
}

// askRoom is queueStatus's question to the room, keeping an admission in the session.
func (s *server) askRoom(c echo.Context, qe waitroom.Event, visitor string, ask queueAsk) (waitroom.Status, error) {
	ctx := c.Request().Context()
	var st waitroom.Status
	var err error
	if ask == queueJoin {
		st, err = s.join(c, qe, visitor)
	} else {
		s.afterHolds(ctx, visitor)
		st, err = s.Queue.Status(ctx, qe, visitor)
		if err == nil && ask == queueRejoin && !st.Admitted && !st.Queued {
			st, err = s.join(c, qe, visitor)
		}
	}
	if err != nil {
		return st, err
	}
	if st.Admitted {
		if _, verr := s.Queue.Verify(st.Token, qe.ID, visitor); verr != nil {
			// The room signed what it cannot verify: the keys are wrong. Better an
			// error than sending the buyer round between the seat page and the queue.
			return st, errors.Join(errors.New("a fresh admission token does not verify"), verr)
		}
		s.keepAdmission(c, qe.ID, st)
	}
	return st, nil
}

// leaveQueue gives the buyer's slot back (they bought, or released what they held),
// so that the next in the queue comes in, and ends the admission: its token starts no
// second round. It never fails the request: a slot not given back lapses with its
// token.
func (s *server) leaveQueue(ctx context.Context, eventID int64, buyer string) {
	s.afterHolds(ctx, buyer)
	s.roomCall(ctx, eventID, buyer, "waiting room slot not given back", func(ctx context.Context, roomID int64) error {
		return s.Queue.Leave(ctx, roomID, buyer)
	})
}

// admissionLasts makes the buyer's admission last as long as the hold just made with
// it: the slot stays taken while they hold seats and pay, and the queue calls hand out
// tokens that last as long. It runs once the hold's answer is out, not before: the
// buyer waits for the seats, not for this Redis call. What reads or ends the buyer's
// admission on this instance first waits for it (afterHolds). It never fails the
// request: an admission not extended still lets its hold be checked out and paid
// (admitted).
func (s *server) admissionLasts(ctx context.Context, eventID int64, buyer string, until time.Time) {
	if buyer == "" {
		return
	}
	if ev, err := s.eventByID(ctx, eventID); err != nil || !ev.QueueEnabled {
		return // no room, no admission: no goroutine for nothing (roomCall asks again)
	}
	ctx = iowait.Detach(context.WithoutCancel(ctx))
	s.Afterwards.Go(buyer, func() {
		s.roomCall(ctx, eventID, buyer, "waiting room admission not extended to the hold", func(ctx context.Context, roomID int64) error {
			return s.Queue.Extend(ctx, roomID, buyer, until)
		})
	})
}

// afterHolds waits for the buyer's admission to be extended to the holds just made
// (admissionLasts), or for ctx to end.
func (s *server) afterHolds(ctx context.Context, buyer string) {
	_ = s.Afterwards.Wait(ctx, buyer) // a request gone away reads what there is
}

// roomCall makes call, a change to the buyer's admission in the room the event's holds
// are made with (roomOfHolds), when the event's room is on, within leaveTimeout: the
// buyer's answer must not wait on a Redis that hangs. A failure is logged as failed,
// never returned.
func (s *server) roomCall(ctx context.Context, eventID int64, buyer, failed string, call func(context.Context, int64) error) {
	if buyer == "" {
		return
	}
	ev, err := s.eventByID(ctx, eventID)
	if err != nil || !ev.QueueEnabled {
		return
	}
	roomID := s.roomOfHolds(ctx, ev)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	if err := call(ctx, roomID); err != nil {
		s.Log.WarnContext(ctx, failed, "event", eventID, "err", err)
	}
}

// queueJSON is the answer of the queue calls: the documented admitted, position and
// etaSeconds, the token once admitted, and what the queue page shows.
type queueJSON struct {
	Admitted      bool       `json:"admitted"`
	Position      int        `json:"position"`
	EtaSeconds    int        `json:"etaSeconds"`
	Token         string     `json:"token,omitempty"`
	ExpiresAt     *time.Time `json:"expiresAt,omitempty"`
	Ahead         int        `json:"ahead"`
	Waiting       int        `json:"waiting"`
	EtaMinSeconds int        `json:"etaMinSeconds"`
	EtaMaxSeconds int        `json:"etaMaxSeconds"`
	SeatsLeft     int        `json:"seatsLeft"`
	SoldOut       bool       `json:"soldOut"`
	PreQueue      bool       `json:"preQueue"`
	// AllHeld: nothing is free, everything left is held by people paying; the queue
	// moves only if their holds lapse (etaSeconds 0: there is no honest figure).
	AllHeld bool `json:"allHeld"`
	// LikelyGone: more people are ahead, the waiter included, than the places held by
	// nobody are likely to serve (the board's lastsFor): the tickets may be gone
	// before its turn, which then comes only as holds lapse (etaSeconds 0).
	LikelyGone bool `json:"likelyGone"`
	// PollAfterSeconds is when to refresh what the page shows: from the board (GET
	// …/queue/board) while waiting, the queue page's own pace (waitroom.pollAfter).
	PollAfterSeconds int `json:"pollAfterSeconds"`
	// LookAfterSeconds is when to ask GET …/queue again at the latest (about once a
	// minute while waiting; at once when the board's head reaches place).
	LookAfterSeconds int `json:"lookAfterSeconds"`
	// Number is the waiter's number in the line (the board's served subtracted from it
	// is the position; only while waiting after the draw), Place its place, which the
	// board's head reaches at its turn (while waiting, in the pre-queue too).
	Number int64    `json:"number,omitempty"`
	Place  *float64 `json:"place,omitempty"`
}

func queueView(st waitroom.Status) queueJSON {
	lo, hi := seconds(st.ETAMin), seconds(st.ETAMax)
	out := queueJSON{
		Admitted: st.Admitted, Position: st.Position, EtaSeconds: nearSeconds(st.ETA), Token: st.Token,
		Ahead: st.Ahead, Waiting: st.Waiting, EtaMinSeconds: lo, EtaMaxSeconds: hi,
		SeatsLeft: st.SeatsLeft, SoldOut: st.SoldOut, PreQueue: st.PreQueue, AllHeld: st.AllHeld,
		LikelyGone: st.LikelyGone, PollAfterSeconds: pollSeconds(st.PollAfter), LookAfterSeconds: pollSeconds(st.LookAfter),
		Number: st.Number,
	}
	if st.Queued {
		place := st.Place
		out.Place = &place
	}
	if !st.ExpiresAt.IsZero() {
		at := st.ExpiresAt.UTC()
		out.ExpiresAt = &at
	}
	return out
}

// pollSeconds is a page's pace in whole seconds; a status without one (the room off,
// or never joined) is asked again at the slowest pace.
func pollSeconds(d time.Duration) int {
	if d <= 0 {
		d = waitroom.MaxPoll
	}
	return seconds(d)
}

// nearSeconds rounds an estimate to the nearest second, and a wait under half a second
// up to one: zero says there is no estimate.
func nearSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return max(int(d.Round(time.Second)/time.Second), 1)
}

// seconds rounds a wait up to whole seconds: an estimate errs on the long side.
func seconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// lookSlots serves a waiting page's look (GET …/queue) only when one of a few slots is
// free, before anything else is done for it: at an onsale the looks are most of the
// requests (85 % in make onsale), and each waits a few seconds between looks anyway,
// while a shopper's hold waits on every millisecond. When the crowd outgrows the
// machine its looks are answered later, and the sale is not slowed down by them.
//
// The wait is bounded (maxLookWait): past it the look goes ahead without a slot, so
// that when the sale itself fills the machine a waiting page still hears within a
// second or so that its turn has come, and no page times out. (At 130 admissions a
// second, unbounded looks waited past the simulator's 30 s limit.)
func (s *server) lookSlots(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		select {
		case s.looks <- struct{}{}: // a slot is free: no timer for the common case
		default:
			t := time.NewTimer(cmp.Or(s.lookWait, maxLookWait))
			defer t.Stop()
			select {
			case s.looks <- struct{}{}:
			case <-t.C: // waited long enough: go ahead beside the others
				return next(c)
			case <-c.Request().Context().Done():
				return c.Request().Context().Err()
			}
		}
		defer func() { <-s.looks }()
		return next(c)
	}
}

// maxLookWait bounds how long a look waits for a slot (lookSlots).
const maxLookWait = time.Second

// pageLookSlots is lookSlots for the queue page: its htmx request is a look; the page
// itself (a first visit, which joins) is not held back.
func (s *server) pageLookSlots(next echo.HandlerFunc) echo.HandlerFunc {
	limited := s.lookSlots(next)
	return func(c echo.Context) error {
		if isHTMX(c) {
			return limited(c)
		}
		return next(c)
	}
}
