package dbtest_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

func TestRedisPrefixCleanup(t *testing.T) {
	t.Parallel()
	outer, outerPrefix := dbtest.Redis(t)
	keep := outerPrefix + "keep"
	if err := outer.Set(t.Context(), keep, "1", 0).Err(); err != nil {
		t.Fatal(err)
	}

	// More keys than one SCAN page, so cleanup has to follow the cursor.
	const n = 2500
	var prefix string
	t.Run("inner", func(t *testing.T) {
		client, p := dbtest.Redis(t)
		prefix = p
		if p == outerPrefix {
			t.Fatalf("two calls gave the same prefix %q", p)
		}
		_, err := client.Pipelined(t.Context(), func(pipe redis.Pipeliner) error {
			for i := range n {
				pipe.Set(t.Context(), p+strconv.Itoa(i), i, 0)
			}
			pipe.HSet(t.Context(), p+"hash", "f", "v")
			return nil
		})
		if err != nil {
			t.Fatalf("write keys: %v", err)
		}
	})

	var left []string
	iter := outer.Scan(t.Context(), 0, prefix+"*", 1000).Iterator()
	for iter.Next(t.Context()) {
		left = append(left, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("got %d keys under %s after cleanup, want 0", len(left), prefix)
	}
	if got, err := outer.Exists(t.Context(), keep).Result(); err != nil || got != 1 {
		t.Errorf("key %s outside the prefix: exists = %d, %v; want 1, nil", keep, got, err)
	}
}

// TestRedisCluster: the private cluster serves keys of different slots from different
// nodes through one cluster client, and deletePrefix clears a prefix on every node.
func TestRedisCluster(t *testing.T) {
	t.Parallel()
	c := dbtest.StartRedisCluster(t)
	rdb := c.Client(t)
	ctx := t.Context()
	for i := range 30 {
		if err := rdb.Set(ctx, "p:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatalf("set on the cluster: %v", err)
		}
	}
	var holding atomic.Int32 // ForEachMaster calls on every primary at once
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		if n, err := node.DBSize(ctx).Result(); err != nil || n > 0 {
			holding.Add(1)
			return err
		}
		return nil
	})
	if err != nil || holding.Load() < 2 {
		t.Errorf("got keys on %d primaries (%v), want them spread over at least 2 of 3", holding.Load(), err)
	}
	if err := dbtest.DeletePrefix(ctx, rdb, "p:"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if n, err := rdb.Exists(ctx, "p:"+strconv.Itoa(i)).Result(); err != nil || n != 0 {
			t.Fatalf("key p:%d after DeletePrefix: exists = %d, %v; want 0, nil", i, n, err)
		}
	}
}
