package session

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/iowait"
	"boxoffice/internal/waitroom"
)

// TestStore: sessions persist in PostgreSQL (a second store, as another instance would
// be, finds them), a delete is seen at once by the store that made it, and an expired
// session is gone.
func TestStore(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	a, b := NewStore(pool), NewStore(pool)
	ctx := t.Context()
	if err := a.CommitCtx(ctx, "tok", []byte("data"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"same store": a, "another store": b} {
		got, ok, err := s.FindCtx(ctx, "tok")
		if err != nil || !ok || !bytes.Equal(got, []byte("data")) {
			t.Errorf("%s: got %q, %v, %v; want the data", name, got, ok, err)
		}
	}
	if err := a.DeleteCtx(ctx, "tok"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.FindCtx(ctx, "tok"); ok || err != nil {
		t.Errorf("after delete: got found=%v, err %v; want not found", ok, err)
	}
	if err := a.CommitCtx(ctx, "old", []byte("x"), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"same store": a, "another store": b} {
		if _, ok, err := s.FindCtx(ctx, "old"); ok || err != nil {
			t.Errorf("%s, expired: got found=%v, err %v; want not found", name, ok, err)
		}
	}
	if n, err := pool.Exec(ctx, `SELECT 1 FROM sessions WHERE token = 'tok'`); err != nil || n.RowsAffected() != 0 {
		t.Errorf("deleted session still in the table (%v, %v)", n, err)
	}
}

// TestUncachedStore: a delete through one uncached store (another instance) is seen at
// once by a second one that had just read the session. The cached store would still
// serve it for CacheFor; that is the negative control.
func TestUncachedStore(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name      string
		reader    *Store
		wantFound bool
	}{
		{"uncached", NewUncachedStore(pool), false},
		{"cached (control)", NewStore(pool), true},
	} {
		writer := NewUncachedStore(pool)
		if err := writer.CommitCtx(ctx, "tok-"+tc.name, []byte("staff"), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := tc.reader.FindCtx(ctx, "tok-"+tc.name); !ok || err != nil {
			t.Fatalf("%s: first read: found=%v err=%v", tc.name, ok, err)
		}
		if err := writer.DeleteCtx(ctx, "tok-"+tc.name); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := tc.reader.FindCtx(ctx, "tok-"+tc.name); ok != tc.wantFound || err != nil {
			t.Errorf("%s: after a delete elsewhere: found=%v err=%v, want found=%v", tc.name, ok, err, tc.wantFound)
		}
	}
}

// TestCommitIsAsynchronousAlone: a session write commits with synchronous_commit off
// (the statement's set_config is evaluated, not planned away), and only that write:
// the next statement on the same connection, a hold say, commits durably again. Were
// the setting made for the session (set_config(…, false)) rather than the
// transaction, the check after the commit would find it off.
func TestCommitIsAsynchronousAlone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn := dbtest.DurableConn(t, dbtest.Pool(t))
	setting := func(q db.DBTX) string { return dbtest.SyncCommit(t, q) }
	// Inside a transaction the statement's setting can be read back before the commit.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	params := db.SessionCommitParams{Tokens: []string{"async"}, Data: [][]byte{[]byte("x")}, Expiries: []time.Time{time.Now().Add(time.Hour)}}
	if err := db.New(tx).SessionCommit(ctx, params); err != nil {
		t.Fatal(err)
	}
	if got := setting(tx); got != "off" {
		t.Errorf("during the session write's transaction synchronous_commit is %q, want off", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Alone, as the store sends it: its own transaction, then the next statement.
	if err := db.New(conn).SessionCommit(ctx, params); err != nil {
		t.Fatal(err)
	}
	if got := setting(conn); got != "on" {
		t.Errorf("after a session write the connection's synchronous_commit is %q, want on", got)
	}
}

// TestCacheOutlastsLooks: a waiting page looks about every waitroom.MaxLook; a cache
// shorter than that misses at every look and sends the crowd's looks to PostgreSQL,
// as it did once the board had slowed the looks to a minute and CacheFor stayed 15 s.
func TestCacheOutlastsLooks(t *testing.T) {
	if CacheFor < 2*waitroom.MaxLook {
		t.Errorf("CacheFor %v: a waiting page looking every %v would find its session in memory at most every other look", CacheFor, waitroom.MaxLook)
	}
}

// TestCommitsGather: the writes that arrive while a batch is in flight are written
// together as the next one, and every one of them is written. A row lock held on the
// first write's token keeps its batch in flight while a hundred more arrive; once it
// is let go, the hundred take one statement. A store writing each alone would take
// 101.
func TestCommitsGather(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	s := NewStore(pool)
	expiry := time.Now().Add(time.Hour)

	block, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = block.Rollback(ctx) }()
	if _, err := block.Exec(ctx, `INSERT INTO sessions (token, data, expiry) VALUES ('gate', 'x', $1)`, expiry); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 101)
	go func() { errs <- s.CommitCtx(ctx, "gate", []byte("gate"), expiry) }()
	dbtest.Eventually(t, "the first batch in flight", 10*time.Second, func() bool {
		return s.writes.Stats().Batches == 1 && s.writes.Stats().Waiting == 0
	})
	const n = 100
	for i := range n {
		go func() { errs <- s.CommitCtx(ctx, fmt.Sprintf("tok-%d", i), []byte{byte(i)}, expiry) }()
	}
	dbtest.Eventually(t, "a hundred writes waiting", 10*time.Second, func() bool {
		return s.writes.Stats().Waiting == n
	})
	if err := block.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range n + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if batches := s.writes.Stats().Batches; batches != 2 {
		t.Errorf("%d writes took %d statements, want 2 (the first, then the rest together)", n+1, batches)
	}
	other := NewUncachedStore(pool)
	for i := range n {
		got, ok, err := other.FindCtx(ctx, fmt.Sprintf("tok-%d", i))
		if err != nil || !ok || !bytes.Equal(got, []byte{byte(i)}) {
			t.Fatalf("tok-%d: got %v, %v, %v; want its data", i, got, ok, err)
		}
	}
}

// TestBatchWritesATokenOnce: two writes of one session in a batch leave the later
// one. PostgreSQL refuses an upsert that touches a row twice, so without the store
// sending each token once the whole batch would fail.
func TestBatchWritesATokenOnce(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	s := NewStore(pool)
	expiry := time.Now().Add(time.Hour)
	batch := []*write{
		{token: "twice", data: []byte("first"), expiry: expiry},
		{token: "other", data: []byte("o"), expiry: expiry},
		{token: "twice", data: []byte("second"), expiry: expiry},
	}
	if _, err := s.writeBatch(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	got, ok, err := NewUncachedStore(pool).FindCtx(t.Context(), "twice")
	if err != nil || !ok || string(got) != "second" {
		t.Errorf("got %q, %v, %v; want the later write, second", got, ok, err)
	}
}

// TestCommitTalliesItsWait: a request's session write runs in a batch on no request's
// context, so its time would be missing from the request's log line; CommitCtx adds
// its wait to the request's tally as batched time, as an exact hold does.
func TestCommitTalliesItsWait(t *testing.T) {
	t.Parallel()
	s := NewStore(dbtest.Pool(t))
	ctx, tally := iowait.With(t.Context())
	if err := s.CommitCtx(ctx, "tallied", []byte("x"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if tally.Batched() <= 0 {
		t.Errorf("batched time %v after a session write, want its wait", tally.Batched())
	}
}

// TestCommitOnItsPool: with a pool set for the writes (SetWrites), a session write
// takes no connection of the store's own pool, and a find reads it there.
func TestCommitOnItsPool(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	writes, err := pgxpool.NewWithConfig(ctx, pool.Config().Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(writes.Close)
	s := NewUncachedStore(pool)
	s.SetWrites(writes)
	before, beforeW := pool.Stat().AcquireCount(), writes.Stat().AcquireCount()
	if err := s.CommitCtx(ctx, "apart", []byte("x"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := pool.Stat().AcquireCount() - before; got != 0 {
		t.Errorf("the store's pool lent %d connections for a write, want 0", got)
	}
	if got := writes.Stat().AcquireCount() - beforeW; got != 1 {
		t.Errorf("the writes' pool lent %d connections, want 1", got)
	}
	if got, ok, err := s.FindCtx(ctx, "apart"); err != nil || !ok || string(got) != "x" {
		t.Errorf("find: got %q, %v, %v; want the write", got, ok, err)
	}
	if got := pool.Stat().AcquireCount() - before; got != 1 {
		t.Errorf("the store's pool lent %d connections for a write and a find, want 1 (the find)", got)
	}
}
