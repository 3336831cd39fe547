// Package live tells seat maps about seat changes through Redis pub/sub. Messages are
// hints sent after commit: whoever renders re-reads PostgreSQL (or a cache fed from it).
package live

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Change is one message on an event's seats channel: the event's change counter after
// this change, and the seats whose state changed.
type Change struct {
	Version int64   `json:"v"`
	SeatIDs []int64 `json:"seats"`
}

// publishScript bumps the event's version and publishes under it in one step, so
// subscribers see versions in order and can tell when they missed one.
var publishScript = redis.NewScript(`
local v = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], '{"v":' .. v .. ',"seats":' .. ARGV[2] .. '}')
return v`)

// Publisher announces seat changes. A Redis outage loses announcements, never sales.
type Publisher struct {
	rdb    *redis.Client
	prefix string
	log    *slog.Logger
}

// NewPublisher returns a Publisher writing under prefix.
func NewPublisher(rdb *redis.Client, prefix string, log *slog.Logger) *Publisher {
	return &Publisher{rdb: rdb, prefix: prefix, log: log}
}

// SeatsChanged publishes the ids of seats whose state changed on the event.
func (p *Publisher) SeatsChanged(ctx context.Context, eventID int64, seatIDs []int64) {
	ids, err := json.Marshal(seatIDs)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	keys := []string{versionKey(p.prefix, eventID)}
	if err := publishScript.Run(ctx, p.rdb, keys, seatsChannel(p.prefix, eventID), string(ids)).Err(); err != nil {
		p.log.WarnContext(ctx, "seat change not announced", "event", eventID, "seats", len(seatIDs), "err", err)
	}
}

// Subscribe returns a subscription to the event's seat changes, for tests and for the
// in-process hub that fans changes out to viewers.
func Subscribe(ctx context.Context, rdb *redis.Client, prefix string, eventID int64) *redis.PubSub {
	return rdb.Subscribe(ctx, seatsChannel(prefix, eventID))
}
