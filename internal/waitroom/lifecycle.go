package waitroom

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// An admission's life. It begins when the admitter (or a Join) lets the visitor in,
// for the token's lifetime (Settings.TokenTTL), and ends:
//   - early, when its shopper leaves (Leave: bought, or released what they held);
//   - early, when its shopper has held nothing within the idle window (Settings.Idle):
//     it lapses, so that a visitor who walked away does not keep a slot from the next
//     in line for the whole token lifetime. The admitter's script decides it, by
//     Redis's clock, from fresh (each admission's deadline until its first hold);
//   - at the token's end, or at the end of the hold made with it if that is later
//     (Extend), so that a buyer paying never loses the slot.
//
// A token of an admission that ended early still verifies by its signature; EndOf
// tells, with one Redis round trip, that it ended and why. Its visitor starts again
// in the queue.

// End is how an admission ended early, as EndOf says; a later value says more (a
// caller holding several tokens keeps the greatest).
type End int

const (
	Running End = iota // not ended early (it may still run out at its token's end)
	Left               // its purchase completed, or its hold was released (Leave)
	Lapsed             // nothing was held within the idle window
)

// leaveScript gives ARGV[1]'s slot (or place) back at once. An admission that ends
// so is noted in ended with the end it had: its tokens are refused from now on
// (EndOf), and a new admission of the visitor ends later than it (later). A running
// one counts as come back (back), for the ETA. ARGV[2] is how long ended lives idle
// (ms).
var leaveScript = redis.NewScript(luaClock + `
local now = clock()
local exp = tonumber(redis.call('ZSCORE', KEYS[3], ARGV[1]))
if exp then
  redis.call('ZADD', KEYS[6], 'GT', exp, ARGV[1])
  redis.call('PEXPIRE', KEYS[6], ARGV[2])
  redis.call('ZREM', KEYS[3], ARGV[1])
  if exp > now then
    redis.call('HINCRBY', KEYS[9], math.floor(now / 1000), 1)
    redis.call('PEXPIRE', KEYS[9], ARGV[2])
  end
end
redis.call('ZREM', KEYS[7], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`)

// extendScript is ARGV[1]'s hold come: the admission lasts until at least ARGV[2]
// (Redis ms), the end of the hold, so that the slot stays taken while they pay, and it
// no longer lapses for want of a hold (fresh). An admission that lapsed while the hold
// was being made (its admission check came just before the lapse) is restored: the
// visitor holds seats, and their slot must count again, or the room would let one more
// in for it. An admission that ended otherwise (or never began) is left so.
var extendScript = redis.NewScript(`
local v = ARGV[1]
redis.call('ZREM', KEYS[7], v)
local exp = tonumber(redis.call('ZSCORE', KEYS[3], v))
if not exp then
  exp = tonumber(redis.call('ZSCORE', KEYS[8], v))
  if not exp then return 0 end
  redis.call('ZREM', KEYS[8], v)
  redis.call('ZREM', KEYS[1], v)
  redis.call('ZREM', KEYS[2], v)
end
if tonumber(ARGV[2]) > exp then exp = tonumber(ARGV[2]) end
redis.call('ZADD', KEYS[3], exp, v)
return 1
`)

// Leave gives the visitor's slot back at once (bought, released), or the place in the
// queue of a waiter who gave up. An admission left so has ended: its tokens are
// refused from then on (EndOf), so that another round of shopping starts in the queue.
func (r *Room) Leave(ctx context.Context, eventID int64, visitor string) error {
	_, err := r.eval(ctx, leaveScript, eventKeys(r.prefix, eventID), visitor, r.idleMS(Settings{}))
	return err
}

// Ended reports whether the visitor's admission whose token ends at exp has ended
// early (EndOf).
func (r *Room) Ended(ctx context.Context, eventID int64, visitor string, exp time.Time) (bool, error) {
	e, err := r.EndOf(ctx, eventID, visitor, exp)
	return e != Running, err
}

// EndOf says whether the visitor's admission whose token ends at exp has ended early,
// and how: the token verifies by its signature, but its purchase completed or its hold
// was released (Left), or nothing was held in time (Lapsed). It costs Redis one round
// trip. An error (Redis away) says nothing: the caller lets the token stand, as Verify
// does.
func (r *Room) EndOf(ctx context.Context, eventID int64, visitor string, exp time.Time) (End, error) {
	cctx, cancel := context.WithTimeout(ctx, r.opt.Timeout)
	defer cancel()
	keys := eventKeys(r.prefix, eventID)
	var left, lapsed *redis.FloatCmd
	_, err := r.rdb.Pipelined(cctx, func(p redis.Pipeliner) error {
		left = p.ZScore(cctx, keys[keyEnded], visitor)
		lapsed = p.ZScore(cctx, keys[keyLapsed], visitor)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		if ctx.Err() != nil {
			return Running, ctx.Err()
		}
		return Running, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// An entry's score is the end of the admission that ended; the visitor's tokens
	// of a later admission end after it (later), and stand.
	at := exp.UnixMilli()
	if end, err := lapsed.Result(); err == nil && int64(end) >= at {
		return Lapsed, nil
	}
	if end, err := left.Result(); err == nil && int64(end) >= at {
		return Left, nil
	}
	return Running, nil
}

// Extend makes the visitor's running admission last until at least until, the end of
// the hold they made with it: the slot stays taken while they hold seats and pay, the
// admission no longer lapses for want of a hold, and the queue calls hand out tokens
// lasting as long. An admission that has ended is left so, but for one that lapsed
// while this hold was being made, which is restored (extendScript).
func (r *Room) Extend(ctx context.Context, eventID int64, visitor string, until time.Time) error {
	_, err := r.eval(ctx, extendScript, eventKeys(r.prefix, eventID), visitor, until.UnixMilli())
	return err
}
