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
//
// It also keeps what the flushes learned of every instance's arrivals, for the number
// a new place is given (Place.Number): the total Redis answered to this instance's last
// flush of the event, and the arrivals of a flush under way. A board read before that
// flush, or before another instance's, would miss them: up to a second of arrivals,
// hundreds in an onsale's arrival burst.
type counter struct {
	mu       sync.Mutex
	counts   map[int64]map[uint64]int64 // event → group → arrivals
	total    map[int64]int64            // event → arrivals counted in Redis at this instance's last flush
	inflight map[int64]int64            // event → arrivals of a flush under way
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

// counted is the number a new place of the event gets: the arrivals counted before it
// as far as this instance knows. That is the count on the board the caller read
// (Board.Counted) or the total Redis answered this instance's last flush plus the
// flush under way, whichever is more, and its own arrivals not yet flushed. It misses
// only the other instances' arrivals that neither has seen yet.
func (c *counter) counted(eventID, counted int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := max(counted, c.total[eventID]+c.inflight[eventID])
	for _, k := range c.counts[eventID] {
		n += k
	}
	return n
}

// take empties the counter, answering what it held, which is under way until done.
func (c *counter) take() map[int64]map[uint64]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = nil
	for ev, groups := range out {
		if c.inflight == nil {
			c.inflight = map[int64]int64{}
		}
		c.inflight[ev] += sum(groups)
	}
	return out
}

// done ends the flush of counts: totals has the event's total Redis answered to it,
// for each event it reached (none when it failed, and then the counts are kept for the
// next flush).
func (c *counter) done(counts map[int64]map[uint64]int64, totals map[int64]int64, keep bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ev, groups := range counts {
		c.inflight[ev] -= sum(groups)
		if c.inflight[ev] <= 0 {
			delete(c.inflight, ev)
		}
		if t, ok := totals[ev]; ok {
			if c.total == nil {
				c.total = map[int64]int64{}
			}
			c.total[ev] = t
		}
		if !keep {
			continue
		}
		if c.counts == nil {
			c.counts = map[int64]map[uint64]int64{}
		}
		if c.counts[ev] == nil {
			c.counts[ev] = map[uint64]int64{}
		}
		for g, n := range groups {
			c.counts[ev][g] += n
		}
	}
}

func sum(groups map[uint64]int64) int64 {
	var n int64
	for _, k := range groups {
		n += k
	}
	return n
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
	totals := make(map[int64]*redis.IntCmd, len(counts))
	_, err := r.rdb.Pipelined(cctx, func(p redis.Pipeliner) error {
		for ev, groups := range counts {
			keys := eventKeys(r.prefix, ev)
			z := make([]redis.Z, 0, len(groups))
			for g, n := range groups {
				p.HIncrBy(cctx, keys[keyCount], strconv.FormatUint(g, 10), n)
				z = append(z, redis.Z{Score: float64(g), Member: strconv.FormatUint(g, 10)})
			}
			totals[ev] = p.HIncrBy(cctx, keys[keyCount], countTotal, sum(groups))
			p.ZAdd(cctx, keys[keyGroups], z...)
			p.PExpire(cctx, keys[keyCount], keyIdle)
			p.PExpire(cctx, keys[keyGroups], keyIdle)
		}
		return nil
	})
	got := make(map[int64]int64, len(totals))
	for ev, cmd := range totals {
		if t, err := cmd.Result(); err == nil {
			got[ev] = t
		}
	}
	r.counter.done(counts, got, err != nil && len(counts) <= maxPendingEvents)
	return err
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
