package waitroom

import (
	"math"
	"strconv"
	"time"
)

// Codes of the scripts' replies (scripts.go).
const (
	codeNone        = 0 // neither waiting nor admitted
	codeAdmitted    = 1
	codeWaiting     = 2
	codeAdmittedNow = 3 // admitted by this very Join
)

// reply is joinScript's and statusScript's answer.
type reply struct {
	code    int64
	at      int64 // when the admission ends (Redis ms)
	rank    int64 // 0-based place in the queue; -1 when not waiting
	waiting int64
	now     int64 // Redis ms
	epoch   string
	mrate   float64 // measured admissions per second; <= 0 unknown
	stock   int64   // -1 unknown
	regroup int64   // end of a regroup (Redis ms); 0 none
	free    int64   // seats and places held by nobody; -1 unknown
	served  int64   // waiters let in from the queue's head so far
	place   float64 // the visitor's place (score) in the queue; -1 when not waiting
	free0   int64   // free places at the draw; -1 not yet known
	admits0 int64   // admissions then (from the queue and straight in)
	admits  int64   // admissions so far
	brate   float64 // admissions come back a second over the last minute; < 0 unknown
	active  int64   // slots in use at the last tick; -1 none yet
}

func parseReply(res []any) reply {
	rep := reply{rank: -1, stock: -1, free: -1, free0: -1}
	get := func(i int) any { return item(res, i) }
	rep.code = asInt(get(0), 0)
	rep.at = asInt(get(1), 0)
	rep.rank = asInt(get(2), -1)
	rep.waiting = asInt(get(3), 0)
	rep.now = asInt(get(4), 0)
	rep.epoch, _ = get(5).(string)
	rep.mrate = asFloat(get(6), -1)
	rep.stock = asInt(get(7), -1)
	rep.regroup = asInt(get(8), 0)
	rep.free = asInt(get(9), -1)
	rep.served = asInt(get(10), 0)
	rep.place = asFloat(get(11), -1)
	rep.free0 = asInt(get(12), -1)
	rep.admits0 = asInt(get(13), 0)
	rep.admits = asInt(get(14), 0)
	rep.brate = asFloat(get(15), -1)
	rep.active = asInt(get(16), -1)
	return rep
}

// item is a script reply's i-th element, nil past its end.
func item(res []any, i int) any {
	if i < len(res) {
		return res[i]
	}
	return nil
}

// figures are what every visitor of an event is told alike, worked out from the
// event's state as a script read it: Status and Board both give them.
type figures struct {
	drawAt    time.Time // the onsale, or the end of a regroup after Redis lost the queue
	preQueue  bool      // now is before drawAt
	rate      float64   // measured admissions per second; 0 while unknown
	seatsLeft int       // -1 unknown
	soldOut   bool      // nothing left to sell and nothing held that may lapse
	allHeld   bool      // something unsold, nothing free
	lastsFor  int       // about how many more admissions the unsold places serve (LastsFor); -1 unknown
	// pace is the admission rate a wait is worked out from (eta's measured): rate, or
	// while every slot is taken the rate at which admissions come back (paceRate).
	pace float64
}

// taken is what the admissions since the draw have taken: the admissions counted then
// and now, and the free places then (-1: not yet known) and now (-1: unknown); and
// what is left, the unsold places (-1: unknown).
type taken struct{ admits0, admits, free0, free, unsold int64 }

// figuresOf works them out: now and regroup in Redis ms, mrate <= 0 unknown, stock
// and free -1 unknown. Whether the draw has come is decided by Redis's clock, as the
// scripts decide it.
func figuresOf(ev Event, now, regroup int64, mrate float64, stock, free int64, tk taken) figures {
	f := figures{drawAt: ev.OnsaleAt, seatsLeft: int(stock), soldOut: stock == 0, allHeld: stock > 0 && free == 0,
		lastsFor: lastsFor(tk)}
	if rg := time.UnixMilli(regroup); regroup > 0 && rg.After(f.drawAt) {
		f.drawAt = rg
	}
	f.preQueue = time.UnixMilli(now).Before(f.drawAt)
	if mrate > 0 {
		f.rate = mrate
	}
	f.pace = f.rate
	return f
}

// withReturns sets the pace from the rate at which admissions came back over the
// last minute (back, < 0 unknown), given the slots in use at the last tick (active,
// < 0 unknown) and the settings s (paceRate).
func (f figures) withReturns(back float64, active int64, s Settings) figures {
	f.pace = paceRate(f.rate, back, active, s)
	return f
}

// paceRate is the admission rate the wait of the queue follows. While a slot is free
// the room admits at its rate, and the rate it measured (admissions over the last
// seconds) says so. While every slot is taken the next in line go in only as
// admissions come back: lapsed for want of a hold, bought, released or run out. Their
// rate over the last minute is then the pace, never below what full slots turning over
// once per token lifetime guarantee. The admissions of the last ten seconds, a handful
// when the slots are few, would make the wait jump with each one: with none, the
// measured rate is unknown and the configured rate's wait, seconds, is shown, up to
// the turnover's, many minutes.
func paceRate(measured, back float64, active int64, s Settings) float64 {
	if s.Slots <= 0 || active < int64(s.Slots) || back < 0 {
		return measured
	}
	return max(back, float64(s.Slots)/tokenTTL(s).Seconds())
}

// The places left may not last for everyone waiting. The room knows how many places
// are unsold (held ones included) and, since the draw, how many admissions it made and
// how many places they took (held or bought): at an onsale about four each. A waiter
// with more people ahead, itself included, than the unsold places would serve at that
// is told that the tickets may be gone before its turn, instead of a wait: should
// every held place come back, the people ahead would still take them all. Its turn, if
// it comes, comes only as holds lapse, at no rate anyone can tell.
//
// Replayed on make onsale's traces at 128/s (docs/BENCHMARKS.md) the rule warns about
// 5,450 waiters before any wait is shown them, none of whom is let in; of the buyers
// let in, 1,360 to 1,550 see it for a while (about 520 of them buy): late in a sale an
// admission takes fewer places than the ones before, as the seats run out. Counting on
// the free places alone, or on nine tenths of them, warns twice as many buyers who are
// let in all the same.
//
// lastsForMinAdmits is how many admissions the estimate waits for: the places an
// admission takes vary from none to the most an order allows.
const lastsForMinAdmits = 200

// lastsFor is about how many more admissions the unsold places serve, at the places
// the admissions since the draw have taken each; -1 while unknown: too few admissions
// yet, the figures missing, or none of them taking anything.
func lastsFor(tk taken) int {
	n := tk.admits - tk.admits0
	used := tk.free0 - tk.free
	if tk.free0 < 0 || tk.free < 0 || tk.unsold < 0 || n < lastsForMinAdmits || used <= 0 {
		return -1
	}
	return int(float64(tk.unsold) * float64(n) / float64(used))
}

// LikelyGone says whether the tickets may be gone before the turn of a waiter at
// position (itself included) when the free places last for lastsFor more admissions
// (Board.LastsFor, -1 unknown). The queue page says so from the board by the same
// rule (static/js/queue.js).
func LikelyGone(position, lastsFor int) bool {
	return lastsFor >= 0 && position > lastsFor
}

// asInt reads a Lua integer reply, or a number stored as a string in a hash.
func asInt(v any, def int64) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return int64(f)
		}
	}
	return def
}

func asFloat(v any, def float64) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return f
		}
	}
	return def
}

// status turns a script's reply into what the page shows. Whether the draw has come
// is decided by Redis's clock (rep.now), as the scripts decide it.
func (r *Room) status(ev Event, visitor string, rep reply) Status {
	now := time.UnixMilli(rep.now)
	f := figuresOf(ev, rep.now, rep.regroup, rep.mrate, rep.stock, rep.free,
		taken{admits0: rep.admits0, admits: rep.admits, free0: rep.free0, free: rep.free, unsold: rep.stock}).
		withReturns(rep.brate, rep.active, ev.Settings)
	drawAt := f.drawAt
	st := Status{
		Waiting: int(rep.waiting), SeatsLeft: f.seatsLeft, SoldOut: f.soldOut, AllHeld: f.allHeld,
		DrawAt: drawAt, PreQueue: f.preQueue, Rate: f.rate,
	}
	switch rep.code {
	case codeAdmitted, codeAdmittedNow:
		st.Admitted = true
		st.PreQueue = false
		st.ExpiresAt = time.UnixMilli(rep.at)
		st.Token = r.sign(ev.ID, visitor, st.ExpiresAt)
	case codeWaiting:
		st.Queued = true
		st.Place = rep.place
		if st.PreQueue {
			// Places are drawn at DrawAt: any place from the first to the last may come.
			_, mid, last := eta(st.Waiting-1, 0, ev.Settings)
			st.ETAMin = drawAt.Sub(now) + Notice // the first place goes in at the draw
			st.ETA = st.ETAMin + mid/2           // the middle place, on average
			st.ETAMax = st.ETAMin + last
		} else {
			st.Position = int(rep.rank) + 1
			st.Ahead = int(rep.rank)
			st.Number = rep.served + int64(st.Position)
			// Likely gone before its turn (lastsFor): no wait to tell either.
			st.LikelyGone = !st.AllHeld && LikelyGone(st.Position, f.lastsFor)
			if !st.AllHeld && !st.LikelyGone { // else nobody goes in until holds lapse: no honest figure
				st.ETAMin, st.ETA, st.ETAMax = eta(st.Ahead, f.pace, ev.Settings)
				if st.ETA > 0 {
					st.ETAMin, st.ETA, st.ETAMax = st.ETAMin+Notice, st.ETA+Notice, st.ETAMax+Notice
				}
			}
		}
	}
	st.PollAfter = pollAfter(st, drawAt.Sub(now))
	st.LookAfter = r.lookAfter(st, drawAt.Sub(now))
	return st
}

// Notice is how long after its turn comes a waiting page learns of it, about: the
// board it follows is up to a second old (a CDN keeps it a second), the page reads
// it every MinPoll when its turn is near, and then looks (Status) for its token:
// half a second, half a second, and the look. The wait a person sees ends when the
// page says it is their turn, so every ETA includes it (Board.Notice for the pages
// that work their wait out from the board). Without it, in make onsale at 128/s, a
// fifth of the first ETAs are more than 20 % too short and none too long; the
// pre-queue's, a few seconds for the first places, are the worst (71 % within ±20 %),
// and the replay of the same waits with it (go run ./cmd/onsale eta) puts them at 95 %.
const Notice = 1500 * time.Millisecond

// Bounds of PollAfter: DESIGN asks for a refresh at least every MaxPoll.
const (
	MinPoll = time.Second
	MaxPoll = 5 * time.Second
)

// pollAfter paces a visitor's page: every second when the turn (or the draw) may come
// within a few seconds, less often the further back, up to MaxPoll. Most of a crowd is
// far back, and their pages then cost the room a fifth of what asking every second
// would, while a visitor whose turn comes learns it within about a second, which is
// also what keeps the wait they see close to the ETA they were shown.
func pollAfter(st Status, untilDraw time.Duration) time.Duration {
	var d time.Duration
	switch {
	case st.PreQueue:
		d = untilDraw
	case st.Queued && st.ETAMin > 0:
		d = (st.ETAMin - Notice) / 4
	// No estimate (the room paused: no rate or no slots): nobody moves soon.
	default:
		d = MaxPoll
	}
	return min(max(d, MinPoll), MaxPoll)
}

// MaxLook bounds LookAfter: a waiter far back asks where it stands about once a
// minute (and keeps its place, which lasts KeepPlace unseen).
const MaxLook = time.Minute

// lookAfter is how soon a waiting page asks the room itself again. Between its looks
// the page follows the event's Board, the same for every waiter, and looks at once
// when the board shows its turn; a look keeps its place (KeepPlace unseen) and sets
// its position right (the board cannot know who ahead of it left).
//   - In the pre-queue: about once a minute until the draw, then once in the minute
//     after it, by its place (its number is drawn at the draw).
//   - Queued with its turn due within half of KeepPlace: at half of KeepPlace. The
//     board shows it its turn, which it looks at; this look comes only if the turn is
//     late, with half the place's life to spare. A look a minute would make the
//     arrival burst come back as a burst of looks a minute later, four times the
//     looks of the minute before, while the sale is at its rate.
//   - Queued further back, or with no wait to tell (the room paused, all held):
//     about once a minute, spread from half a minute to a minute and a half by its
//     number, so that a burst of arrivals does not come back as one.
//   - Not in the queue: at the board's pace (the page joins again).
func (r *Room) lookAfter(st Status, untilDraw time.Duration) time.Duration {
	keep := min(MaxLook, r.opt.KeepPlace/4)
	switch {
	case st.PreQueue && untilDraw < keep:
		// The draw comes before the next minute's look: after it, at a moment set by
		// the place, so that the pre-queue's looks come in the order of their turns,
		// spread over the minute (the board tells a page its turn and, from Drawn,
		// its position meanwhile). All at the draw, they would be a third of the
		// server's requests in the arrival burst (make onsale).
		return max(untilDraw, 0) + max(time.Duration(st.Place*float64(keep)), MinPoll)
	case st.PreQueue:
		return keep
	case st.Queued && st.ETA > 0 && st.ETA <= r.opt.KeepPlace/2:
		return max(r.opt.KeepPlace/2, MinPoll)
	case st.Queued:
		// The golden ratio's fractions of successive numbers spread evenly.
		spread := math.Mod(float64(st.Number)*0.6180339887498949, 1)
		return max(keep/2+time.Duration(spread*float64(keep)), MinPoll)
	}
	return st.PollAfter
}

// etaRate is the rate a wait is worked out from once one is measured (see eta).
func etaRate(measured float64, s Settings) float64 {
	if measured < heldBackBelow*s.Rate {
		return measured
	}
	return max(s.Rate, s.expect)
}

// ShownRate is the rate the room works a wait out from, given the rate it measured,
// the rate it admits at now (the governor's) and its configured rate: eta's rule, for
// the ETA replay (go run ./cmd/onsale eta) to replay an onsale's waits with exactly
// the rule the room uses.
func ShownRate(measured, present, configured float64) float64 {
	s := Settings{Rate: present, expect: configured * expectedShare(present/configured)}
	if measured <= 0 {
		return present
	}
	return etaRate(measured, s)
}

// heldBackBelow is the share of the present rate below which a measured rate says that
// something besides the rate holds admissions back. Above it the measured rate is the
// room's rate, give or take its lag and noise.
const heldBackBelow = 0.75

// eta estimates the wait of a visitor with ahead people before them (their own
// admission counts too) and bounds it. Zero when the room is paused (no rate or no
// slots), whatever it admitted in the last seconds: there is no honest figure to give.
//
// With a measured rate well below the room's present rate (s, as Limited), something
// else holds admissions back (full slots turning over): that rate's wait. Otherwise
// the room admits at its rate, and the wait is the rate the governor is expected to
// admit at (expectedShare): not the measured one, which averages the last rateWindow
// seconds and so lags a cut and the climb back after it, and not the present one
// alone, which after a short cut made every wait of minutes too long. The bounds are
// 0.8 and 1.25 times the estimate. Without a measured rate: the present rate's, since
// the room admits at that rate while slots are free; the bounds run from it to the
// wait of full slots turning over once per token lifetime, since every admission ends
// by then (stock aside). The estimate is not the middle of the bounds: the slow bound
// is a worst case, many times the likely wait.
func eta(ahead int, measured float64, s Settings) (lo, est, hi time.Duration) {
	n := float64(ahead + 1)
	secs := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	if s.Rate <= 0 || s.Slots <= 0 {
		return 0, 0, 0 // paused, whatever the last seconds' admissions were
	}
	if measured > 0 {
		rate := etaRate(measured, s)
		return secs(0.8 * n / rate), secs(n / rate), secs(1.25 * n / rate)
	}
	slow := min(s.Rate, float64(s.Slots)/tokenTTL(s).Seconds())
	return secs(n / s.Rate), secs(n / s.Rate), secs(n / slow)
}
