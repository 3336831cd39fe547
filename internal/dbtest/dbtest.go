// Package dbtest gives tests real PostgreSQL and Redis: a fresh migrated database per
// test, cloned from a template, a Redis client with a key prefix of the test's own, and
// a TCP proxy that can take a connection down. Tests run against the services that
// `make test` starts (.ci/services.sh), named by DATABASE_URL and REDIS_URL.
//
// Only tests import it. It imports the migrations, pgx and go-redis, no domain package:
// a test builds its own services over what it gives.
package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/migrations"
)

// templateLockKey is the pg_advisory_lock key that serialises template creation across
// the test binaries `go test ./...` runs at once. Any constant works as long as no other
// code uses it on the same cluster.
const templateLockKey int64 = 0x626f786f_74706c // "boxotpl"

// setupTimeout bounds the admin statements of one call; template creation migrates
// and gets longer.
const (
	setupTimeout    = 30 * time.Second
	templateTimeout = 2 * time.Minute
)

// template holds the per-process result of ensuring the template database: every
// Pool and URL call in the binary clones the same one.
var template = sync.OnceValues(ensureTemplate)

// Pool returns a pool (MaxConns 16) on a fresh database of its own, with every
// migration applied. The pool is closed and the database dropped when the test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(URL(t))
	if err != nil {
		t.Fatalf("dbtest: parse database url: %v", err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("dbtest: open pool: %v", err)
	}
	// Cleanups run last-in first-out: the pool closes before URL's cleanup drops the
	// database.
	t.Cleanup(pool.Close)
	return pool
}

// URL returns the connection URL of a fresh migrated database, for code that opens its
// own pool. The database is dropped, with any connections still open to it, when the
// test ends.
func URL(t testing.TB) string {
	t.Helper()
	adminURL := adminURL(t)
	tpl, err := template()
	if err != nil {
		t.Fatalf("dbtest: template database: %v", err)
	}
	name := "boxoffice_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(t.Context(), setupTimeout)
	defer cancel()
	err = admin(ctx, adminURL, func(conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident(name)+" TEMPLATE "+ident(tpl)); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
		// Tests do not need durable commits; skipping the WAL flush makes them faster.
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident(name)+" SET synchronous_commit = off"); err != nil {
			return fmt.Errorf("alter database %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		err := admin(ctx, adminURL, func(conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)")
			return err
		})
		if err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
		}
	})
	u, err := withDatabase(adminURL, name)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return u
}

func adminURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("DATABASE_URL")
	if u == "" {
		t.Fatal("DATABASE_URL not set: run tests through `make test`")
	}
	return u
}

// ensureTemplate makes sure the template database for the current migrations exists
// and returns its name. The name carries a hash of the migration files, so a changed
// migration gets a new template instead of reusing a stale one.
func ensureTemplate() (string, error) {
	adminURL := os.Getenv("DATABASE_URL")
	if adminURL == "" {
		return "", errors.New("DATABASE_URL not set: run tests through `make test`")
	}
	hash, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "boxoffice_tpl_" + hash
	build := name + "_build"
	ctx, cancel := context.WithTimeout(context.Background(), templateTimeout)
	defer cancel()
	err = admin(ctx, adminURL, func(conn *pgx.Conn) error {
		// Several test binaries reach this point at once; the first builds, the others
		// wait here and then find the template. The lock ends with the session.
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockKey); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
			return fmt.Errorf("look up %s: %w", name, err)
		}
		if exists {
			return nil
		}
		// The template is built under another name and renamed when complete, so a
		// run that died half-way leaves only a _build database, never a template
		// missing migrations.
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(build)+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop leftover %s: %w", build, err)
		}
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident(build)); err != nil {
			return fmt.Errorf("create %s: %w", build, err)
		}
		buildURL, err := withDatabase(adminURL, build)
		if err != nil {
			return err
		}
		if _, err := migrations.Up(ctx, buildURL); err != nil {
			return fmt.Errorf("migrate %s: %w", build, err)
		}
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident(build)+" RENAME TO "+ident(name)); err != nil {
			return fmt.Errorf("rename %s: %w", build, err)
		}
		// CREATE DATABASE ... TEMPLATE fails while anyone is connected to the
		// template: refuse connections to it so none can be.
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident(name)+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
			return fmt.Errorf("mark %s as template: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return name, nil
}

// migrationsHash is the first 8 hex digits of a SHA-256 over the embedded migration
// files (filesHash), the function files under migrations/functions among them, and the
// version of River's migrations that migrations.Up applies after them.
func migrationsHash() (string, error) {
	return filesHash(migrations.FS, migrations.RiverVersion())
}

// filesHash hashes the names and contents of every file of fsys, in the lexical order
// fs.WalkDir visits them (subfolders included), and River's version.
func filesHash(fsys fs.FS, river int) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "river\x00%d\x00", river)
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:8], nil
}

// admin runs fn on a short-lived connection to the admin database. A connection per
// call rather than a process-wide pool leaves nothing running between tests, so a test
// that counts goroutines sees only its own.
func admin(ctx context.Context, adminURL string, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to DATABASE_URL: %w", err)
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

// withDatabase returns the connection string dsn with its database replaced by name.
// It takes URLs (postgres://...) and keyword/value strings (host=... dbname=...).
func withDatabase(dsn, name string) (string, error) {
	if !isURL(dsn) {
		// In a keyword/value string a later keyword wins.
		return dsn + " dbname=" + name, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	u.Path = "/" + name
	u.RawPath = ""
	q := u.Query()
	if q.Has("dbname") {
		q.Del("dbname")
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

func isURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// randomHex returns 2n lowercase hex digits: lowercase so that database names need no
// quoting when someone types them into psql.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}
