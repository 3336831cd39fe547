package db

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// LazyTx is a transaction whose BEGIN goes to PostgreSQL with its first statements, in
// the same round trip (pgx's Batch.BeginTx), rather than in one of its own as Begin
// sends it. A sale's step is a transaction of three to six round trips (BEGIN, one or
// two pipelines, a statement or two, COMMIT), and a pooled connection is held for all
// of them: at an onsale the connections are what the steps queue for, so one round
// trip fewer a step is that much less time each holds one.
//
// The first Exec, Query, QueryRow or SendBatch goes as a batch that begins the
// transaction; from then on every call is pgx's own transaction's (savepoints, the
// commit that reports a transaction PostgreSQL rolled back as pgx.ErrTxCommitRollback).
// A transaction that never sent a statement commits and rolls back without a round
// trip. It implements pgx.Tx, so sqlc's queries, db.Pipeline and River's
// transactional inserts take it like any other.
type LazyTx struct {
	conn    *pgx.Conn
	tx      pgx.Tx // pgx's transaction, once begun
	closed  bool   // ended before it began
	release func() // gives a pooled connection back at the end (Begin)
	// committed: SendAndCommit committed; the end sends nothing. committedEnded: and
	// the end has come.
	committed, committedEnded bool
}

// BeginLazy starts a LazyTx on conn, sending nothing yet.
func BeginLazy(conn *pgx.Conn) *LazyTx { return &LazyTx{conn: conn} }

// Begin is pgxpool.Pool.Begin with a LazyTx: it takes one of pool's connections,
// sending nothing yet, and gives it back when the transaction ends (its Commit or
// Rollback), as the pool's own transactions do.
func Begin(ctx context.Context, pool *pgxpool.Pool) (*LazyTx, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &LazyTx{conn: conn.Conn(), release: conn.Release}, nil
}

var _ pgx.Tx = (*LazyTx)(nil)

// SendBatch sends b; the first call sends it behind the transaction's begin, in the
// same round trip. The results are b's own.
func (t *LazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	switch {
	case t.tx != nil:
		return t.tx.SendBatch(ctx, b)
	case t.closed:
		return pgx.FailedBatchResults(b, pgx.ErrTxClosed)
	}
	var begin pgx.Batch
	begin.BeginTx(pgx.TxOptions{})
	begin.QueuedQueries = append(begin.QueuedQueries, b.QueuedQueries...)
	br := t.conn.SendBatch(ctx, &begin)
	t.tx = br.Tx()
	// The begin's result is read here and b's follow. Had it failed, so would every
	// statement after it, and the caller sees that in its own results.
	_, _ = br.Exec()
	return br
}

// Exec runs sql; the first call sends it with the begin.
func (t *LazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.tx != nil {
		return t.tx.Exec(ctx, sql, args...)
	}
	var b pgx.Batch
	b.Queue(sql, args...)
	br := t.SendBatch(ctx, &b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query runs sql; the first call sends it with the begin.
func (t *LazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.tx != nil {
		return t.tx.Query(ctx, sql, args...)
	}
	var b pgx.Batch
	b.Queue(sql, args...)
	br := t.SendBatch(ctx, &b)
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return rows, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// QueryRow is Query for at most one row, scanned as pgx's row is.
func (t *LazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.tx != nil {
		return t.tx.QueryRow(ctx, sql, args...)
	}
	rows, err := t.Query(ctx, sql, args...)
	return &firstRow{rows: rows, err: err}
}

// begun is pgx's transaction, begun on its own round trip if no statement has begun
// it yet: for the calls that cannot take the begin along.
func (t *LazyTx) begun(ctx context.Context) (pgx.Tx, error) {
	switch {
	case t.tx != nil:
		return t.tx, nil
	case t.closed:
		return nil, pgx.ErrTxClosed
	}
	tx, err := t.conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	t.tx = tx
	return tx, nil
}

// CopyFrom copies within the transaction.
func (t *LazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	tx, err := t.begun(ctx)
	if err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, table, columns, src)
}

// SendAndCommit sends b with the transaction's COMMIT behind it, in the same round trip
// (the begin too, if nothing was sent yet), and reads b's results: for a transaction
// whose last statements' answers cannot make it roll back. A statement that fails ends
// the batch before the COMMIT: the error is returned, the transaction is aborted, and
// only its end (Rollback) remains. Once it returns nil, what the transaction did is
// committed; no statement may follow, the first Commit or Rollback after it sends
// nothing and returns nil (it gives the connection back), so the caller's usual Commit
// and deferred Rollback need no change.
func (t *LazyTx) SendAndCommit(ctx context.Context, b *pgx.Batch) error {
	var tag pgconn.CommandTag
	b.Queue("commit").Exec(func(ct pgconn.CommandTag) error {
		tag = ct
		return nil
	})
	if err := t.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	t.tx, t.closed, t.committed = nil, true, true
	if tag.String() == "ROLLBACK" {
		// PostgreSQL ended an aborted transaction: as pgx's Commit says it.
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Prepare prepares on the transaction's connection.
func (t *LazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	tx, err := t.begun(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Prepare(ctx, name, sql)
}

// LargeObjects are the transaction's; nothing here uses them, and they take no
// context, so a transaction not yet begun begins without one.
func (t *LazyTx) LargeObjects() pgx.LargeObjects {
	tx, err := t.begun(context.Background())
	if err != nil {
		return pgx.LargeObjects{}
	}
	return tx.LargeObjects()
}

// Conn is the transaction's connection.
func (t *LazyTx) Conn() *pgx.Conn { return t.conn }

// Begin starts a savepoint inside the transaction.
func (t *LazyTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.begun(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Begin(ctx)
}

// Commit commits what was sent; a transaction that sent nothing ends at once.
func (t *LazyTx) Commit(ctx context.Context) error { return t.end(ctx, pgx.Tx.Commit) }

// Rollback rolls back what was sent. After Commit it is a no-op (pgx.ErrTxClosed), so
// a deferred Rollback is safe.
func (t *LazyTx) Rollback(ctx context.Context) error { return t.end(ctx, pgx.Tx.Rollback) }

// end commits or rolls back (how) what was sent, and gives a pooled connection back
// at the first end whatever its error, as pgxpool's Tx does: the pool drops a
// connection left inside a transaction.
func (t *LazyTx) end(ctx context.Context, how func(pgx.Tx, context.Context) error) error {
	var err error
	switch {
	case t.committed:
		if t.committedEnded {
			err = pgx.ErrTxClosed
		}
		t.committedEnded = true
	case t.tx != nil:
		err = how(t.tx, ctx)
	case t.closed:
		err = pgx.ErrTxClosed
	default:
		t.closed = true
	}
	if t.release != nil {
		t.release()
		t.release = nil
	}
	return err
}

// batchRows are a batch's rows that close the batch with them.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		r.err = r.br.Close()
		r.br = nil
	}
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// firstRow is QueryRow's row over Query's rows, scanned as pgx's connRow is: no row is
// pgx.ErrNoRows.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r *firstRow) Scan(dest ...any) error {
	if r.err != nil {
		if r.rows != nil {
			r.rows.Close()
		}
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
