package dbtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/dbtest"
)

// TestPgBouncerExecModes shows why the pool uses another exec mode through a
// transaction pooler: pgx's default prepares named statements on the server
// connection it happens to have, and PgBouncer hands the next transaction another.
// Client b prepares its statement on the server connection left free while a holds
// one in a transaction; a commits, and b's next statement gets a's server connection
// (last in, first out), where the name is unknown. The same steps in cache_describe,
// which uses only the unnamed statement, succeed.
func TestPgBouncerExecModes(t *testing.T) {
	t.Parallel()
	through := dbtest.StartPgBouncer(t, dbtest.URL(t), 2)
	for _, tc := range []struct {
		mode    pgx.QueryExecMode
		wantErr string
	}{
		{pgx.QueryExecModeCacheStatement, "does not exist"},
		{pgx.QueryExecModeCacheDescribe, ""},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			ctx := t.Context()
			connect := func() *pgx.Conn {
				cfg, err := pgx.ParseConfig(through)
				if err != nil {
					t.Fatal(err)
				}
				cfg.DefaultQueryExecMode = tc.mode
				c, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close(context.Background()) })
				return c
			}
			a, b := connect(), connect()
			tx, err := a.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil {
				t.Fatal(err)
			}
			const q = "SELECT $1::int + 1"
			if err := b.QueryRow(ctx, q, 1).Scan(&n); err != nil {
				t.Fatalf("first statement: %v", err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			err = b.QueryRow(ctx, q, 2).Scan(&n)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("second statement: got %v, want it to run", err)
			case tc.wantErr == "" && n != 3:
				t.Fatalf("second statement: got %d, want 3", n)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("second statement: got error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}
