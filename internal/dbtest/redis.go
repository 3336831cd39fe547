package dbtest

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Redis returns a client for REDIS_URL and a key prefix of this test's own
// ("test:<random>:"). Code under test takes the prefix as its configured key prefix, so
// parallel tests share one Redis without seeing each other's keys. When the test ends
// the keys under the prefix are deleted and the client is closed.
//
// Pub/sub channels are not keys: name them under the prefix too, there is nothing to
// clean up for them.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	raw := os.Getenv("REDIS_URL")
	if raw == "" {
		t.Fatal("REDIS_URL not set: run tests through `make test`")
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("dbtest: parse REDIS_URL: %v", err)
	}
	opts.ContextTimeoutEnabled = true // as the program's client (internal/app)
	client := redis.NewClient(opts)
	prefix := "test:" + randomHex(8) + ":"
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := DeletePrefix(ctx, client, prefix); err != nil {
			t.Errorf("dbtest: delete redis keys %s*: %v", prefix, err)
		}
		if err := client.Close(); err != nil {
			t.Errorf("dbtest: close redis client: %v", err)
		}
	})
	if err := client.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("dbtest: redis at REDIS_URL: %v", err)
	}
	return client, prefix
}

// DeletePrefix deletes every key starting with prefix, on one server or on every
// primary of a cluster (SCAN walks one node). The prefix must hold no glob characters.
func DeletePrefix(ctx context.Context, client redis.UniversalClient, prefix string) error {
	if c, ok := client.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return deletePrefix(ctx, node, prefix)
		})
	}
	return deletePrefix(ctx, client, prefix)
}

// deletePrefix deletes every key of one server starting with prefix, a SCAN page at a
// time, one DEL a key: on a cluster's node a DEL of several keys must keep to one slot.
func deletePrefix(ctx context.Context, client redis.Cmdable, prefix string) error {
	var cursor uint64
	for {
		keys, next, err := client.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if _, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Del(ctx, k)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}
