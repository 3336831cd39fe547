package waitroom

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Counts is how full an event's room is, for /metrics.
type Counts struct {
	Waiting int64 // visitors in the queue (and the pre-queue)
	Active  int64 // admitted visitors whose admission has not ended
}

// countsScript reads both counts by Redis's clock, the one admissions end by.
// KEYS: 1 queue, 3 admitted (eventKeys). Reply: {waiting, active}.
var countsScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')}
`)

// Counts reads how many visitors wait for the event and how many admitted ones are
// shopping. It is one small read-only script, bounded by Options.Timeout like every
// call of the room.
func (r *Room) Counts(ctx context.Context, eventID int64) (Counts, error) {
	keys := eventKeys(r.prefix, eventID)
	res, err := r.script(ctx, countsScript, []string{keys[keyQueue], keys[keyAdmitted]})
	if err != nil {
		return Counts{}, err
	}
	if len(res) < 2 {
		return Counts{}, nil
	}
	return Counts{Waiting: asInt(res[0], 0), Active: asInt(res[1], 0)}, nil
}
