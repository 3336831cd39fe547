package waitroom

import "github.com/redis/go-redis/v9"

// The per-event scripts take the KEYS of eventKeys: 1 queue, 2 seen, 3 admitted,
// 4 state, 5 rate, 6 ended, 7 fresh, 8 lapsed, 9 back. Every time they use is the Redis server's clock (TIME, in ms), read
// inside the script: all instances ask the same clock, so "before the onsale", "last
// seen", the end of an admission and the token bucket agree across instances whatever
// the app servers' clocks say. (In Redis Cluster an event lives on one primary, so it
// is one clock per event.) Redis 7 replicates a script's effects, not the script, so
// reading TIME before writing is allowed.
//
// Replies of joinScript and statusScript share one layout, read by parseReply:
//
//	{code, admission end (ms), rank (-1: none), waiting, now (ms), epoch,
//	 measured rate ('' or '-1': unknown), stock ('': unknown), regroup end (ms, '' or 0: none),
//	 free ('' or '-1': unknown), served ('': none yet), place ('' when not waiting),
//	 free at the draw ('': not yet known), admissions then, admissions now,
//	 come-back rate ('' or '-1': unknown), slots in use at the last tick ('': none yet)}
//
// served counts the waiters the admitter has let in from the head of the queue, and the
// state's head is the place of the last of them: the board (boardScript) shows both, so
// that a waiting page works out its own position between its looks and knows its turn
// has come when the head reaches its place. The free places and the count of
// admissions (from the queue and straight in alike, 'admits') at the draw (the tick's
// first after it that knew the free places) say how many places an admission has
// taken since, for the board's LastsFor. The come-back rate is how many admissions a
// second came back (lapsed, left, ran out) over the last minute: while every slot is
// taken, the pace of the queue (paceRate).
//
// code: 0 not in the room, 1 admitted, 2 waiting, 3 admitted just now by this call.
const luaClock = `
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

// luaCommon are the helpers of the scripts that write an event's state.
const luaCommon = luaClock + `
-- ensure returns the event's epoch, creating the state hash when it is missing. A missing
-- hash that the calling instance had seen before (known ~= '') means Redis lost the
-- event's keys (a restart without persistence, a failover to an empty replica, a flush):
-- then the joins of the next regroup ms draw random places like a pre-queue, admission
-- waits for that draw, and the bucket starts empty, so the crowd that comes back is
-- neither ordered by who reconnected fastest nor let in all at once. A hash created for
-- the first time starts with a full bucket, so the first visitors of a quiet event pass.
local function ensure(now, known, fresh, regroup, cap)
  local ep = redis.call('HGET', KEYS[4], 'epoch')
  if ep then return ep end
  local tokens, untl = cap, 0
  if known ~= '' then tokens, untl = 0, now + regroup end
  redis.call('HSET', KEYS[4], 'epoch', fresh, 'created', now, 'regroup', untl,
    'tokens', tokens, 'last', now, 'seq', 0)
  return fresh
end

-- refill brings the token bucket up to now, rate tokens a second, never above cap: after
-- a pause (a lease handover, full slots) at most cap visitors go in at once. While the
-- room is closed (before the draw, sold out) the bucket stays empty, so an opening starts
-- at the rate, not with a burst.
local function refill(now, open, rate, cap)
  local b = redis.call('HMGET', KEYS[4], 'tokens', 'last')
  local tk, last = tonumber(b[1]) or 0, tonumber(b[2]) or now
  if open then
    local dt = now - last
    if dt < 0 then dt = 0 end -- the clock stepped back (a failover): accrue nothing
    tk = math.min(cap, tk + dt * rate / 1000)
  else
    tk = 0
  end
  redis.call('HSET', KEYS[4], 'tokens', tk, 'last', now)
  return tk
end

-- record counts admissions in the second they happened, for the measured rate, and in
-- all (LastsFor).
local function record(now, n)
  redis.call('HINCRBY', KEYS[5], math.floor(now / 1000), n)
  redis.call('HINCRBY', KEYS[4], 'admits', n)
end

-- unclaimed is how many more the free places can serve: an admission takes a place at
-- least, and those of this second and the secs before (the rate's per-second counts)
-- may not have held theirs yet. Without it, when holds lapse after everything is held, the places
-- that come back would go to the quickest of a second's admissions, the rest let in to find
-- nothing; with it they go to as many from the head of the queue. free < 0: unknown, no bound.
local function unclaimed(now, free, secs)
  if free < 0 then return math.huge end
  local from, claimed = math.floor(now / 1000) - secs, 0
  local counts = redis.call('HGETALL', KEYS[5])
  for i = 1, #counts, 2 do
    if tonumber(counts[i]) >= from then claimed = claimed + tonumber(counts[i + 1]) end
  end
  return free - claimed
end

-- windowSum is the sum of a per-second hash (grants, claimed) over the seconds from
-- from on; forget drops the older seconds as it goes (the admitter's tick does, a
-- claim only reads).
local function windowSum(key, from, forget)
  local sum = 0
  local h = redis.call('HGETALL', key)
  for i = 1, #h, 2 do
    if tonumber(h[i]) >= from then
      sum = sum + tonumber(h[i + 1])
    elseif forget then
      redis.call('HDEL', key, h[i])
    end
  end
  return sum
end

-- keep lets the event's keys live idle ms after the last join or tick, then go.
local function keep(idle)
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], idle) end
end

-- later is the end of an admission of v that would end at exp: past the end of v's
-- admission that ended early (left or lapsed), if that one's tokens may still be
-- shown, so that they stay refused while the new admission's verify.
local function later(v, exp)
  for _, k in ipairs({KEYS[6], KEYS[8]}) do
    local e = tonumber(redis.call('ZSCORE', k, v))
    if e and exp <= e then exp = e + 1 end
  end
  return exp
end

-- fresh notes admissions of vs made at now that lapse at now + lapse ms unless a hold
-- comes first (extendScript); lapse 0: the token's end comes first.
local function fresh(now, lapse, vs)
  if lapse <= 0 or #vs == 0 then return end
  local z = {}
  for i = 1, #vs do
    z[#z + 1] = now + lapse
    z[#z + 1] = vs[i]
  end
  redis.call('ZADD', KEYS[7], unpack(z))
end

-- perSecond is the mean a second of a hash of per-second counts (rate, back) over the
-- span whole seconds before sec, -1 for a span under two seconds; it forgets the
-- seconds before the window w.
local function perSecond(key, sec, w, span)
  local sum = 0
  local counts = redis.call('HGETALL', key)
  for i = 1, #counts, 2 do
    local s = tonumber(counts[i])
    if s < sec - w then
      redis.call('HDEL', key, counts[i])
    elseif s >= sec - span and s < sec then
      sum = sum + tonumber(counts[i + 1])
    end
  end
  if span < 2 then return -1 end
  return sum / span
end
`

// joinScript puts ARGV[1] in the queue, keeping a place or admission it already has,
// or admits at once when nobody waits and a slot and a token are free.
//
// ARGV: 1 visitor, 2 epoch this instance knows (empty: none), 3 fresh epoch name,
// 4 regroup ms, 5 bucket cap, 6 onsale (ms), 7 slots, 8 rate (/s), 9 admission ms,
// 10 random place in [0,1), 11 key idle ms, 12 claim seconds (unclaimed), 13 lapse
// ms (fresh).
var joinScript = redis.NewScript(luaCommon + `
local now = clock()
local v = ARGV[1]
local ep = ensure(now, ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
keep(tonumber(ARGV[11]))

local function report(code, at)
  local st = redis.call('HMGET', KEYS[4], 'mrate', 'stock', 'regroup', 'free', 'served', 'free0', 'admits0', 'admits',
    'brate', 'active')
  local rank, place = -1, ''
  if code == 2 then
    rank = redis.call('ZRANK', KEYS[1], v)
    place = redis.call('ZSCORE', KEYS[1], v)
  end
  return {code, at, rank, redis.call('ZCARD', KEYS[1]), now, ep, st[1] or '', st[2] or '', st[3] or '', st[4] or '',
    st[5] or '', place, st[6] or '', st[7] or '', st[8] or '', st[9] or '', st[10] or ''}
end

-- One place per visitor: a running admission stays as it is, end included.
local exp = tonumber(redis.call('ZSCORE', KEYS[3], v))
if exp and exp > now then return report(1, exp) end
-- A place in the queue is kept; joining again counts as checking in.
if redis.call('ZSCORE', KEYS[1], v) then
  redis.call('ZADD', KEYS[2], now, v)
  return report(2, 0)
end

local st = redis.call('HMGET', KEYS[4], 'regroup', 'stock', 'free')
local drawAt = math.max(tonumber(ARGV[6]), tonumber(st[1]) or 0)
local slots, rate, cap = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[5])
-- Straight in only when nobody waits (nobody is overtaken), something is left to sell
-- and free, a slot is free and the bucket has a token: arrivals keep to the rate like
-- the queue, and a free place is not claimed by the admissions before (unclaimed).
if now >= drawAt and tonumber(st[2]) ~= 0 and redis.call('ZCARD', KEYS[1]) == 0 and
   redis.call('ZCOUNT', KEYS[3], now + 1, '+inf') < slots and
   unclaimed(now, tonumber(st[3]) or -1, tonumber(ARGV[12])) > 0 then
  local tk = refill(now, true, rate, cap)
  if tk >= 1 then
    exp = later(v, now + tonumber(ARGV[9]))
    redis.call('ZADD', KEYS[3], exp, v)
    fresh(now, tonumber(ARGV[13]), {v})
    redis.call('HSET', KEYS[4], 'tokens', tk - 1)
    record(now, 1)
    return report(3, exp)
  end
end

-- Before the draw (the onsale, or the end of a regroup after Redis lost the queue) a
-- place is a uniform random number below 1, so the pre-queue comes out as a random
-- permutation. After it places are 1, 2, 3…, behind every pre-queue place: FIFO.
local place
if now < drawAt then
  place = tonumber(ARGV[10])
  refill(now, false, rate, cap) -- empty: the draw starts at the rate, not with a burst
else
  place = redis.call('HINCRBY', KEYS[4], 'seq', 1)
end
redis.call('ZADD', KEYS[1], place, v)
redis.call('ZADD', KEYS[2], now, v)
return report(2, 0)
`)

// statusScript says where ARGV[1] stands and marks a waiter as seen. It creates
// nothing: a visitor it does not find gets code 0 and the page joins again.
var statusScript = redis.NewScript(luaClock + `
local now = clock()
local v = ARGV[1]
local st = redis.call('HMGET', KEYS[4], 'epoch', 'mrate', 'stock', 'regroup', 'free', 'served', 'free0', 'admits0', 'admits',
  'brate', 'active')
local exp = tonumber(redis.call('ZSCORE', KEYS[3], v))
local code, rank, place = 0, -1, ''
if exp and exp > now then
  code = 1
else
  exp = 0
  local r = redis.call('ZRANK', KEYS[1], v)
  if r then
    code, rank = 2, r
    place = redis.call('ZSCORE', KEYS[1], v)
    redis.call('ZADD', KEYS[2], 'XX', now, v)
  end
end
return {code, exp, rank, redis.call('ZCARD', KEYS[1]), now, st[1] or '', st[2] or '', st[3] or '', st[4] or '', st[5] or '',
  st[6] or '', place, st[7] or '', st[8] or '', st[9] or '', st[10] or '', st[11] or ''}
`)

// boardScript reads an event's board: what every waiter may know, the same for all.
// It writes nothing.
//
// Reply: {now (ms), waiting, served, head, measured rate, stock, regroup end, free,
// epoch, drawn, free at the draw, admissions then, admissions now, come-back rate,
// slots in use at the last tick, cursor group, cursor fraction, places the cursor passed,
// arrivals counted, arrivals counted in the pre-queue}, served to epoch and the last ones an empty string
// while unknown or none yet; drawn is how many of the waiting have a drawn place
// (below 1: the pre-queue's, or a regroup's).
var boardScript = redis.NewScript(luaClock + `
local st = redis.call('HMGET', KEYS[4], 'served', 'head', 'mrate', 'stock', 'regroup', 'free', 'epoch', 'free0', 'admits0', 'admits',
  'brate', 'active', 'cg', 'cf', 'passed')
local ct = redis.call('HMGET', KEYS[10], 'total', '0')
return {clock(), redis.call('ZCARD', KEYS[1]), st[1] or '', st[2] or '', st[3] or '', st[4] or '', st[5] or '',
  st[6] or '', st[7] or '', redis.call('ZCOUNT', KEYS[1], '-inf', '(1'), st[8] or '', st[9] or '', st[10] or '',
  st[11] or '', st[12] or '', st[13] or '', st[14] or '', st[15] or '', ct[1] or '', ct[2] or ''}
`)

// tickScript is one admitter tick for one event, all of it atomic: drop stale waiters,
// lapse the admissions that held nothing in time, drop ended admissions, refill the
// bucket, move as many waiters as the bucket, the free slots and the stock allow into
// admitted, in queue order, and measure the rates.
//
// ARGV: 1 epoch this instance knows, 2 fresh epoch name, 3 regroup ms, 4 bucket cap,
// 5 onsale (ms), 6 slots, 7 rate (/s), 8 admission ms, 9 keep-place ms,
// 10 stock (-1: unknown, keep the last figure), 11 admitter id, 12 lease ms,
// 13 most moves per tick, 14 key idle ms, 15 rate window (s), 16 free stock (-1:
// unknown, keep the last figure), 17 claim seconds (at most the rate window),
// 18 lapse ms (fresh), 19 come-back window (s).
//
// Reply: {admitted now, active, waiting, now (ms), epoch, measured rate, lapsed now,
// reused now, visitors…}; {-1, …} when another admitter holds the event's fence.
var tickScript = redis.NewScript(luaCommon + `
local now = clock()
local id = ARGV[11]
-- Fence: the lease says which instance ticks, but one that stalled past its lease may
-- wake and tick once more before it learns it lost it. This fence lives with the
-- event's keys and is checked in the same script that admits, so two instances never
-- both admit for one event within a lease time of each other.
local f = redis.call('HMGET', KEYS[4], 'owner', 'owner_until')
if f[1] and f[1] ~= id and (tonumber(f[2]) or 0) > now then return {-1, 0, 0, now, '', ''} end
local cap = tonumber(ARGV[4])
local ep = ensure(now, ARGV[1], ARGV[2], tonumber(ARGV[3]), cap)
redis.call('HSET', KEYS[4], 'owner', id, 'owner_until', now + tonumber(ARGV[12]))
keep(tonumber(ARGV[14]))
local most = tonumber(ARGV[13])

-- Waiters whose page has not checked in for keep-place ms lose the place.
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[9]), 'LIMIT', 0, most)
if #stale > 0 then
  redis.call('ZREM', KEYS[1], unpack(stale))
  redis.call('ZREM', KEYS[2], unpack(stale))
end
-- An admission whose visitor has held nothing by its deadline (fresh) lapses: its slot
-- comes back now rather than at the token's end, and its tokens are refused from now
-- on (lapsed). A hold takes the admission out of fresh first (extendScript).
local lapsed = 0
local idle = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', 0, most)
for _, v in ipairs(idle) do
  local exp = tonumber(redis.call('ZSCORE', KEYS[3], v))
  if exp and exp > now then
    redis.call('ZADD', KEYS[8], 'GT', exp, v)
    redis.call('ZREM', KEYS[3], v)
    lapsed = lapsed + 1
  end
end
if #idle > 0 then redis.call('ZREM', KEYS[7], unpack(idle)) end
-- Slots in use are the admissions still running: one that ended gives its slot back.
local ran = redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
-- An early end's tokens have all expired once its end has passed: forget it.
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', now)
if lapsed + ran > 0 then redis.call('HINCRBY', KEYS[9], math.floor(now / 1000), lapsed + ran) end
local active = redis.call('ZCARD', KEYS[3])
-- Lapsed slots someone in line may take (spare): the next admissions from the queue
-- reuse them. A slot that lapsed while nobody waited was nobody's loss, and a slot
-- count lowered meanwhile takes spare slots away first.
local spare = tonumber(redis.call('HGET', KEYS[4], 'spare')) or 0
if redis.call('ZCARD', KEYS[1]) > 0 then spare = spare + lapsed end
spare = math.min(spare, math.max(0, tonumber(ARGV[6]) - active))

-- A stock figure from the hook is kept; unknown (-1), the last one kept is used.
local function figure(field, given)
  given = tonumber(given)
  if given >= 0 then
    redis.call('HSET', KEYS[4], field, given)
    return given
  end
  return tonumber(redis.call('HGET', KEYS[4], field)) or -1
end
local stock, free = figure('stock', ARGV[10]), figure('free', ARGV[16])
local st = redis.call('HMGET', KEYS[4], 'regroup', 'created', 'free0')
local drawAt = math.max(tonumber(ARGV[5]), tonumber(st[1]) or 0)
-- The free places and the admissions when the draw came (or, drawn earlier, when the
-- room's state began): what the admissions since have taken (LastsFor).
if now >= drawAt and free >= 0 and not st[3] then
  redis.call('HSET', KEYS[4], 'free0', free, 'admits0', tonumber(redis.call('HGET', KEYS[4], 'admits')) or 0)
end
-- Nothing left to sell (and nothing held that may lapse): nobody goes in. Nothing
-- free, everything left held: nobody goes in either, to find nothing; the queue moves
-- again as holds lapse.
local tk = refill(now, now >= drawAt and stock ~= 0 and free ~= 0, tonumber(ARGV[7]), cap)

-- Invariant: active + admitted now <= slots, since n <= slots - active.
-- And no more than the free places can serve (unclaimed).
local n = math.min(math.floor(tk), tonumber(ARGV[6]) - active, most, unclaimed(now, free, tonumber(ARGV[17])))
local moved = {}
if n > 0 then
  local r = redis.call('ZPOPMIN', KEYS[1], n)
  local exp = now + tonumber(ARGV[8])
  local z = {}
  for i = 1, #r, 2 do
    moved[#moved + 1] = r[i]
    z[#z + 1] = later(r[i], exp)
    z[#z + 1] = r[i]
  end
  if #moved > 0 then
    redis.call('ZADD', KEYS[3], unpack(z))
    fresh(now, tonumber(ARGV[18]), moved)
    redis.call('ZREM', KEYS[2], unpack(moved))
    redis.call('HSET', KEYS[4], 'tokens', tk - #moved, 'head', r[#r])
    redis.call('HINCRBY', KEYS[4], 'served', #moved)
    record(now, #moved)
  end
end

local reused = math.min(#moved, spare)
redis.call('HSET', KEYS[4], 'spare', spare - reused, 'active', active + #moved)
if lapsed > 0 then redis.call('HINCRBY', KEYS[4], 'lapsed', lapsed) end
if reused > 0 then redis.call('HINCRBY', KEYS[4], 'reused', reused) end

-- Measured rates over the last whole seconds, only those after the draw (or after the
-- state began), so the quiet before an onsale does not count; -1 (unknown) until two
-- such seconds have passed: admissions, over at most the rate window; admissions that
-- came back, over at most the come-back window.
local sec = math.floor(now / 1000)
local since = math.floor(math.max(drawAt, tonumber(st[2]) or now) / 1000)
local w, bw = tonumber(ARGV[15]), tonumber(ARGV[19])
local mrate = perSecond(KEYS[5], sec, w, math.min(w, sec - since - 1))
local brate = perSecond(KEYS[9], sec, bw, math.min(bw, sec - since - 1))
redis.call('HSET', KEYS[4], 'mrate', mrate, 'brate', brate)

local out = {#moved, active + #moved, redis.call('ZCARD', KEYS[1]), now, ep, tostring(mrate), lapsed, reused}
for i = 1, #moved do out[#out + 1] = moved[i] end
return out
`)

// leaseScript takes the admitter's lease when it is free (SET NX PX) or renews it when
// this instance holds it, in one step so a renewal can never extend another's lease.
// KEYS[1] lease; ARGV: 1 instance id, 2 lease ms. Reply 1: held, 0: another holds it.
var leaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// unfenceScript ends this admitter's (ARGV[1]) fence on an event at once, so that the
// instance taking over does not wait out a lease time. KEYS[1] the event's state.
var unfenceScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'owner_until', 0)
end
return 0
`)

// releaseScript gives the lease up if this instance (ARGV[1]) holds it, so a standby
// takes over at its next tick instead of after the lease runs out.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
