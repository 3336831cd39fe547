package replica

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Stale is what the stale-tolerant reads run through (booking's sqlc queries take it
// as their connection): each call goes to the pool Pool chooses then, and a read the
// replica fails because it went away (stopped, crashed, refused the connection) is run
// once more on the primary, so that a page does not fail in the moment between the
// replica's loss and the next measurement. The replica is then given up at once, until
// a measurement finds it again. Only reads are retried (Query, QueryRow, and a Query's
// rows before the first one arrives): Exec, CopyFrom and SendBatch go to the chosen
// pool once, since a write is never repeated behind its caller's back.
type Stale struct{ r *Reads }

// Stale returns the connection for the reads that may be MaxLag stale.
func (r *Reads) Stale() *Stale { return &Stale{r: r} }

// Exec runs on the chosen pool, without a retry.
func (s *Stale) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return s.r.Pool().Exec(ctx, sql, args...)
}

// CopyFrom runs on the chosen pool, without a retry.
func (s *Stale) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return s.r.Pool().CopyFrom(ctx, table, cols, src)
}

// SendBatch runs on the chosen pool, without a retry.
func (s *Stale) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return s.r.Pool().SendBatch(ctx, b)
}

// Query runs on the chosen pool; on the replica, a failure to reach it before the
// first row runs the query again on the primary.
func (s *Stale) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if !s.r.UseReplica() {
		return s.r.primary.Query(ctx, sql, args...)
	}
	rows, err := s.r.replica.Query(ctx, sql, args...)
	if err != nil {
		if !s.r.gone(ctx, err) {
			return nil, err
		}
		return s.r.primary.Query(ctx, sql, args...)
	}
	return &fallbackRows{Rows: rows, ctx: ctx, s: s, sql: sql, args: args}, nil
}

// QueryRow runs on the chosen pool; on the replica, a failure to reach it runs the
// query again on the primary when the row is scanned.
func (s *Stale) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if !s.r.UseReplica() {
		return s.r.primary.QueryRow(ctx, sql, args...)
	}
	return &fallbackRow{ctx: ctx, s: s, sql: sql, args: args}
}

type fallbackRow struct {
	ctx  context.Context
	s    *Stale
	sql  string
	args []any
}

func (f *fallbackRow) Scan(dest ...any) error {
	err := f.s.r.replica.QueryRow(f.ctx, f.sql, f.args...).Scan(dest...)
	if err != nil && f.s.r.gone(f.ctx, err) {
		return f.s.r.primary.QueryRow(f.ctx, f.sql, f.args...).Scan(dest...)
	}
	return err
}

// fallbackRows reads the replica's rows; if the replica fails before the first row,
// it swaps in the primary's rows for the same query (nothing was handed out yet).
type fallbackRows struct {
	pgx.Rows
	ctx     context.Context
	s       *Stale
	sql     string
	args    []any
	started bool
	err     error // the primary's refusal, when the retry could not even start
}

func (f *fallbackRows) Next() bool {
	if f.err != nil {
		return false
	}
	if f.Rows.Next() {
		f.started = true
		return true
	}
	if f.started {
		return false
	}
	f.started = true
	if err := f.Rows.Err(); err == nil || !f.s.r.gone(f.ctx, err) {
		return false
	}
	f.Rows.Close()
	rows, err := f.s.r.primary.Query(f.ctx, f.sql, f.args...)
	if err != nil {
		f.err = err
		return false
	}
	f.Rows = rows
	return f.Rows.Next()
}

func (f *fallbackRows) Err() error {
	if f.err != nil {
		return f.err
	}
	return f.Rows.Err()
}

// gone reports whether err says the replica went away, rather than the query failing
// on its own terms, and if so gives the replica up until the next good measurement.
// A caller whose context ended gets its error, not a retry.
func (r *Reads) gone(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, pgx.ErrNoRows) || !wentAway(err) {
		return false
	}
	r.fail()
	if r.opt.Log != nil {
		r.opt.Log.Warn("a read failed on the replica: it runs on the primary, and reads go there until the replica measures well", "err", err)
	}
	return true
}

// wentAway reports whether err is the server or its connection going away: a refused
// or broken connection, or the server shutting down (classes 08 and 57P).
func wentAway(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err)
}
