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
		if err := deletePrefix(ctx, client, prefix); err != nil {
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

// deletePrefix deletes every key starting with prefix, a SCAN page at a time. The prefix
// holds only hex digits, letters and colons, so it needs no escaping in a MATCH pattern.
func deletePrefix(ctx context.Context, client *redis.Client, prefix string) error {
	var cursor uint64
	for {
		keys, next, err := client.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := client.Del(ctx, keys...).Err(); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}
