package web

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/waitroom"
	"boxoffice/internal/zone"
	"boxoffice/static"
	"boxoffice/views"
)

// queuePoll is how often the queue page asks again, in seconds of a meta refresh for
// browsers without JavaScript (with it, at the room's pace: static/js/queue.js).
const queuePoll = "5"

// queueScript refreshes the queue page from the event's board and paces its looks.
var queueScript = static.URL("js/queue.js")

// showQueue is one visitor's waiting-room page (never cached). Opening it joins the
// queue, keeping a place already taken; its htmx request (a look) looks again (and
// rejoins at the end a visitor whose place was lost) and, once the visitor is
// admitted, sends the browser on to the seat map. Between looks, about a minute apart,
// the page refreshes what it shows every few seconds from the event's board, which
// costs the server one cached read for the whole crowd, and looks at once when the
// board shows its turn (queue.js). With the room off it sends the browser straight on.
// Redis away: a 503 page saying the queue is paused, which follows the board and looks
// again once the board answers. While joins need a proof of work, the page and its
// looks never join: a visitor who stands nowhere gets the join form, which the page's
// script sends once the proof is solved (joinQueueForm).
func (s *server) showQueue(c echo.Context) error {
	ev, on, err := s.roomOf(c)
	if !on {
		return err
	}
	ask := queueJoin
	switch {
	case s.ProofOfWork:
		ask = queueLook
	case isHTMX(c):
		ask = queueRejoin
	}
	return s.queuePage(c, ev, ask)
}

// joinQueueForm joins the waiting room from the queue page's form, with the proof the
// page's widget solved (X-Altcha from htmx, or the form's field). Refused, it says why,
// with the way back to the queue; joined, it answers as the queue page: the status to
// htmx, the page itself (by a redirect) to a plain form.
func (s *server) joinQueueForm(c echo.Context) error {
	ev, on, err := s.roomOf(c)
	if !on {
		return err
	}
	if err := s.proveJoin(c, ev); err != nil {
		return &onwardError{err: proofPageError(err, "join"), next: views.ActionLink{Href: queueURL(ev), Text: "Back to the waiting room"}}
	}
	if isHTMX(c) {
		return s.queuePage(c, ev, queueJoin)
	}
	if _, err := s.queueStatus(c, ev, queueJoin); err != nil && !errors.Is(err, waitroom.ErrUnavailable) {
		return err
	}
	return c.Redirect(http.StatusSeeOther, queueURL(ev))
}

// roomOf is the event of a queue page's address and whether its room is on. With the
// room off it has answered already, sending the browser on to the seats; err is then
// what to return.
func (s *server) roomOf(c echo.Context) (booking.Event, bool, error) {
	ev, err := s.eventBySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return ev, false, err
	}
	if ev.VerifiedOnly && !s.verifiedFor(c, ev.ID) {
		return ev, false, seeOther(c, verifyURL(ev))
	}
	if !ev.QueueEnabled {
		return ev, false, seeOther(c, seatsURL(ev, ""))
	}
	return ev, true, nil
}

// queuePage answers the queue page, or to htmx its status, after asking the room.
func (s *server) queuePage(c echo.Context, ev booking.Event, ask queueAsk) error {
	seats := seatsURL(ev, "")
	st, err := s.queueStatus(c, ev, ask)
	qe, rerr := s.room(c, ev) // the room queueStatus asked, from the same second's reads
	if rerr != nil {
		qe = ev.Room()
	}
	var start int
	if err == nil {
		start = s.keepQueueStart(c, qe.ID, st)
	}
	status := http.StatusOK
	switch {
	case errors.Is(err, waitroom.ErrUnavailable):
		status = http.StatusServiceUnavailable
		c.Response().Header().Set("Retry-After", strconv.Itoa(queueRetryAfter))
	case err != nil:
		return err
	case st.Admitted && !isHTMX(c):
		return c.Redirect(http.StatusSeeOther, seats)
	case st.Admitted:
		c.Response().Header().Set("HX-Redirect", seats)
	}
	q := queueStatusModel(ev, st, start, time.Now())
	_, q.Presale = booking.RoomEvent(qe.ID)
	q.BoardURL = roomBoardURL(ev, qe)
	q.Paused = status == http.StatusServiceUnavailable
	if !st.Admitted && !q.Paused {
		q.Lapsed = s.lapsedNotice(c, qe, s.pageBuyer(c))
	}
	if q.Paused {
		// The board fails too while Redis is away; the page looks as soon as it
		// answers again, so a look of its own is only the fallback.
		q.PollAfter, q.LookAfter = queueRetryAfter, seconds(waitroom.MaxLook)
	}
	p := buyerPage(c, "Waiting room: "+ev.Name)
	p.Refresh = queuePoll
	p.Scripts = append(p.Scripts, countdownScript, queueScript)
	qp := views.QueuePage{Page: p, Event: eventHeader(ev, time.Now()), Status: q}
	if s.ProofOfWork {
		qp.Scripts = append(qp.Scripts, proofScript)
		if !q.Paused && !st.Admitted && !st.Queued && !st.SoldOut {
			qp.Join = &views.QueueJoin{Action: queueURL(ev), CSRF: p.CSRFToken, Proof: proofBox("join")}
			qp.Refresh = "" // nothing changes by itself until the visitor joins
			return renderPersonal(c, status, views.QueuePageView(qp), views.QueueJoinView(*qp.Join))
		}
	}
	return renderPersonal(c, status, views.QueuePageView(qp), views.QueueStatusView(q))
}

// queueStatusModel words a place in the queue; start is how many were ahead when the
// visitor joined (0: not known).
func queueStatusModel(ev booking.Event, st waitroom.Status, start int, now time.Time) views.QueueStatus {
	q := views.QueueStatus{
		URL: queueURL(ev), SeatsURL: seatsURL(ev, ""), BoardURL: boardURL(ev),
		Admitted: st.Admitted, SoldOut: st.SoldOut, PreQueue: st.PreQueue, AllHeld: st.AllHeld, LikelyGone: st.LikelyGone,
		DrawAt:   drawTime(cmp.Or(st.DrawAt, ev.OnsaleAt), now, ev.Zone),
		DrawISO:  cmp.Or(st.DrawAt, ev.OnsaleAt).UTC().Format(time.RFC3339),
		DrawIn:   untilText(cmp.Or(st.DrawAt, ev.OnsaleAt).Sub(now)),
		Position: ordertext.Thousands(st.Position),
		Ahead:    aheadText(st.Ahead),
		Wait:     waitText(st.ETAMin, st.ETAMax, st.Ahead),
		Odds:     oddsText(st.SeatsLeft, st.Ahead),
	}
	q.PollAfter, q.LookAfter = pollSeconds(st.PollAfter), pollSeconds(st.LookAfter)
	if st.Queued {
		q.Place = strconv.FormatFloat(st.Place, 'f', -1, 64)
	}
	if st.Number > 0 {
		q.Number, q.Served = st.Number, st.Number-int64(st.Position)
	}
	q.Total = max(start, st.Ahead, 1)
	q.Done = q.Total - st.Ahead
	q.Percent = strconv.Itoa(q.Done*100/q.Total) + "%"
	return q
}

// boardURL is the event's queue board (getBoard), which the queue page follows.
func boardURL(ev booking.Event) string {
	return "/api/v1/events/" + strconv.FormatInt(ev.ID, 10) + "/queue/board"
}

// roomBoardURL is the board of room qe of the event: its presale's is asked with
// room=presale (getBoard).
func roomBoardURL(ev booking.Event, qe waitroom.Event) string {
	if _, presale := booking.RoomEvent(qe.ID); presale {
		return boardURL(ev) + "?room=" + presaleRoomParam
	}
	return boardURL(ev)
}

// drawTime says when the pre-queue's order is drawn, on the clocks of the event's
// zone loc: the time alone on the day, with the date before.
func drawTime(at, now time.Time, loc *time.Location) string {
	if zone.Day(at, loc) == zone.Day(now, loc) {
		return zone.Clock(at, loc)
	}
	return zone.When(at, loc)
}

// aheadText says how many people are ahead. The texts of aheadText, waitText, oddsText
// and roughly are also written by static/js/queue.js from the board, in the same words
// (TestBrowserQueueWordsAsServer holds them to it).
func aheadText(n int) string {
	switch n {
	case 0:
		return "Nobody is ahead of you."
	case 1:
		return "1 person is ahead of you."
	}
	return ordertext.Thousands(n) + " people are ahead of you."
}

// waitText words the estimated wait as the range the room measured.
func waitText(lo, hi time.Duration, ahead int) string {
	switch {
	case ahead == 0 && hi < time.Minute:
		return "any moment now"
	case hi <= 0:
		return "not known yet: it is measured from how fast people are let in"
	case hi < time.Minute:
		return "less than a minute"
	case hi > 90*time.Minute:
		a, b := int(lo/time.Hour), int(math.Ceil(hi.Hours()))
		if a >= b || a == 0 {
			return "about " + countOf(b, "hour")
		}
		return fmt.Sprintf("about %d to %d hours", a, b)
	}
	a, b := int(lo/time.Minute), int(math.Ceil(hi.Minutes()))
	switch {
	case a >= b:
		return "about " + countOf(b, "minute")
	case a == 0:
		return "up to " + countOf(b, "minute")
	}
	return fmt.Sprintf("about %d to %d minutes", a, b)
}

// countOf says how many of a unit: "1 minute", "5 minutes".
func countOf(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// oddsText puts the seats left next to the people ahead, as honestly as both are
// known: seats roughly (the count moves by the second), people exactly.
func oddsText(left, ahead int) string {
	if left <= 0 {
		return ""
	}
	people := "nobody ahead of you"
	switch {
	case ahead == 1:
		people = "1 person ahead of you"
	case ahead > 1:
		people = ordertext.Thousands(ahead) + " people ahead of you"
	}
	return fmt.Sprintf("About %s seats left, %s.", ordertext.Thousands(roughly(left)), people)
}

// roughly rounds to two significant figures: 1,234 is about 1,200.
func roughly(n int) int {
	if n < 100 {
		return n
	}
	p := int(math.Pow10(len(strconv.Itoa(n)) - 2))
	return (n + p/2) / p * p
}
