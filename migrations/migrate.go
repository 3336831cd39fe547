package migrations

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// lockKey is the pg_advisory_lock key that the whole of Up runs under, ours and
// River's migrations alike. Any constant works as long as no other code uses it on the
// same database; goose's own lock (a different key) is still taken inside it, for a
// goose run by hand.
const lockKey int64 = 0x626f786f_6d6967 // "boxomig"

// Up applies every pending migration to the database at databaseURL: ours (goose, the
// SQL files in this folder), then the function files (FunctionsDir) when they changed
// or a migration ran, then River's job tables (rivermigrate), which our code depends
// on and which depend on nothing of ours. It holds a PostgreSQL session lock while it
// works, so two instances starting at once cannot migrate at the same time: the second
// waits, then finds nothing to do. applied counts the migrations of both kinds.
func Up(ctx context.Context, databaseURL string) (applied int, err error) {
	// The lock lives on a connection of its own and ends with it, even if this
	// process dies half-way.
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return 0, fmt.Errorf("migration lock: %w", err)
	}

	pc, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return 0, fmt.Errorf("open database: %w", err)
	}
	pc.MaxConns = 4 // goose's lock, its migration, and River's
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return 0, fmt.Errorf("open database: %w", err)
	}
	defer pool.Close()

	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return 0, fmt.Errorf("migration lock: %w", err)
	}
	// Out of order: a database that took a later-numbered migration first (a
	// release built while another migration was written beside it) still takes the
	// earlier one, rather than refusing to start. The numbered migrations are
	// independent of one another's order past the ones they build on, which are
	// always older releases.
	p, err := goose.NewProvider(goose.DialectPostgres, db, FS, goose.WithSessionLocker(locker), goose.WithAllowOutofOrder(true))
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return len(results), fmt.Errorf("migrate: %w", err)
	}
	if _, err := applyFunctions(ctx, conn, len(results) > 0); err != nil {
		return len(results), fmt.Errorf("functions: %w", err)
	}

	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return len(results), fmt.Errorf("river migrations: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return len(results), fmt.Errorf("migrate river: %w", err)
	}
	return len(results) + len(res.Versions), nil
}

// RiverVersion is the newest River migration Up applies. It changes when River is
// upgraded, and a copy of a migrated schema (a test template database) must then be
// made again, as when a file of ours changes.
func RiverVersion() int {
	m, err := rivermigrate.New(riverpgxv5.New(nil), nil) // reads River's embedded files only
	if err != nil {
		panic(err) // the main line always exists
	}
	all := m.AllVersions()
	return all[len(all)-1].Version
}
