package booking

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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
			_, err := q.IdempotencyKeysClaim(ctx, db.IdempotencyKeysClaimParams{Buyers: []string{"ann"}, Keys: []string{"k"},
				RequestHashes: [][]byte{[]byte("h")}, TtlSeconds: 60, StaleSeconds: 20})
			return err
		}, "off"},
		{"save", func(q *db.Queries) error {
			return q.IdempotencyKeysSave(ctx, db.IdempotencyKeysSaveParams{Buyers: []string{"ann"}, Keys: []string{"k"},
				Statuses: []int32{st}, Bodies: [][]byte{[]byte("{}")}})
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

// TestIdempotencyKeysBatched: the claims that arrive while one batch is in flight go
// together in the next, one statement for them all, and so do the answers' saves; a
// key two requests bring at once in one batch runs the first, and the second finds
// it in flight. The first batch is held in flight by a transaction that holds the
// key it claims, until the others wait behind it.
func TestIdempotencyKeysBatched(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	ctx := t.Context()
	b := f.svc.Buyer
	hash := []byte("the request")

	blocker := keyHeld(t, f, "eve", "first", hash)
	firstDone := make(chan error, 1)
	go func() {
		_, err := b.BeginIdempotent(ctx, "eve", "first", hash)
		firstDone <- err
	}()
	for b.idem.claims.Stats().Batches < 1 {
		time.Sleep(time.Millisecond)
	}

	const n = 40
	type result struct {
		key   string
		first *IdempotentAnswer
		err   error
	}
	results := make(chan result, n+1)
	for i := range n {
		key := fmt.Sprint("k", i)
		go func() {
			a, err := b.BeginIdempotent(ctx, "eve", key, hash)
			results <- result{key, a, err}
		}()
	}
	for b.idem.claims.Stats().Waiting < n {
		time.Sleep(time.Millisecond)
	}
	go func() { // the same key as k0, brought at once: after the others, in their batch
		a, err := b.BeginIdempotent(ctx, "eve", "k0", hash)
		results <- result{"k0 again", a, err}
	}()
	for b.idem.claims.Stats().Waiting < n+1 {
		time.Sleep(time.Millisecond)
	}
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-firstDone; err != nil {
		t.Fatalf("the held claim: %v", err)
	}
	for range n + 1 {
		r := <-results
		switch {
		case r.key == "k0 again" && !errors.Is(r.err, ErrIdempotencyKeyInUse):
			t.Errorf("the second request with k0 in the same batch: got %v, %v; want %v", r.first, r.err, ErrIdempotencyKeyInUse)
		case r.key != "k0 again" && (r.err != nil || r.first != nil):
			t.Errorf("%s: got %v, %v; want it to run", r.key, r.first, r.err)
		}
	}
	if got := b.idem.claims.Stats().Batches; got != 2 {
		t.Errorf("claims: %d batches for %d calls, want 2 (the held one, then all the others)", got, n+2)
	}

	// The saves likewise: k0's is held in flight by a lock on its row.
	locker, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Rollback(ctx) //nolint:errcheck
	if _, err := locker.Exec(ctx, `SELECT 1 FROM idempotency_keys WHERE buyer = 'eve' AND key = 'k0' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	save := func(i int) {
		wg.Go(func() {
			if err := b.FinishIdempotent(ctx, "eve", fmt.Sprint("k", i), 201, fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
				t.Error(err)
			}
		})
	}
	save(0)
	for b.idem.saves.Stats().Batches < 1 {
		time.Sleep(time.Millisecond)
	}
	for i := 1; i < n; i++ {
		save(i)
	}
	for b.idem.saves.Stats().Waiting < n-1 {
		time.Sleep(time.Millisecond)
	}
	if err := locker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got := b.idem.saves.Stats().Batches; got != 2 {
		t.Errorf("saves: %d batches for %d calls, want 2", got, n)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		a, err := b.BeginIdempotent(ctx, "eve", fmt.Sprint("k", i), hash)
		if err != nil || a == nil || a.Status != 201 || string(a.Body) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Errorf("repeat of k%d: got %+v, %v; want its saved answer", i, a, err)
		}
	}
}

// TestIdempotencyKeysOnTheirPool: with a pool set for them (SetWrites), a key's claim
// and its answer's save are written there and take no connection of the sale's pool,
// where they would wait at its gate behind the sale's transactions.
func TestIdempotencyKeysOnTheirPool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	ctx := t.Context()
	writes, err := pgxpool.NewWithConfig(ctx, f.pool.Config().Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(writes.Close)
	f.svc.SetWrites(writes)
	b := f.svc.Buyer

	sale, keys := f.pool.Stat().AcquireCount(), writes.Stat().AcquireCount()
	if a, err := b.BeginIdempotent(ctx, "fay", "k", []byte("h")); a != nil || err != nil {
		t.Fatalf("claim: got %v, %v; want it taken", a, err)
	}
	if err := b.FinishIdempotent(ctx, "fay", "k", 201, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got := f.pool.Stat().AcquireCount() - sale; got != 0 {
		t.Errorf("the sale's pool lent %d connections for a claim and a save, want 0", got)
	}
	if got := writes.Stat().AcquireCount() - keys; got != 2 {
		t.Errorf("the keys' pool lent %d connections, want 2 (the claim's batch and the save's)", got)
	}
	if a, err := b.BeginIdempotent(ctx, "fay", "k", []byte("h")); err != nil || a == nil || a.Status != 201 {
		t.Errorf("repeat: got %+v, %v; want the saved answer", a, err)
	}
}

// TestIdempotencyClaimOfAGoneRequest: a request that goes away while its key's claim
// is in flight gets its context's error, and the key, claimed all the same, is given
// back at once, so that its client's repeat runs. The claim is held in flight by a
// transaction that holds the key.
func TestIdempotencyClaimOfAGoneRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	ctx := t.Context()
	b := f.svc.Buyer
	hash := []byte("the request")
	blocker := keyHeld(t, f, "gus", "k", hash)
	gone, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := b.BeginIdempotent(gone, "gus", "k", hash)
		done <- err
	}()
	for b.idem.claims.Stats().Batches < 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	time.Sleep(20 * time.Millisecond) // the request gone before its claim lands
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the gone request: got %v, want %v", err, context.Canceled)
	}
	var n int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE buyer = 'gus'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("keys of the gone request: %d, %v; want 0 (given back)", n, err)
	}
	if a, err := b.BeginIdempotent(ctx, "gus", "k", hash); a != nil || err != nil {
		t.Errorf("the repeat: got %v, %v; want it to run", a, err)
	}
}

// keyHeld is an open transaction that has inserted the buyer's key, uncommitted: a
// claim of the same key waits for it, and with it the claim's batch, until the test
// rolls it back (or the test ends).
func keyHeld(t *testing.T, f fixture, buyer, key string, hash []byte) pgx.Tx {
	t.Helper()
	ctx := t.Context()
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) }) // a second rollback does nothing
	if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (buyer, key, request_hash, expires_at)
		VALUES ($1, $2, $3, now() + interval '1 hour')`, buyer, key, hash); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestIdempotentSaveAfter: SaveIdempotentAfter returns while its save waits (the
// test holds the saves' batch back); a repeat of the key meanwhile waits for the save
// and replays the answer, rather than hearing the key is in use; DrainIdempotent waits
// for the save, and returns at its context's end while the save still waits.
func TestIdempotentSaveAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, basketSpec(), DefaultConfig())
	ctx := t.Context()
	b := f.svc.Buyer
	hash := []byte("the request")
	if a, err := b.BeginIdempotent(ctx, "hal", "k", hash); a != nil || err != nil {
		t.Fatalf("claim: got %v, %v; want it taken", a, err)
	}
	release := make(chan struct{})
	released := sync.OnceFunc(func() { close(release) })
	t.Cleanup(released)
	save := b.idem.saves.Run
	b.idem.saves.Run = func(ctx context.Context, batch []idemSave) ([]struct{}, error) {
		<-release
		return save(ctx, batch)
	}

	b.SaveIdempotentAfter(ctx, "hal", "k", 201, []byte(`{"n":1}`))
	type result struct {
		a   *IdempotentAnswer
		err error
	}
	repeat := make(chan result, 1)
	go func() {
		a, err := b.BeginIdempotent(ctx, "hal", "k", hash)
		repeat <- result{a, err}
	}()
	select {
	case r := <-repeat:
		t.Fatalf("the repeat answered %+v, %v while the save waits; want it to wait for the save", r.a, r.err)
	case <-time.After(200 * time.Millisecond):
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := f.svc.DrainIdempotent(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("drain while the save waits: got %v, want %v", err, context.DeadlineExceeded)
	}

	released()
	if r := <-repeat; r.err != nil || r.a == nil || r.a.Status != 201 || string(r.a.Body) != `{"n":1}` {
		t.Errorf("the repeat: got %+v, %v; want the answer saved after", r.a, r.err)
	}
	if err := f.svc.DrainIdempotent(ctx); err != nil {
		t.Errorf("drain once saved: %v", err)
	}
}
