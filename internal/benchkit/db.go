package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/migrations"
)

// runLockKey is the advisory lock a run holds on the admin database from start to
// end: two runs at once would drop each other's database and share the cores.
const runLockKey int64 = 0x686f6c64_62656e63 // "holdbenc"

// DB is a database a benchmark owns for one run, next to the admin database: made
// afresh and migrated at the start, dropped at the end. Commits stay durable, as in
// production and in the baseline.
type DB struct {
	// URL is the run's database.
	URL      string
	name     string
	adminURL string
	lock     *pgx.Conn
}

// CreateDB waits until no other run goes on against this PostgreSQL (saying so on
// log), drops any database name left over, creates it next to the admin database
// adminURL names, and migrates it.
func CreateDB(ctx context.Context, adminURL, name string, log io.Writer) (_ *DB, err error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("DATABASE_URL: want a postgres:// URL")
	}
	d := &DB{name: name, adminURL: adminURL}
	if d.lock, err = pgx.Connect(ctx, adminURL); err != nil {
		return nil, fmt.Errorf("admin connection: %w", err)
	}
	defer func() {
		if err != nil {
			d.lock.Close(context.WithoutCancel(ctx))
		}
	}()
	var got bool
	if err := d.lock.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", runLockKey).Scan(&got); err != nil {
		return nil, err
	}
	if !got {
		fmt.Fprintln(log, "another benchmark run is going on against this PostgreSQL; waiting for it to end")
		if _, err := d.lock.Exec(ctx, "SELECT pg_advisory_lock($1)", runLockKey); err != nil {
			return nil, fmt.Errorf("waiting for the other run: %w", err)
		}
	}
	for _, sql := range []string{"DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", "CREATE DATABASE " + name} {
		if _, err := d.lock.Exec(ctx, sql); err != nil {
			return nil, fmt.Errorf("%s: %w", sql, err)
		}
	}
	u.Path = "/" + name
	d.URL = u.String()
	if _, err := migrations.Up(ctx, d.URL); err != nil {
		return nil, err
	}
	return d, nil
}

// Close drops the database, unless keep, and lets the next run go.
func (d *DB) Close(keep bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if !keep {
		if _, err = d.lock.Exec(ctx, "DROP DATABASE IF EXISTS "+d.name+" WITH (FORCE)"); err != nil {
			err = fmt.Errorf("drop database %s: %w", d.name, err)
		}
	}
	return errors.Join(err, d.lock.Close(ctx))
}
