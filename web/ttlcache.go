package web

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ttlCache keeps values for ttl after they were loaded. A value asked for when missing
// or older is loaded once for all the callers asking meanwhile (at an onsale thousands
// a second ask for the same event), on a context that does not end with the first
// caller's request. Failed loads are not kept.
type ttlCache[K comparable, V any] struct {
	ttl   time.Duration
	now   func() time.Time // time.Now; a test's clock
	mu    sync.Mutex
	items map[K]ttlItem[V]
	loads singleflight.Group
}

type ttlItem[V any] struct {
	v  V
	at time.Time
}

func newTTLCache[K comparable, V any](ttl time.Duration) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, now: time.Now, items: map[K]ttlItem[V]{}}
}

// fresh is key's kept value if it is younger than ttl.
func (c *ttlCache[K, V]) fresh(key K) (V, bool) {
	c.mu.Lock()
	it, ok := c.items[key]
	c.mu.Unlock()
	if ok && c.now().Sub(it.at) < c.ttl {
		return it.v, true
	}
	var zero V
	return zero, false
}

// get is key's value, at most ttl old, loaded by load when it must be.
func (c *ttlCache[K, V]) get(ctx context.Context, key K, load func(context.Context) (V, error)) (V, error) {
	if v, ok := c.fresh(key); ok {
		return v, nil
	}
	ch := c.loads.DoChan(fmt.Sprint(key), func() (any, error) {
		// A caller that missed just before another's load ended starts a flight of
		// its own; the value that load kept is its answer.
		if v, ok := c.fresh(key); ok {
			return v, nil
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		defer cancel()
		v, err := load(lctx)
		if err == nil {
			c.put(key, v)
		}
		return v, err
	})
	var zero V
	select {
	case r := <-ch:
		if r.Err != nil {
			return zero, r.Err
		}
		return r.Val.(V), nil
	case <-ctx.Done(): // this caller gave up; the load goes on for the others
		return zero, ctx.Err()
	}
}

// put keeps v for key from now.
func (c *ttlCache[K, V]) put(key K, v V) {
	c.mu.Lock()
	c.items[key] = ttlItem[V]{v: v, at: c.now()}
	c.mu.Unlock()
}
