package session

import (
	"bytes"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
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
