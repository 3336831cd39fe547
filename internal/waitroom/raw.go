package waitroom

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// LoadScripts puts the room's scripts in Redis's script cache, so that RawCommands'
// EVALSHA lines run. The Room itself needs no call: it falls back to EVAL once per
// script after a restart.
func (r *Room) LoadScripts(ctx context.Context) error {
	for _, s := range []*redis.Script{joinScript, statusScript, leaveScript, tickScript} {
		if err := s.Load(ctx, r.rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}

// RawCommands are the Redis commands behind one Status and one Join of visitor (with
// the place drawn as 0.5), as argument lists for redis-benchmark or redis-cli: they
// measure the server's share of the room's cost apart from the client's.
func (r *Room) RawCommands(ev Event, visitor string) (status, join []string) {
	keys := eventKeys(r.prefix, ev.ID)
	evalsha := func(sha string, args ...string) []string {
		cmd := append([]string{"EVALSHA", sha, strconv.Itoa(len(keys))}, keys...)
		return append(cmd, args...)
	}
	s := ev.Settings
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	status = evalsha(statusScript.Hash(), visitor)
	join = evalsha(joinScript.Hash(), visitor, r.knownEpoch(ev.ID), "raw", i(r.opt.Regroup.Milliseconds()),
		f(r.bucketCap(s)), i(ev.OnsaleAt.UnixMilli()), strconv.Itoa(s.Slots), f(s.Rate),
		i(tokenTTL(s).Milliseconds()), "0.5", i(r.idleMS(s)), strconv.Itoa(claimSeconds), i(lapseMS(s)))
	return status, join
}
