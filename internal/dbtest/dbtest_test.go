package dbtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
)

func tableExists(t *testing.T, pool *pgxpool.Pool, table string) bool {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok); err != nil {
		t.Fatalf("look up table %s: %v", table, err)
	}
	return ok
}

func TestPoolIsolatedAndMigrated(t *testing.T) {
	t.Parallel()
	a, b := dbtest.Pool(t), dbtest.Pool(t)

	for name, pool := range map[string]*pgxpool.Pool{"a": a, "b": b} {
		if !tableExists(t, pool, "seats") {
			t.Errorf("pool %s: table seats missing, want the migrated schema", name)
		}
		var mode string
		if err := pool.QueryRow(t.Context(), "SHOW synchronous_commit").Scan(&mode); err != nil {
			t.Fatalf("pool %s: show synchronous_commit: %v", name, err)
		}
		if mode != "off" {
			t.Errorf("pool %s: synchronous_commit = %q, want off", name, mode)
		}
	}
	var dbA, dbB string
	if err := a.QueryRow(t.Context(), "SELECT current_database()").Scan(&dbA); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(t.Context(), "SELECT current_database()").Scan(&dbB); err != nil {
		t.Fatal(err)
	}
	if dbA == dbB {
		t.Fatalf("both pools on database %s, want two databases", dbA)
	}

	if _, err := a.Exec(t.Context(), "CREATE TABLE only_in_a (id int)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if !tableExists(t, a, "only_in_a") {
		t.Errorf("table only_in_a missing in a right after creating it")
	}
	if tableExists(t, b, "only_in_a") {
		t.Errorf("table only_in_a found in b, want databases isolated")
	}
}

func TestURLDroppedAtCleanup(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("inner", func(t *testing.T) {
		conn, err := pgx.Connect(t.Context(), dbtest.URL(t))
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		// Left open on purpose: the drop must not wait for code that forgot to close.
		if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		var seats bool
		if err := conn.QueryRow(t.Context(), "SELECT to_regclass('seats') IS NOT NULL").Scan(&seats); err != nil {
			t.Fatal(err)
		}
		if !seats {
			t.Errorf("table seats missing, want the migrated schema")
		}
	})

	conn, err := pgx.Connect(t.Context(), os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatalf("connect admin: %v", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after its test ended, want dropped", name)
	}
}
