package app

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/replica"
)

// execModes maps DATABASE_EXEC_MODE (config.ExecModes) to pgx's modes.
var execModes = map[string]pgx.QueryExecMode{
	"cache_statement": pgx.QueryExecModeCacheStatement,
	"cache_describe":  pgx.QueryExecModeCacheDescribe,
	"describe_exec":   pgx.QueryExecModeDescribeExec,
	"exec":            pgx.QueryExecModeExec,
	"simple_protocol": pgx.QueryExecModeSimpleProtocol,
}

// openReplica opens the replica's pool (DATABASE_REPLICA_URL) and the chooser that
// sends booking's stale-tolerant reads to it while its lag allows; without a replica
// the chooser sends them all to the primary. The replica is not waited for: until
// its lag is measured, and whenever it cannot be, reads stay on the primary.
func (a *App) openReplica(ctx context.Context, adjust func(*pgxpool.Config)) error {
	cfg := a.Config
	if cfg.DB.ReplicaURL != "" {
		pool, err := openPool(ctx, cfg, cfg.DB.ReplicaURL, adjust)
		if err != nil {
			return fmt.Errorf("DATABASE_REPLICA_URL: %w", err)
		}
		a.Replica = pool
	}
	a.Reads = replica.New(a.Pool, a.Replica, replica.Options{MaxLag: cfg.DB.ReplicaMaxLag, Log: a.Log})
	return nil
}
