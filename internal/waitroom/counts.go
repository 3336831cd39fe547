package waitroom

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Counts is how full an event's room is, for /metrics and the control room.
type Counts struct {
	Waiting int64 // visitors in the queue (and the pre-queue), front-door places the cursor has not passed included
	Active  int64 // admitted visitors whose admission has not ended
	Lapsed  int64 // admissions that lapsed for want of a hold, since the room's state began
	Reused  int64 // admissions from the queue into slots such lapses gave back, as long
}

// countsScript reads the counts by Redis's clock, the one admissions end by.
// KEYS: 1 queue, 3 admitted, 4 state, 10 count (eventKeys). Reply: {waiting, active,
// lapsed, reused}; waiting counts the front door's places counted and not yet passed.
var countsScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local st = redis.call('HMGET', KEYS[3], 'lapsed', 'reused', 'passed')
local front = (tonumber(redis.call('HGET', KEYS[4], 'total')) or 0) - (tonumber(st[3]) or 0)
return {redis.call('ZCARD', KEYS[1]) + math.max(0, math.floor(front + 0.5)), redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf'),
  st[1] or '0', st[2] or '0'}
`)

// Counts reads how many visitors wait for the event, how many admitted ones are
// shopping, and how many admissions lapsed and were reused. It is one small read-only
// script, bounded by Options.Timeout like every call of the room.
func (r *Room) Counts(ctx context.Context, eventID int64) (Counts, error) {
	keys := eventKeys(r.prefix, eventID)
	res, err := r.script(ctx, countsScript, []string{keys[keyQueue], keys[keyAdmitted], keys[keyState], keys[keyCount]})
	if err != nil {
		return Counts{}, err
	}
	return Counts{Waiting: asInt(item(res, 0), 0), Active: asInt(item(res, 1), 0),
		Lapsed: asInt(item(res, 2), 0), Reused: asInt(item(res, 3), 0)}, nil
}
