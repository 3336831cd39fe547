package waitroom

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The cursor: the admitter lets the places in by moving a mark, "passed up to (group,
// fraction)", through the counted arrival groups, rather than by moving visitors. The
// tokens of the bucket (the configured rate, governed), the free slots less the passed
// places not yet claimed (outstanding, for ClaimWindow), and the free stock bound how
// many counted arrivals it passes a tick: passing n of them moves the fraction of a
// group of c by n / c, since the tiebreaks within a group are uniform. A group is
// entered only Settle after it ends, so that every instance has flushed its counts.
// A passed place that is not claimed within ClaimWindow stops counting against the
// slots: a visitor who left never blocks the room.
//
// The claim keeps the slots too: it admits only while the admissions running and the
// passed places still within their window fit in them (claimScript). Two kinds of
// claim come outside the cursor's reckoning: a place claimed after its window, whose
// slot the cursor may have given on, and the place of an arrival counted into a group
// the cursor has passed (an instance whose clock or flush lags more than Settle). Such
// a claim waits ("not yet, ask again") until a slot is free rather than go in over the
// slots. Keep the instances' clocks within a second of each other (NTP), as Verify asks.

// frontScript moves the cursor for one event, after tickScript in the same tick (which
// refilled the bucket and let in any waiters of the sorted-set queue first).
//
// ARGV: 1 onsale (ms), 2 group span ms, 3 settle ms, 4 slots, 5 most a tick,
// 6 claim window ms, 7 claim seconds (unclaimed), 8 admitter id.
// Reply: {passed now (whole places), cursor group, cursor fraction, passed in all,
// active, outstanding}; {-1} when another admitter holds the event's fence.
var frontScript = redis.NewScript(luaCommon + `
local now = clock()
local st = redis.call('HMGET', KEYS[4], 'epoch', 'owner', 'tokens', 'regroup', 'stock', 'free', 'cg', 'cf', 'passed')
if not st[1] or st[2] ~= ARGV[8] then return {-1} end
local drawAt = math.max(tonumber(ARGV[1]), tonumber(st[4]) or 0)
local span, settle = tonumber(ARGV[2]), tonumber(ARGV[3])
local cg, cf, passed = tonumber(st[7]) or 0, tonumber(st[8]) or 0, tonumber(st[9]) or 0

local from = math.floor((now - tonumber(ARGV[6])) / 1000)
local outstanding = math.max(0, windowSum(KEYS[13], from, true) - windowSum(KEYS[14], from, true))
local active = redis.call('ZCOUNT', KEYS[3], now + 1, '+inf')
local stock, free = tonumber(st[5]) or -1, tonumber(st[6]) or -1

-- Invariant: active + outstanding + passed now <= slots.
local open = now >= drawAt + settle
local n = 0
if open and stock ~= 0 and free ~= 0 then
  n = math.min(math.floor(tonumber(st[3]) or 0), tonumber(ARGV[4]) - active - outstanding, tonumber(ARGV[5]),
    unclaimed(now, free, tonumber(ARGV[7])) - outstanding)
end
local left = math.max(n, 0)
if left > 0 then
  local closed = math.floor((now - settle - drawAt) / span)
  local gs = redis.call('ZRANGEBYSCORE', KEYS[11], cg, closed, 'LIMIT', 0, 1000)
  for _, name in ipairs(gs) do
    local g = tonumber(name)
    if g > cg then cg, cf = g, 0 end
    local c = tonumber(redis.call('HGET', KEYS[10], name)) or 0
    local rem = c * (1 - cf)
    if rem <= left then
      left = left - rem
      cg, cf = g + 1, 0
    else
      cf = cf + left / c
      left = 0
    end
    if left <= 0 then break end
  end
  -- Every counted group up to the closed ones passed: the cursor waits at the first
  -- open group, where nobody is counted yet.
  if left > 0 and cg <= closed then cg, cf = closed + 1, 0 end
end
local moved = n - left
passed = passed + moved
local whole = math.floor(moved + 0.5)
redis.call('HSET', KEYS[4], 'cg', cg, 'cf', cf, 'passed', passed, 'tokens', (tonumber(st[3]) or 0) - moved)
if whole > 0 then
  redis.call('HINCRBY', KEYS[13], math.floor(now / 1000), whole)
  record(now, whole)
end
return {whole, cg, tostring(cf), tostring(passed), active, outstanding}
`)

// claimScript admits ARGV[1] on a place the cursor has passed, once per place, and
// only within the slots.
//
// ARGV: 1 visitor, 2 group, 3 tiebreak, 4 nonce, 5 admission ms, 6 lapse ms (fresh),
// 7 key idle ms, 8 the place's issue (ms) for a buyer's own place, else "": such a
// place issued before the buyer's last claim admits nothing (the claims hash keeps
// that claim's time under "b:" and the visitor), 9 slots, 10 claim window ms, 11 the
// claim's key, else "" (kept under "k:" and the nonce).
// Reply: {code, admission end (ms), visitor}; code 3 admitted now, 1 admitted already,
// 5 admitted already as the visitor named, whose claim sent the same key (its answer
// was lost), 2 not passed yet, 4 passed but the slots are full (ask again), 0 no state
// (Redis lost it), -1 the place was claimed by another visitor, -2 the place's
// admission has ended (or, for a buyer's own place, it was taken before the buyer's
// last claim).
//
// Invariant, as the cursor's: active + outstanding <= slots after the claim. A claim
// takes one of the outstanding places' slots (the claimed hash counts it against the
// grants), or a free one when none is outstanding; a late claim, or the claim of a
// place counted late, that finds neither free waits, and so never goes over the slots.
var claimScript = redis.NewScript(luaCommon + `
local now = clock()
local v = ARGV[1]
local st = redis.call('HMGET', KEYS[4], 'epoch', 'cg', 'cf')
if not st[1] then return {0, 0} end
keep(tonumber(ARGV[7]))
local prev = redis.call('HGET', KEYS[12], ARGV[4])
if prev and prev ~= v then
  if ARGV[11] == '' or redis.call('HGET', KEYS[12], 'k:' .. ARGV[4]) ~= ARGV[11] then return {-1, 0} end
  local e = tonumber(redis.call('ZSCORE', KEYS[3], prev))
  if e and e > now then return {5, e, prev} end
  return {-2, 0}
end
local exp = tonumber(redis.call('ZSCORE', KEYS[3], v))
if exp and exp > now then return {1, exp} end
if prev then return {-2, 0} end
local owned = ARGV[8] ~= ''
if owned then
  local last = tonumber(redis.call('HGET', KEYS[12], 'b:' .. v))
  if last and tonumber(ARGV[8]) < last then return {-2, 0} end
end
local g, f = tonumber(ARGV[2]), tonumber(ARGV[3])
local cg, cf = tonumber(st[2]) or 0, tonumber(st[3]) or 0
if not (g < cg or (g == cg and f < cf)) then return {2, 0} end
local from = math.floor((now - tonumber(ARGV[10])) / 1000)
local outstanding = math.max(0, windowSum(KEYS[13], from, false) - windowSum(KEYS[14], from, false))
local active = redis.call('ZCOUNT', KEYS[3], now + 1, '+inf')
if active + math.max(outstanding, 1) > tonumber(ARGV[9]) then return {4, 0} end
exp = later(v, now + tonumber(ARGV[5]))
redis.call('ZADD', KEYS[3], exp, v)
fresh(now, tonumber(ARGV[6]), {v})
redis.call('HSET', KEYS[12], ARGV[4], v)
if ARGV[11] ~= '' then redis.call('HSET', KEYS[12], 'k:' .. ARGV[4], ARGV[11]) end
if owned then redis.call('HSET', KEYS[12], 'b:' .. v, now) end
redis.call('HINCRBY', KEYS[14], math.floor(now / 1000), 1)
return {3, exp}
`)

// Claim refusals.
var (
	// ErrPlaceClaimed: another visitor claimed this place already (a copied token).
	ErrPlaceClaimed = errors.New("this place in the queue was claimed by another visitor")
	// ErrPlaceUsed: the admission this place gave has ended; another round needs a new place.
	ErrPlaceUsed = errors.New("this place in the queue was used already")
)

// Claim admits visitor on place p once the cursor has passed it: the admission
// (signed token, a slot) that Join gives, made now and for this visitor alone. Not
// passed yet, or passed while every slot is taken (a late claim), it answers
// Status{Queued: true}: ask again. With the room off everyone is admitted.
//
// key, when not empty, is the claim's own (the page's Idempotency-Key): a claim sent
// again with the first one's key after its answer was lost, by a visitor who never
// learned its new identity, is admitted as the first claim's visitor, which it
// answers (Status.Visitor); without the key such a claim is another visitor's, and
// ErrPlaceClaimed refuses it.
func (r *Room) Claim(ctx context.Context, ev Event, p Place, visitor, key string) (Status, error) {
	return r.claim(ctx, ev, p, visitor, "", key)
}

// ClaimOwned is Claim of a buyer's own place (ArriveAs; the caller checks Owns): one
// admission at a time for the buyer, as Claim gives any visitor, and none on a place
// issued before the buyer's last claim, which ErrPlaceUsed refuses.
func (r *Room) ClaimOwned(ctx context.Context, ev Event, p Place, buyer string) (Status, error) {
	return r.claim(ctx, ev, p, buyer, strconv.FormatInt(p.IssuedAt.UnixMilli(), 10), "")
}

func (r *Room) claim(ctx context.Context, ev Event, p Place, visitor, issued, key string) (Status, error) {
	s := ev.Settings
	if !s.Enabled {
		return r.Join(ctx, ev, visitor)
	}
	slots := int64(s.Slots)
	if r.unboundedClaims {
		slots = math.MaxInt32
	}
	res, err := r.script(ctx, claimScript, eventKeys(r.prefix, ev.ID), visitor, p.Group,
		strconv.FormatFloat(p.Tiebreak, 'g', -1, 64), strconv.FormatUint(p.Nonce, 10),
		tokenTTL(s).Milliseconds(), lapseMS(s), r.idleMS(s), issued, slots, r.opt.ClaimWindow.Milliseconds(), key)
	if err != nil {
		return Status{}, err
	}
	switch code := asInt(item(res, 0), 0); code {
	case 1, 3:
		exp := time.UnixMilli(asInt(item(res, 1), 0))
		return Status{Admitted: true, Token: r.sign(ev.ID, visitor, exp), ExpiresAt: exp, SeatsLeft: -1}, nil
	case 5:
		exp := time.UnixMilli(asInt(item(res, 1), 0))
		first, _ := item(res, 2).(string)
		return Status{Admitted: true, Token: r.sign(ev.ID, first, exp), ExpiresAt: exp, SeatsLeft: -1, Visitor: first}, nil
	case -1:
		return Status{}, ErrPlaceClaimed
	case -2:
		return Status{}, ErrPlaceUsed
	}
	return Status{Queued: true, SeatsLeft: -1, PollAfter: MinPoll}, nil
}

// cursor is one frontScript's answer.
type cursor struct {
	passedNow   int64
	group       uint64
	frac        float64
	passed      float64
	active      int64
	outstanding int64
}

// tickFront runs frontScript for one event; ok false when another admitter holds
// the event's fence.
func (r *Room) tickFront(ctx context.Context, ev Event) (cursor, bool, error) {
	s := ev.Settings
	res, err := r.script(ctx, frontScript, eventKeys(r.prefix, ev.ID), ev.OnsaleAt.UnixMilli(),
		r.opt.GroupSpan.Milliseconds(), r.opt.Settle.Milliseconds(), s.Slots, maxMoves,
		r.opt.ClaimWindow.Milliseconds(), claimSeconds, r.id)
	if err != nil {
		return cursor{}, false, err
	}
	if asInt(item(res, 0), 0) < 0 {
		return cursor{}, false, nil
	}
	c := cursor{passedNow: asInt(item(res, 0), 0), group: uint64(max(asInt(item(res, 1), 0), 0)),
		frac: asFloat(item(res, 2), 0), passed: asFloat(item(res, 3), 0), active: asInt(item(res, 4), 0),
		outstanding: asInt(item(res, 5), 0)}
	if c.passedNow > 0 && r.hooks.Admitted != nil {
		r.hooks.Admitted(ev.ID, int(c.passedNow))
	}
	return c, true, nil
}
