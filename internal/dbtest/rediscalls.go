package dbtest

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// RedisCalls is a go-redis hook that counts the commands a client sends, each command
// of a pipeline included: tests add it (client.AddHook) to show what a step costs
// Redis.
type RedisCalls struct{ n atomic.Int64 }

// N is how many commands were sent since the hook was added.
func (h *RedisCalls) N() int64 { return h.n.Load() }

// DialHook passes dials through uncounted.
func (h *RedisCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts one command.
func (h *RedisCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts each command of a pipeline.
func (h *RedisCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
