// Package live tells seat maps about seat changes through Redis pub/sub. Messages are
// hints sent after commit: whoever renders re-reads PostgreSQL (or a cache fed from it).
//
// It imports only go-redis: it carries seat ids and versions, never booking's rows, so
// that booking and web can both use it without importing each other.
package live

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Change is one message on an event's seats channel: the event's change counter after
// this change, the seats whose state changed, and whether general-admission places
// changed (GA holds take places, not seats, so they have no seat ids to name).
type Change struct {
	Version int64   `json:"v"`
	SeatIDs []int64 `json:"seats"`
	GA      bool    `json:"ga,omitempty"`
}

// publishScript bumps the event's version and publishes under it in one step, so
// subscribers see versions in order and can tell when they missed one. ARGV: channel,
// seat ids as a JSON array, "1" when GA places changed. The channel is a sharded one
// (SPUBLISH): in a Redis Cluster a message then goes to the subscribers of the shard
// that owns the channel's slot, the slot of the version key (one hash tag), instead of
// every node of the cluster.
var publishScript = redis.NewScript(`
local v = redis.call('INCR', KEYS[1])
local ga = ''
if ARGV[3] == '1' then ga = ',"ga":true' end
redis.call('SPUBLISH', ARGV[1], '{"v":' .. v .. ',"seats":' .. ARGV[2] .. ga .. '}')
return v`)

const (
	queueSize = 8192 // changes waiting to be sent; beyond it they are dropped
	batchSize = 256  // changes merged into one round trip to Redis
)

type change struct {
	event int64
	seats []int64
}

// pending is what is queued for one event, merged: a GA change must survive being
// merged with seat changes.
type pending struct {
	seats []int64
	ga    bool
}

// Publisher announces seat changes from a queue, off the request path: a hold's answer
// never waits for Redis, and a Redis outage loses announcements, never sales. Changes
// that pile up are merged per event, one message each.
type Publisher struct {
	rdb     redis.UniversalClient
	prefix  string
	log     *slog.Logger
	queue   chan change
	done    chan struct{}
	close   sync.Once
	dropped atomic.Int64
}

// NewPublisher returns a Publisher writing under prefix, with its sender running until
// Close.
func NewPublisher(rdb redis.UniversalClient, prefix string, log *slog.Logger) *Publisher {
	p := &Publisher{rdb: rdb, prefix: prefix, log: log, queue: make(chan change, queueSize), done: make(chan struct{})}
	go p.run()
	return p
}

// SeatsChanged queues the ids of seats whose state changed on the event; no seat ids
// announces a change of general-admission places. It never blocks: when the queue is
// full the change is dropped (viewers catch up from the next snapshot).
func (p *Publisher) SeatsChanged(_ context.Context, eventID int64, seatIDs []int64) {
	defer func() { _ = recover() }() // a change after Close is dropped, not a crash
	select {
	case p.queue <- change{event: eventID, seats: seatIDs}:
	default:
		if p.dropped.Add(1)%1000 == 1 {
			p.log.Warn("seat changes dropped: Redis too slow", "dropped", p.dropped.Load())
		}
	}
}

// Close sends what is queued and stops the sender.
func (p *Publisher) Close() {
	p.close.Do(func() { close(p.queue) })
	<-p.done
}

func (p *Publisher) run() {
	defer close(p.done)
	for c := range p.queue {
		batch := map[int64]*pending{}
		add := func(c change) {
			q := batch[c.event]
			if q == nil {
				q = &pending{seats: []int64{}} // never null in the message
				batch[c.event] = q
			}
			q.seats = append(q.seats, c.seats...)
			q.ga = q.ga || len(c.seats) == 0
		}
		add(c)
	drain:
		for i := 1; i < batchSize; i++ {
			select {
			case c, ok := <-p.queue:
				if !ok {
					break drain
				}
				add(c)
			default:
				break drain
			}
		}
		p.send(batch)
	}
}

func (p *Publisher) send(batch map[int64]*pending) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for event, q := range batch {
			ids, err := json.Marshal(q.seats)
			if err != nil {
				return err
			}
			ga := "0"
			if q.ga {
				ga = "1"
			}
			publishScript.Eval(ctx, pipe, []string{versionKey(p.prefix, event)}, seatsChannel(p.prefix, event), string(ids), ga)
		}
		return nil
	})
	if err != nil {
		p.log.Warn("seat changes not announced", "events", len(batch), "err", err)
	}
}

// Subscribe returns a subscription of its own to the event's seat changes, for tests
// and benchmarks that listen as an outsider would. Viewers never get one each: the Hub
// holds one subscription per watched event and fans out in process.
func Subscribe(ctx context.Context, rdb redis.UniversalClient, prefix string, eventID int64) *redis.PubSub {
	return rdb.SSubscribe(ctx, seatsChannel(prefix, eventID))
}
