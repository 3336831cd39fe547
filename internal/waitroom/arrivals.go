package waitroom

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// counter is this instance's count of arrivals per event and group, not yet in Redis.
// Each arrival adds one in memory; flush sends them all in one pipeline, so Redis sees
// a batch per instance and second, never a call per visitor.
type counter struct {
	mu     sync.Mutex
	counts map[int64]map[uint64]int64 // event → group → arrivals
}

func (c *counter) add(eventID int64, group uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[int64]map[uint64]int64{}
	}
	g := c.counts[eventID]
	if g == nil {
		g = map[uint64]int64{}
		c.counts[eventID] = g
	}
	g[group]++
}

// pending is how many arrivals to the event this instance has not yet flushed.
func (c *counter) pending(eventID int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, k := range c.counts[eventID] {
		n += k
	}
	return n
}

// take empties the counter, answering what it held.
func (c *counter) take() map[int64]map[uint64]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = nil
	return out
}

// putBack adds counts that could not be flushed back, for the next flush.
func (c *counter) putBack(counts map[int64]map[uint64]int64) {
	for ev, groups := range counts {
		for g, n := range groups {
			c.mu.Lock()
			if c.counts == nil {
				c.counts = map[int64]map[uint64]int64{}
			}
			if c.counts[ev] == nil {
				c.counts[ev] = map[uint64]int64{}
			}
			c.counts[ev][g] += n
			c.mu.Unlock()
		}
	}
}

// maxPendingEvents bounds how many events' counts are kept while Redis is away; the
// counts of a busy onsale are a handful of numbers, whatever the crowd.
const maxPendingEvents = 10000

// Flush adds this instance's arrival counts to Redis: per event, the groups' counts
// (HINCRBY), the groups in the event's index of groups (ZADD) and the total, all in
// one pipeline. Counts that fail to go are kept for the next flush. Run flushes every
// Options.Flush; tests call it directly.
func (r *Room) Flush(ctx context.Context) error {
	counts := r.counter.take()
	if len(counts) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, r.opt.Timeout)
	defer cancel()
	_, err := r.rdb.Pipelined(cctx, func(p redis.Pipeliner) error {
		for ev, groups := range counts {
			keys := eventKeys(r.prefix, ev)
			var total int64
			z := make([]redis.Z, 0, len(groups))
			for g, n := range groups {
				p.HIncrBy(cctx, keys[keyCount], strconv.FormatUint(g, 10), n)
				z = append(z, redis.Z{Score: float64(g), Member: strconv.FormatUint(g, 10)})
				total += n
			}
			p.HIncrBy(cctx, keys[keyCount], countTotal, total)
			p.ZAdd(cctx, keys[keyGroups], z...)
			p.PExpire(cctx, keys[keyCount], keyIdle)
			p.PExpire(cctx, keys[keyGroups], keyIdle)
		}
		return nil
	})
	if err != nil {
		if len(counts) <= maxPendingEvents {
			r.counter.putBack(counts)
		}
		return err
	}
	return nil
}

// countTotal is the field of an event's counts hash that holds all its arrivals.
const countTotal = "total"

// flushLoop flushes every Options.Flush until ctx ends, and once more then.
func (r *Room) flushLoop(ctx context.Context) {
	t := time.NewTicker(r.opt.Flush)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), r.opt.Timeout)
			_ = r.Flush(fctx)
			cancel()
			return
		case <-t.C:
		}
		err := r.Flush(ctx)
		if err != nil && !failing && ctx.Err() == nil {
			r.log.Warn("waitroom: arrival counts not flushed; kept for the next try", "err", err)
		}
		failing = err != nil
	}
}
