package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadDatabase(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://db", "REDIS_URL": "redis://y"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Database
	}{
		{"direct", base, Database{MigrateURL: "postgres://db", ReplicaMaxLag: time.Second}},
		{"pooled", with(map[string]string{"DATABASE_POOLER": "transaction"}),
			Database{Pooler: PoolerTransaction, ExecMode: DefaultPooledExecMode, ReplicaMaxLag: time.Second}},
		{"pooled, migrating on the primary, with a replica", with(map[string]string{
			"DATABASE_POOLER": "transaction", "DATABASE_EXEC_MODE": "exec", "DATABASE_MIGRATE_URL": "postgres://primary",
			"DATABASE_REPLICA_URL": "postgres://replica", "DATABASE_REPLICA_MAX_LAG": "500ms",
		}), Database{Pooler: PoolerTransaction, ExecMode: "exec", MigrateURL: "postgres://primary",
			ReplicaURL: "postgres://replica", ReplicaMaxLag: 500 * time.Millisecond}},
	} {
		c, err := Load(env(tc.env))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.DB != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, c.DB, tc.want)
		}
	}
}

// TestLoadDatabaseRejects: named statements through a transaction pooler, unknown
// modes and URLs that are not PostgreSQL's are refused, by name.
func TestLoadDatabaseRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"DATABASE_POOLER": "transaction", "DATABASE_EXEC_MODE": "cache_statement"}, "DATABASE_EXEC_MODE=cache_statement"},
		{map[string]string{"DATABASE_POOLER": "session"}, "DATABASE_POOLER"},
		{map[string]string{"DATABASE_EXEC_MODE": "fast"}, "DATABASE_EXEC_MODE"},
		{map[string]string{"DATABASE_REPLICA_URL": "mysql://replica"}, "DATABASE_REPLICA_URL"},
		{map[string]string{"DATABASE_MIGRATE_URL": "primary"}, "DATABASE_MIGRATE_URL"},
		{map[string]string{"DATABASE_REPLICA_MAX_LAG": "0s"}, "DATABASE_REPLICA_MAX_LAG"},
	} {
		tc.env["DATABASE_URL"], tc.env["REDIS_URL"] = "postgres://db", "redis://y"
		_, err := Load(env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error naming %s", tc.env, err, tc.want)
		}
	}
}
