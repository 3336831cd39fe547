package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
)

// trips counts what a connection sends: statements alone and batches.
type trips struct{ queries, batches int }

func (c *trips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.queries++
	return ctx
}
func (c *trips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *trips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.batches++
	return ctx
}
func (c *trips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *trips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// tracedConn is a connection of its own to a fresh test database, whose sends tr counts.
func tracedConn(t *testing.T) (*pgx.Conn, *trips) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := &trips{}
	cfg.Tracer = tr
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn, tr
}

func sessionRows(t *testing.T, conn *pgx.Conn, token string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM sessions WHERE token = $1`, token).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

const insertSession = `INSERT INTO sessions (token, data, expiry) VALUES ($1, 'x', now() + interval '1 hour') RETURNING token`

// TestLazyTxIsATransaction: whichever call comes first (Exec, Query, QueryRow, a
// batch), what it and the calls after it do is one transaction: rolled back it is
// gone, committed it stays; and the begin goes in the first call's own round trip,
// so a transaction of one statement is two round trips, not pgx's three (the control).
func TestLazyTxIsATransaction(t *testing.T) {
	conn, tr := tracedConn(t)
	ctx := t.Context()
	first := map[string]func(tx pgx.Tx, token string) error{
		"Exec": func(tx pgx.Tx, token string) error {
			_, err := tx.Exec(ctx, insertSession, token)
			return err
		},
		"Query": func(tx pgx.Tx, token string) error {
			rows, err := tx.Query(ctx, insertSession, token)
			if err != nil {
				return err
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err == nil && (len(got) != 1 || got[0] != token) {
				err = errors.New("Query: got " + got[0])
			}
			return err
		},
		"QueryRow": func(tx pgx.Tx, token string) error {
			var got string
			if err := tx.QueryRow(ctx, insertSession, token).Scan(&got); err != nil {
				return err
			}
			if got != token {
				return errors.New("QueryRow: got " + got)
			}
			return nil
		},
		"SendBatch": func(tx pgx.Tx, token string) error {
			var b pgx.Batch
			b.Queue(insertSession, token)
			b.Queue(`SELECT 1`)
			return tx.SendBatch(ctx, &b).Close()
		},
	}
	for name, do := range first {
		for _, commit := range []bool{false, true} {
			token := name
			if commit {
				token += "-committed"
			}
			*tr = trips{}
			tx := db.BeginLazy(conn)
			if err := do(tx, token); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// A second statement sees the first: the same transaction.
			if n := sessionRowsIn(t, tx, token); n != 1 {
				t.Errorf("%s: the transaction's next statement sees %d rows, want 1", name, n)
			}
			sent := *tr
			var err error
			if commit {
				err = tx.Commit(ctx)
			} else {
				err = tx.Rollback(ctx)
			}
			if err != nil {
				t.Fatalf("%s: end: %v", name, err)
			}
			if got, want := sessionRows(t, conn, token), map[bool]int{false: 0, true: 1}[commit]; got != want {
				t.Errorf("%s, committed %v: %d rows after, want %d", name, commit, got, want)
			}
			if sent.queries+sent.batches != 2 {
				t.Errorf("%s: begin, the statement and the next took %d round trips, want 2", name, sent.queries+sent.batches)
			}
			if s := conn.PgConn().TxStatus(); s != 'I' {
				t.Errorf("%s: connection left in transaction status %q", name, s)
			}
		}
	}

	// The control: pgx's own transaction sends its begin alone.
	*tr = trips{}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, insertSession, "pgx"); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback(ctx)
	if got := tr.queries + tr.batches; got != 3 {
		t.Errorf("pgx's transaction: %d round trips for begin, a statement and its end; want 3", got)
	}
}

func sessionRowsIn(t *testing.T, tx pgx.Tx, token string) int {
	t.Helper()
	var n int
	if err := tx.QueryRow(t.Context(), `SELECT count(*) FROM sessions WHERE token = $1`, token).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLazyTxEnds: a transaction that sent nothing ends without a round trip; one whose
// statement failed cannot be committed (pgx.ErrTxCommitRollback, as pgx's says) and
// leaves nothing; a savepoint undoes only what followed it; nothing runs after the end.
func TestLazyTxEnds(t *testing.T) {
	conn, tr := tracedConn(t)
	ctx := t.Context()

	*tr = trips{}
	tx := db.BeginLazy(conn)
	if err := tx.Commit(ctx); err != nil || tr.queries+tr.batches != 0 {
		t.Errorf("empty transaction: commit %v after %d round trips, want nil after 0", err, tr.queries+tr.batches)
	}
	if _, err := tx.Exec(ctx, `SELECT 1`); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("after commit: Exec got %v, want ErrTxClosed", err)
	}
	if err := tx.Rollback(ctx); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("after commit: Rollback got %v, want ErrTxClosed", err)
	}

	tx = db.BeginLazy(conn)
	if _, err := tx.Exec(ctx, insertSession, "failed"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, insertSession, "failed"); err == nil {
		t.Fatal("a duplicate token was inserted")
	}
	if err := tx.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("commit after a failed statement: got %v, want ErrTxCommitRollback", err)
	}
	if n := sessionRows(t, conn, "failed"); n != 0 {
		t.Errorf("after a failed transaction: %d rows, want 0", n)
	}

	tx = db.BeginLazy(conn)
	if _, err := tx.Exec(ctx, insertSession, "outer"); err != nil {
		t.Fatal(err)
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Exec(ctx, insertSession, "inner"); err != nil {
		t.Fatal(err)
	}
	if err := sp.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if o, i := sessionRows(t, conn, "outer"), sessionRows(t, conn, "inner"); o != 1 || i != 0 {
		t.Errorf("after a savepoint rolled back: outer %d, inner %d rows; want 1 and 0", o, i)
	}
}

// TestBeginGivesTheConnectionBack: db.Begin takes one of the pool's connections and
// gives it back at the transaction's end, committed, rolled back or empty, once: on a
// pool of one connection, the next Begin gets it at once. Without the give-back the
// second Begin waits out its deadline.
func TestBeginGivesTheConnectionBack(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pool.Stat().AcquiredConns() == 0 { // a connection never given back would hold Close forever
			pool.Close()
		}
	})
	for _, end := range []struct {
		name string
		do   func(ctx context.Context, tx *db.LazyTx) error
	}{
		{"committed", func(ctx context.Context, tx *db.LazyTx) error {
			if _, err := tx.Exec(ctx, insertSession, "pooled"); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}},
		{"rolled back", func(ctx context.Context, tx *db.LazyTx) error {
			if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
				return err
			}
			return tx.Rollback(ctx)
		}},
		{"empty", func(ctx context.Context, tx *db.LazyTx) error { return tx.Commit(ctx) }},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		tx, err := db.Begin(ctx, pool)
		if err != nil {
			cancel()
			t.Fatalf("%s: begin: %v", end.name, err)
		}
		if err := end.do(ctx, tx); err != nil {
			t.Fatalf("%s: %v", end.name, err)
		}
		if err := tx.Rollback(ctx); !errors.Is(err, pgx.ErrTxClosed) { // the deferred one
			t.Errorf("%s: a Rollback after the end got %v, want ErrTxClosed", end.name, err)
		}
		cancel()
		if n := pool.Stat().AcquiredConns(); n != 0 {
			t.Errorf("%s: %d connections still taken after the end, want 0", end.name, n)
		}
	}
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM sessions WHERE token = 'pooled'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the committed row: %d (%v), want 1", n, err)
	}
}

// TestLazyTxSendAndCommit: the last statements and the COMMIT go in one round trip
// (with the begin too when nothing was sent before); what was done is committed, the
// end that follows sends nothing, and nothing runs after. A statement that fails ends
// the batch before the COMMIT: nothing of the transaction stays (the control that the
// COMMIT is not simply run whatever happens).
func TestLazyTxSendAndCommit(t *testing.T) {
	conn, tr := tracedConn(t)
	ctx := t.Context()
	for _, begun := range []bool{false, true} {
		token := map[bool]string{false: "and-commit", true: "begun-and-commit"}[begun]
		tx := db.BeginLazy(conn)
		if begun {
			if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
				t.Fatal(err)
			}
		}
		*tr = trips{}
		var b pgx.Batch
		b.Queue(insertSession, token)
		if err := tx.SendAndCommit(ctx, &b); err != nil {
			t.Fatalf("begun %v: %v", begun, err)
		}
		if got := tr.queries + tr.batches; got != 1 {
			t.Errorf("begun %v: %d round trips for the statement and the commit, want 1", begun, got)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Errorf("begun %v: Commit after SendAndCommit: %v, want nil", begun, err)
		}
		if got := tr.queries + tr.batches; got != 1 {
			t.Errorf("begun %v: the end sent %d round trips, want none", begun, got-1)
		}
		if err := tx.Rollback(ctx); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("begun %v: Rollback after the end: %v, want ErrTxClosed", begun, err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1`); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("begun %v: Exec after SendAndCommit: %v, want ErrTxClosed", begun, err)
		}
		if n := sessionRows(t, conn, token); n != 1 {
			t.Errorf("begun %v: %d rows after, want 1 (committed)", begun, n)
		}
		if s := conn.PgConn().TxStatus(); s != 'I' {
			t.Errorf("begun %v: connection left in transaction status %q", begun, s)
		}
	}

	tx := db.BeginLazy(conn)
	var b pgx.Batch
	b.Queue(insertSession, "failed-and-commit")
	b.Queue(insertSession, "failed-and-commit") // a duplicate token
	if err := tx.SendAndCommit(ctx, &b); err == nil {
		t.Fatal("a duplicate token was inserted")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Errorf("rollback after the failed batch: %v", err)
	}
	if n := sessionRows(t, conn, "failed-and-commit"); n != 0 {
		t.Errorf("after a failed batch: %d rows, want 0 (the COMMIT did not run)", n)
	}
	if s := conn.PgConn().TxStatus(); s != 'I' {
		t.Errorf("after a failed batch: connection left in transaction status %q", s)
	}
}
