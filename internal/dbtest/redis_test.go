package dbtest_test

import (
	"strconv"
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
