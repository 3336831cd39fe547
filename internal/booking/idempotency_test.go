package booking

import (
	"errors"
	"testing"
)

// TestIdempotentStaleKey: a key left in flight by a request that never finished (its
// process died) refuses a repeat while that request could still be running, and lets
// it run once idempotencyStale has passed since the request began.
func TestIdempotentStaleKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	hash := []byte("the request")
	for _, tc := range []struct {
		key     string
		age     string // since the dead request began
		wantRun bool
	}{
		{"fresh", "1 second", false},
		{"within", (idempotencyStale / 2).String(), false},
		{"stale", (idempotencyStale + idempotencyStale/4).String(), true},
	} {
		if _, err := f.svc.Buyer.BeginIdempotent(t.Context(), "dee", tc.key, hash); err != nil {
			t.Fatalf("%s: first request: %v", tc.key, err)
		}
		if _, err := f.pool.Exec(t.Context(), `UPDATE idempotency_keys SET created_at = now() - $3::interval
			WHERE buyer = $1 AND key = $2`, "dee", tc.key, tc.age); err != nil {
			t.Fatal(err)
		}
		first, err := f.svc.Buyer.BeginIdempotent(t.Context(), "dee", tc.key, hash)
		switch {
		case tc.wantRun && (err != nil || first != nil):
			t.Errorf("%s (begun %s ago): got %v, %v; want the repeat to run", tc.key, tc.age, first, err)
		case !tc.wantRun && !errors.Is(err, ErrIdempotencyKeyInUse):
			t.Errorf("%s (begun %s ago): got %v, %v; want %v", tc.key, tc.age, first, err, ErrIdempotencyKeyInUse)
		}
	}
}
