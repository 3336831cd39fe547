package dbtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/dbtest"
)

// TestProxyLosesCommit: with LoseAnswer the commit reaches the server and commits
// while the client gets an error; with LoseMessage it never arrives and nothing
// commits. Either way the client cannot tell which: only the database can.
func TestProxyLosesCommit(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.URL(t)
	p, proxied := dbtest.ProxyFor(t, dbURL)
	direct, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(context.Background())
	if _, err := direct.Exec(t.Context(), `CREATE TABLE cut_test (name text)`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		arm       func(string) <-chan struct{}
		committed bool
	}{
		{"answer lost", p.LoseAnswer, true},
		{"message lost", p.LoseMessage, false},
	} {
		conn, err := pgx.Connect(t.Context(), proxied)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(t.Context(), `INSERT INTO cut_test VALUES ($1)`, tc.name); err != nil {
			t.Fatal(err)
		}
		cut := tc.arm("commit")
		if err := tx.Commit(t.Context()); err == nil {
			t.Errorf("%s: commit got no error, want the connection cut", tc.name)
		}
		select {
		case <-cut:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the cut was not made", tc.name)
		}
		conn.Close(context.Background())
		var n int
		if err := direct.QueryRow(t.Context(), `SELECT count(*) FROM cut_test WHERE name = $1`, tc.name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if (n == 1) != tc.committed {
			t.Errorf("%s: got %d rows committed, want committed %v", tc.name, n, tc.committed)
		}
	}
}
