package main

import (
	"net"
	"testing"
)

// TestPrepareThroughPoolerDoesNotMigrate: through a transaction pooler, serve does not
// migrate unless DATABASE_MIGRATE_URL names the primary (the migration lock is a
// session lock); with it, it migrates there. The database named is one nobody listens
// on, so any attempt to migrate through it fails.
func TestPrepareThroughPoolerDoesNotMigrate(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := "postgres://boxoffice@" + ln.Addr().String() + "/boxoffice?sslmode=disable&connect_timeout=2"
	ln.Close()
	env := map[string]string{"DATABASE_URL": nobody, "REDIS_URL": "redis://127.0.0.1:1/0", "DATABASE_POOLER": "transaction"}
	getenv := func(k string) string { return env[k] }
	if _, _, err := prepare(t.Context(), getenv); err != nil {
		t.Fatalf("prepare through a pooler: %v, want no migration tried", err)
	}
	env["DATABASE_MIGRATE_URL"] = nobody
	if _, _, err := prepare(t.Context(), getenv); err == nil {
		t.Fatal("prepare with DATABASE_MIGRATE_URL: got no error, want the migration tried there (and failing)")
	}
}
