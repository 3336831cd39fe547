package config

import (
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Database is how boxoffice reaches PostgreSQL beyond DATABASE_URL: through a pooler,
// and with a streaming replica for the reads that may be a second stale.
type Database struct {
	// Pooler is what DATABASE_URL leads to (DATABASE_POOLER): "" for PostgreSQL
	// itself, or PoolerTransaction for a pooler in transaction mode (PgBouncer's
	// pool_mode=transaction), where a connection belongs to a client only for one
	// transaction: no named prepared statements, no LISTEN, no session locks.
	Pooler string
	// ExecMode is pgx's query exec mode for the pool (DATABASE_EXEC_MODE), one of
	// ExecModes. Unset: cache_statement on PostgreSQL itself, DefaultPooledExecMode
	// through a transaction pooler.
	ExecMode string
	// MigrateURL is where `serve` migrates (DATABASE_MIGRATE_URL): the primary itself,
	// since the migration lock is a session lock. Unset, it is DATABASE_URL, unless
	// that goes through a transaction pooler: then serve does not migrate, and
	// `boxoffice migrate` is run against the primary before the instances start.
	MigrateURL string
	// ReplicaURL names a streaming replica of the primary (DATABASE_REPLICA_URL);
	// unset, every read goes to DATABASE_URL.
	ReplicaURL string
	// ReplicaMaxLag is how stale a read sent to the replica may be
	// (DATABASE_REPLICA_MAX_LAG): past it, those reads go to the primary.
	ReplicaMaxLag time.Duration
}

// PoolerTransaction is DATABASE_POOLER for a pooler in transaction mode.
const PoolerTransaction = "transaction"

// ExecModes are pgx's query exec modes, by the names pgx gives them in a connection
// string's default_query_exec_mode.
var ExecModes = []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"}

// DefaultPooledExecMode is the exec mode through a transaction pooler: one round trip
// a statement, like cache_statement, over the unnamed statement that any server
// connection of the pooler's accepts (docs/CLUSTER.md has the measurements).
const DefaultPooledExecMode = "cache_describe"

// DefaultReplicaMaxLag is DATABASE_REPLICA_MAX_LAG's default.
const DefaultReplicaMaxLag = time.Second

// loadDatabase reads the pooler, the exec mode, the migration URL and the replica's
// settings.
func loadDatabase(c *Config, getenv func(string) string, dur func(string, time.Duration) time.Duration) []error {
	var errs []error
	d := Database{
		Pooler: getenv("DATABASE_POOLER"), ExecMode: getenv("DATABASE_EXEC_MODE"),
		MigrateURL: getenv("DATABASE_MIGRATE_URL"), ReplicaURL: getenv("DATABASE_REPLICA_URL"),
		ReplicaMaxLag: dur("DATABASE_REPLICA_MAX_LAG", DefaultReplicaMaxLag),
	}
	switch d.Pooler {
	case "", "none":
		d.Pooler = ""
		if d.MigrateURL == "" {
			d.MigrateURL = c.DatabaseURL
		}
	case PoolerTransaction:
		if d.ExecMode == "" {
			d.ExecMode = DefaultPooledExecMode
		}
		if d.ExecMode == "cache_statement" {
			errs = append(errs, fmt.Errorf("DATABASE_EXEC_MODE=cache_statement: a transaction pooler hands each transaction any server connection, where a named prepared statement may not exist; want one of %v but cache_statement", ExecModes[1:]))
		}
	default:
		errs = append(errs, fmt.Errorf("DATABASE_POOLER=%q: want none or transaction", d.Pooler))
	}
	if d.ExecMode != "" && !slices.Contains(ExecModes, d.ExecMode) {
		errs = append(errs, fmt.Errorf("DATABASE_EXEC_MODE=%q: want one of %v", d.ExecMode, ExecModes))
	}
	for name, v := range map[string]string{"DATABASE_MIGRATE_URL": getenv("DATABASE_MIGRATE_URL"), "DATABASE_REPLICA_URL": d.ReplicaURL} {
		if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql")) {
			errs = append(errs, fmt.Errorf("%s: want a postgres:// URL", name))
		}
	}
	c.DB = d
	return errs
}
