package booking

import (
	"errors"
	"testing"

	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
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

// TestIdempotencyKeysCommitAsynchronously: a key's claim and its answer's save each
// turn synchronous_commit off for their own transaction only (the statement's
// set_config is evaluated, not planned away), so neither waits for a WAL fsync; the
// connection commits durably again after them. The control reads the same setting
// after a statement without it, which leaves it on.
func TestIdempotencyKeysCommitAsynchronously(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn := dbtest.DurableConn(t, dbtest.Pool(t))
	setting := func(q db.DBTX) string { return dbtest.SyncCommit(t, q) }
	st := int32(201)
	for _, tc := range []struct {
		name string
		run  func(q *db.Queries) error
		want string
	}{
		{"claim", func(q *db.Queries) error {
			_, err := q.IdempotencyKeyClaim(ctx, db.IdempotencyKeyClaimParams{Buyer: "ann", Key: "k", RequestHash: []byte("h"),
				TtlSeconds: 60, StaleSeconds: 20})
			return err
		}, "off"},
		{"save", func(q *db.Queries) error {
			return q.IdempotencyKeySave(ctx, db.IdempotencyKeySaveParams{Buyer: "ann", Key: "k", Status: &st, Body: []byte("{}")})
		}, "off"},
		{"control: a read of the key", func(q *db.Queries) error {
			_, err := q.IdempotencyKeyGet(ctx, db.IdempotencyKeyGetParams{Buyer: "ann", Key: "k"})
			return err
		}, "on"},
	} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.run(db.New(tx)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := setting(tx); got != tc.want {
			t.Errorf("%s: in its transaction synchronous_commit is %q, want %q", tc.name, got, tc.want)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if got := setting(conn); got != "on" {
			t.Errorf("after the %s the connection's synchronous_commit is %q, want on", tc.name, got)
		}
	}
}
