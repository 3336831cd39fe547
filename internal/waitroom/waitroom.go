// Package waitroom is the virtual waiting room in front of an onsale: a queue per event
// in Redis, one admitter across all app instances that lets visitors in at the rate
// PostgreSQL can serve, and signed admission tokens that the seat-selection and
// checkout calls verify by signature alone. Redis holds the queue; PostgreSQL still
// decides every seat.
//
// Each event has one sorted set of waiters. A place taken before the draw (the onsale)
// is a uniform random number below 1, so the pre-queue comes out shuffled; a place taken
// after it is the next of 1, 2, 3…, so later arrivals are first in, first out. A second
// sorted set holds the admitted and when each admission ends: the slots in use are the
// admissions that have not ended, so a shopper who vanishes gives the slot back when
// the admission lapses. The admitter moves waiters to admitted in one Lua script per
// event and tick, from a token bucket kept in Redis, so the rate holds across ticks and
// across a handover between instances.
//
// All the room's times are Redis's clock (TIME inside the scripts): every instance
// agrees on whether the onsale has come, who was seen when, and when an admission ends.
// The app's clock only checks a token's end in Verify.
//
// When Redis is lost, Join and Status fail fast with ErrUnavailable and Verify goes on.
// When Redis comes back empty (each instance remembers each event's epoch, a name kept
// in the event's state; a missing state it had seen means the keys were lost), waiters
// rejoin in random order during a regroup window, then admission resumes from an empty
// bucket. Admissions recorded before the loss are gone: their tokens still verify until
// they end, but their slots are not counted meanwhile, so for up to one token lifetime
// the room may have up to Slots more shoppers than configured. We accept that: the
// alternative is refusing shoppers who were let in.
//
// It imports keyring and go-redis only, never PostgreSQL's packages or booking: it
// decides who may try to buy, never what is sold.
package waitroom

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/keyring"
)

// Settings are one event's waiting-room knobs (stored on the event in PostgreSQL).
type Settings struct {
	Enabled  bool          // off: everyone passes straight through
	Slots    int           // concurrent shoppers admitted at once; 0 admits nobody
	Rate     float64       // admissions per second, across all instances; 0 pauses admission
	TokenTTL time.Duration // how long an admission lasts (and a slot is held) unless used up; 0: 10 minutes
	// Idle is how long an admission lasts without a hold: one whose visitor has held
	// nothing by then lapses, its slot going to the next in line (lifecycle.go); 0: 3
	// minutes. At TokenTTL or more it never comes before the token's own end.
	Idle time.Duration

	// expect is the rate the wait shown in the queue assumes (Room.Limited sets it,
	// from the governor: expectedShare); 0: Rate.
	expect float64
}

// Event is what the room needs to know of an event.
type Event struct {
	ID       int64
	OnsaleAt time.Time // before it, arrivals join the pre-queue, shuffled at the onsale
	Settings Settings
}

// Status is where a visitor stands, as the queue page and GET /queue show it.
//
// A visitor is Admitted, or Queued, or neither: never joined, lost the place (not seen
// for KeepPlace), or Redis lost the queue. The page then joins again.
type Status struct {
	Admitted  bool
	Token     string    // the signed admission token, when admitted
	ExpiresAt time.Time // when the admission ends, when admitted
	Queued    bool      // holds a place in the queue (or the pre-queue)
	Position  int       // 1-based place in the queue; 0 when admitted, and in the pre-queue (not drawn yet)
	Ahead     int       // people ahead
	Waiting   int       // people in the queue in all
	// ETAMin and ETAMax bound the wait from the measured admission rate; before it is
	// known, from the configured rate (the shortest) and the rate that full slots
	// turning over once per token lifetime guarantee (the longest). In the pre-queue
	// they run from the draw to the wait of the last place.
	ETAMin, ETAMax time.Duration
	// ETA is the likeliest wait, within those bounds (eta).
	ETA       time.Duration
	Rate      float64   // measured admissions per second; 0 while unknown
	PreQueue  bool      // before the draw: the order is drawn at the onsale
	DrawAt    time.Time // when the pre-queue is drawn: the onsale, or the end of a regroup after Redis lost the queue
	SoldOut   bool      // nothing left to sell and nothing held that may lapse
	SeatsLeft int       // seats and places left, as the stock hook last said; -1 before its first answer
	// AllHeld: something is unsold but nothing is free, everything left is held by
	// people paying; the queue moves only as their holds lapse, so there is no ETA.
	AllHeld bool
	// LikelyGone: more people are ahead (the visitor included) than the unsold places
	// are likely to serve (Board.LastsFor), so the tickets may be gone before the
	// visitor's turn, which then comes only as holds lapse: there is no ETA either.
	LikelyGone bool
	// PollAfter is how soon the visitor's page should refresh what it shows (pollAfter):
	// from the event's Board, which costs nothing per visitor.
	PollAfter time.Duration
	// LookAfter is how soon the page should ask Status again at the latest (lookAfter):
	// to keep the place, and to correct its position, which the board's figures give
	// only up to the waiters ahead who left since. It asks at once when the board's
	// Head reaches Place: its turn has come.
	LookAfter time.Duration
	// Number is the visitor's number in the line counted from its start: the board's
	// Served subtracted from it gives the position (fewer if some ahead leave); only
	// when Queued after the draw. Place is the visitor's place in the queue, which the
	// board's Head reaches at their turn; whenever Queued, the pre-queue too (a
	// pre-queue place is the random number the draw orders by), so that a waiter
	// drawn near the front learns of its turn from the board before it looks.
	Number int64
	Place  float64
	// Visitor is who the admission is for when not the caller: a claim sent again
	// with its first one's key is admitted as the first one's visitor (Room.Claim).
	Visitor string
}

// Claims are what a valid admission token says.
type Claims struct {
	EventID   int64
	Visitor   string // the id kept in the session, not the session token
	ExpiresAt time.Time
	KeyID     string
}

// Errors.
var (
	// ErrUnavailable: Redis is down or hanging; the queue is paused (503, Retry-After).
	// Admitted visitors are unaffected: their tokens verify without Redis.
	ErrUnavailable = errors.New("waiting room unavailable")
	// ErrInvalidToken wraps every reason a token is refused: forged, altered, expired,
	// another event, another visitor, an unknown (rotated-out) key.
	ErrInvalidToken = errors.New("invalid admission token")
)

// Key is one HMAC key; the first of a room's keys signs, the others still verify
// until they are removed (a token signed by a removed key is refused).
type Key = keyring.Key

// Stock is what an event has left to sell (Hooks.Stock); -1: not known.
type Stock struct{ Unsold, Free int }

var unknownStock = Stock{Unsold: -1, Free: -1}

// Hooks are what the room asks of the rest of the program.
type Hooks struct {
	// Events lists the events whose room is on and whose sale is open or about to
	// open: the admitter works on these.
	Events func(ctx context.Context) ([]Event, error)
	// Stock says what the event has left: Unsold, free or held-and-may-lapse (at 0
	// the admitter stops and the queue says sold out), and Free, held by nobody (at 0,
	// with some unsold, everything left is held: the admitter waits for holds to lapse
	// rather than let people in to find nothing, and the queue says so).
	Stock func(ctx context.Context, eventID int64) (Stock, error)
	// Admitted, if set, hears how many visitors this instance admitted to an event
	// with its room on (the metrics' admissions counter).
	Admitted func(eventID int64, n int)
	// Lapsed, if set, hears how many admissions this instance's admitter let lapse
	// for want of a hold in one tick, and how many admissions from the queue took
	// slots that such lapses gave back (reused) (the metrics' counters).
	Lapsed func(eventID int64, lapsed, reused int)
	// Load, if set, says how hard this instance is working: below 1 it answers within
	// its latency bound, at 1 or more it does not (internal/latency). While it is past
	// the bound the room admits slower than configured (governor.go).
	Load func() float64
}

// RedisTimeout is the default limit of a Redis call on a buyer's path, the room's and
// web's rate limiter's. It tells a Redis that hangs from one that answers late: at an
// onsale, with the machine saturated, a call's wait for a core counts against it, and
// a limit of a few hundred milliseconds turns arrivals away as paused and leaves the
// rate limiter standing open in the sale's busiest seconds (make onsale).
const RedisTimeout = time.Second

// Options tune a Room; zero values take defaults.
type Options struct {
	Tick      time.Duration // how often the admitter runs its script (default 200 ms)
	Lease     time.Duration // how long the admitter's lease lasts unrenewed (default 2 s)
	KeepPlace time.Duration // how long a waiter keeps the place unseen (default 5 min)
	// Timeout is each Redis call's limit; past it the queue is paused (default
	// RedisTimeout).
	Timeout time.Duration
	// Regroup is how long after Redis was found to have lost an event's queue joins
	// draw random places, as before an onsale: long enough for every waiting page to
	// check in once (they poll every 5 s). Default 10 s.
	Regroup time.Duration
	// Refresh is how often the admitter asks Hooks.Events and Hooks.Stock, which may
	// cost the database a query each (default 1 s).
	Refresh time.Duration
	// GroupSpan is how long one arrival group lasts after the draw (default 1 s):
	// arrivals within one are let in in random order, groups first in, first out.
	GroupSpan time.Duration
	// Flush is how often an instance adds its arrival counts to Redis (default 1 s).
	Flush time.Duration
	// Settle is how long after a group ends the cursor waits before entering it, so
	// that every instance has flushed its counts (default Flush + 1 s).
	Settle time.Duration
	// ClaimWindow is how long a place the cursor passed counts against the slots
	// unclaimed (default 30 s): a visitor who left passes the slot to the next then.
	ClaimWindow time.Duration
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Tick, 200*time.Millisecond)
	def(&o.Lease, 2*time.Second)
	def(&o.KeepPlace, 5*time.Minute)
	def(&o.Timeout, RedisTimeout)
	def(&o.Regroup, 10*time.Second)
	def(&o.Refresh, time.Second)
	def(&o.GroupSpan, time.Second)
	def(&o.Flush, time.Second)
	def(&o.Settle, o.Flush+time.Second)
	def(&o.ClaimWindow, 30*time.Second)
	return o
}

const (
	defaultTokenTTL = 10 * time.Minute
	defaultIdle     = 3 * time.Minute
	// maxMoves bounds the waiters one tick admits or drops per event, so that one script
	// never holds Redis for long (and Lua's unpack stays within its stack). It caps the
	// rate at maxMoves per tick: 5,000/s at the default tick.
	maxMoves = 1000
	// rateWindow is how many seconds of admissions the measured rate averages.
	rateWindow = 10
	// backWindow is how many seconds of admissions coming back (lapsed, left, ran
	// out) the come-back rate averages: while every slot is taken it is the pace of
	// the queue (paceRate), and a minute smooths the few a second a small room sees.
	backWindow = 60
	// claimSeconds is how long an admission counts as a claim on a free place, beside
	// the second it is in: the room lets in no more than the free places less the
	// claims (the scripts' unclaimed), the free figure being up to a second old. Ten
	// seconds would keep out the one buyer in a hundred who takes the last single
	// seat: one admission every 10 s, each wanting more than one seat, and 150 s for
	// the last seat while 6,400 wait; a claim that has held counts until it ages out. With a second, a few places that come back let in a few a second,
	// not the whole rate, and a person who takes longer to choose lets more in.
	claimSeconds = 1
	// keyIdle is how long an event's keys outlive its last join or tick.
	keyIdle = 48 * time.Hour
)

// Room is one instance's handle on the waiting room. Its methods are safe for
// concurrent use; Run is called once per Room.
type Room struct {
	rdb       redis.UniversalClient
	prefix    string
	keys      []Key
	verifiers map[string][]byte        // key id → secret, for every configured key
	placeMACs map[string]*keyring.MACs // key id → the place tokens' MACs (place.go)
	hooks     Hooks
	log       *slog.Logger
	opt       Options
	id        string // this instance, in the lease and the event fences

	epochs   sync.Map      // event id → the last epoch seen (string)
	epochSeq atomic.Uint64 // names fresh epochs

	rndMu sync.Mutex
	rnd   *mrand.Rand // pre-queue places

	holding atomic.Bool // whether this instance's admitter holds the lease
	gov     governor    // the share of the configured rate admitted now
	counter counter     // arrivals not yet flushed (arrivals.go)

	// onAdmit, when set (tests), hears of every admission this instance makes, at the
	// Redis time it made them; direct says Join let the visitor straight in.
	onAdmit func(eventID int64, visitors []string, at time.Time, direct bool)
	// unboundedClaims, when set (tests' negative controls), lets a claim go in over
	// the slots, as it did before claimScript looked at them.
	unboundedClaims bool
}

// New returns a Room over rdb with keys under prefix. keys[0] signs tokens. It panics
// without a key, or with a key lacking an id or secret: a configuration error to catch
// at start.
//
// rdb must have ContextTimeoutEnabled (New panics otherwise): go-redis lets a context's
// deadline cut a call short only with it, and without it a hanging Redis would hold
// each call for its read timeout (seconds) instead of Options.Timeout. The program's
// client has it (internal/app), and so do the tests' (internal/dbtest).
func New(rdb redis.UniversalClient, prefix string, keys []Key, hooks Hooks, log *slog.Logger, opt Options) *Room {
	ver := keyring.Verifiers("waitroom", keys)
	if log == nil {
		log = slog.Default()
	}
	r := &Room{rdb: rdb, prefix: prefix, keys: keys, verifiers: ver, placeMACs: placeMACs(ver), hooks: hooks, log: log, opt: opt.withDefaults()}
	if !contextTimeouts(rdb) {
		panic("waitroom: the Redis client needs ContextTimeoutEnabled, so that a hanging Redis cannot hold a call past Options.Timeout")
	}
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // crypto/rand.Read never fails (Go 1.24+)
	r.rnd = mrand.New(mrand.NewChaCha8(seed))
	r.id = rand.Text()[:12] // 60 random bits name this instance
	return r
}

// contextTimeouts reports whether rdb lets a context's deadline cut its calls short:
// one server's client or a cluster client with ContextTimeoutEnabled.
func contextTimeouts(rdb redis.UniversalClient) bool {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// seed makes pre-queue places reproducible (tests).
func (r *Room) seed(s uint64) {
	r.rndMu.Lock()
	defer r.rndMu.Unlock()
	var b [32]byte
	binary.LittleEndian.PutUint64(b[:], s)
	r.rnd = mrand.New(mrand.NewChaCha8(b))
}

func (r *Room) place() float64 {
	r.rndMu.Lock()
	defer r.rndMu.Unlock()
	return r.rnd.Float64()
}

func tokenTTL(s Settings) time.Duration {
	if s.TokenTTL <= 0 {
		return defaultTokenTTL
	}
	return s.TokenTTL
}

// IdleWindow is how long an admission with these settings lasts without a hold.
func IdleWindow(s Settings) time.Duration {
	if s.Idle <= 0 {
		return defaultIdle
	}
	return s.Idle
}

// bucketCap is how many admissions may go at once after a pause: two ticks' worth (so
// a late tick loses nothing), at least a second's worth (a tick delayed that long on a
// loaded machine still admits at the rate), at least one.
func (r *Room) bucketCap(s Settings) float64 {
	if s.Rate <= 0 {
		return 0
	}
	return math.Max(1, s.Rate*max(2*r.opt.Tick, time.Second).Seconds())
}

func (r *Room) knownEpoch(eventID int64) string {
	if v, ok := r.epochs.Load(eventID); ok {
		return v.(string)
	}
	return ""
}

func (r *Room) noteEpoch(eventID int64, ep string) {
	if ep != "" {
		r.epochs.Store(eventID, ep)
	}
}

func (r *Room) freshEpoch() string {
	return r.id + "." + strconv.FormatUint(r.epochSeq.Add(1), 36)
}

// lapseMS is the scripts' idle window: an admission that has held nothing this many
// ms after it began lapses; 0 when it would not come before the token's end.
func lapseMS(s Settings) int64 {
	if w := IdleWindow(s); w < tokenTTL(s) {
		return w.Milliseconds()
	}
	return 0
}

func (r *Room) idleMS(s Settings) int64 {
	return max(keyIdle, 2*tokenTTL(s), 2*r.opt.KeepPlace).Milliseconds()
}

// eval runs a script within the Room's timeout. Every failure but the caller's own
// cancellation is ErrUnavailable: Redis is down, hanging or refusing.
func (r *Room) eval(ctx context.Context, s *redis.Script, keys []string, args ...any) (any, error) {
	cctx, cancel := context.WithTimeout(ctx, r.opt.Timeout)
	defer cancel()
	res, err := s.Run(cctx, r.rdb, keys, args...).Result()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return res, nil
}

// script is eval for the scripts that answer an array.
func (r *Room) script(ctx context.Context, s *redis.Script, keys []string, args ...any) ([]any, error) {
	res, err := r.eval(ctx, s, keys, args...)
	if err != nil {
		return nil, err
	}
	a, ok := res.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: script answered %T, want an array", ErrUnavailable, res)
	}
	return a, nil
}

// Join puts visitor in the event's queue, keeping an existing place (or admission),
// and returns where they stand. With the room off, or free slots and nobody waiting,
// the visitor is admitted at once (with the room on, as fast as the rate allows).
func (r *Room) Join(ctx context.Context, ev Event, visitor string) (Status, error) {
	ev = r.limitedEvent(ev)
	s := ev.Settings
	if !s.Enabled {
		// No queue and no slots: the token only says the room let this visitor by.
		exp := time.Now().Add(tokenTTL(s)).Truncate(time.Millisecond)
		return Status{Admitted: true, Token: r.sign(ev.ID, visitor, exp), ExpiresAt: exp, SeatsLeft: -1}, nil
	}
	res, err := r.script(ctx, joinScript, eventKeys(r.prefix, ev.ID),
		visitor, r.knownEpoch(ev.ID), r.freshEpoch(), r.opt.Regroup.Milliseconds(), r.bucketCap(s),
		ev.OnsaleAt.UnixMilli(), s.Slots, s.Rate, tokenTTL(s).Milliseconds(), r.place(), r.idleMS(s), claimSeconds,
		lapseMS(s))
	if err != nil {
		return Status{}, err
	}
	rep := parseReply(res)
	r.noteEpoch(ev.ID, rep.epoch)
	if rep.code == codeAdmittedNow && r.hooks.Admitted != nil {
		r.hooks.Admitted(ev.ID, 1)
	}
	if rep.code == codeAdmittedNow && r.onAdmit != nil {
		r.onAdmit(ev.ID, []string{visitor}, time.UnixMilli(rep.now), true)
	}
	return r.status(ev, visitor, rep), nil
}

// Status says where visitor stands and marks them as still there (a waiter not seen
// for about five minutes loses the place). It never joins. It costs Redis one small
// script (one round trip).
func (r *Room) Status(ctx context.Context, ev Event, visitor string) (Status, error) {
	if !ev.Settings.Enabled {
		return r.Join(ctx, ev, visitor)
	}
	ev = r.limitedEvent(ev)
	res, err := r.script(ctx, statusScript, eventKeys(r.prefix, ev.ID), visitor)
	if err != nil {
		return Status{}, err
	}
	rep := parseReply(res)
	// A missing state is not noted: the Join that follows must still know the old epoch
	// to tell that Redis lost the queue.
	r.noteEpoch(ev.ID, rep.epoch)
	return r.status(ev, visitor, rep), nil
}
