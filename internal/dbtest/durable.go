package dbtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DurableConn is a connection of pool that commits durably (synchronous_commit on),
// as production's do: test databases commit asynchronously throughout (Pool), so a
// test of what a statement does to its own commit needs one. It is reset and given
// back when the test ends.
func DurableConn(t testing.TB, pool *pgxpool.Pool) *pgxpool.Conn {
	t.Helper()
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), `RESET synchronous_commit`)
		conn.Release()
	})
	if _, err := conn.Exec(t.Context(), `SET synchronous_commit = on`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// SyncCommit is synchronous_commit as q (a connection, or a transaction on one) has
// it now.
func SyncCommit(t testing.TB, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) string {
	t.Helper()
	var v string
	if err := q.QueryRow(t.Context(), `SELECT current_setting('synchronous_commit')`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
