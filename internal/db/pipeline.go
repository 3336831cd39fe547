package db

// Hand-written, beside sqlc's code: statements of this package queued together, so
// that several reach PostgreSQL in one round trip.

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Pipeline queues statements of this package on one pgx.Batch and sends them together:
// one round trip, and one wake-up of the database backend, instead of one for each.
// PostgreSQL runs them in the order queued, each seeing what the earlier ones did (in a
// transaction, as one after another would), so lock order is the queue's order.
//
// Each method queues exactly the statement and arguments of the Queries method of the
// same name (it calls that method against a recorder), and returns where the result
// will be: filled in once Send has returned nil. The first statement that fails ends
// the batch, and Send returns its error; a transaction is then aborted, as it would be
// had the statement been sent alone.
//
// Queue only statements whose arguments do not depend on an earlier one's result; that
// is what makes them one round trip.
type Pipeline struct {
	b pgx.Batch
}

// Row is a queued statement's single row: Found is false when it returned none.
type Row[T any] struct {
	Val   T
	Found bool
}

// Rows is a queued statement's rows.
type Rows[T any] struct {
	Vals []T
}

// Affected is a queued statement's count of affected rows.
type Affected struct {
	N int64
}

// Len is the number of statements queued.
func (p *Pipeline) Len() int { return p.b.Len() }

// Send sends the queued statements on db (a transaction, usually) and reads their
// results. The pipeline is empty afterwards, ready for more.
func (p *Pipeline) Send(ctx context.Context, db DBTX) error {
	if p.b.Len() == 0 {
		return nil
	}
	err := db.SendBatch(ctx, &p.b).Close()
	p.b = pgx.Batch{}
	return err
}

// SendAndCommit is Send with the transaction's COMMIT in the same round trip, when db
// is a LazyTx (LazyTx.SendAndCommit): for the last statements of a transaction whose
// answers cannot make it roll back. On any other db it is Send, and the caller's
// Commit commits.
func (p *Pipeline) SendAndCommit(ctx context.Context, db DBTX) error {
	tx, ok := db.(*LazyTx)
	if !ok {
		return p.Send(ctx, db)
	}
	err := tx.SendAndCommit(ctx, &p.b)
	p.b = pgx.Batch{}
	return err
}

// Savepoint queues SAVEPOINT name: what follows can be undone alone with
// RollbackTo(name), sent on its own when the results say so. A savepoint need not be
// released: the transaction's commit keeps what was done after it.
func (p *Pipeline) Savepoint(name string) {
	p.b.Queue("SAVEPOINT " + pgx.Identifier{name}.Sanitize())
}

// RollbackTo undoes what the transaction did since Savepoint(name), at once.
func RollbackTo(ctx context.Context, db DBTX, name string) error {
	_, err := db.Exec(ctx, "ROLLBACK TO SAVEPOINT "+pgx.Identifier{name}.Sanitize())
	return err
}

// PaymentEventRecord queues Queries.PaymentEventRecord.
func (p *Pipeline) PaymentEventRecord(arg PaymentEventRecordParams) *Affected {
	return p.affected(func(q *Queries) { q.PaymentEventRecord(recording, arg) })
}

// OrderLock queues Queries.OrderLock.
func (p *Pipeline) OrderLock(id int64) *Row[Order] {
	return queueRow(p, pgx.RowToStructByPos[Order], func(q *Queries) { q.OrderLock(recording, id) })
}

// OrderByHold queues Queries.OrderByHold.
func (p *Pipeline) OrderByHold(arg OrderByHoldParams) *Row[Order] {
	return queueRow(p, pgx.RowToStructByPos[Order], func(q *Queries) { q.OrderByHold(recording, arg) })
}

// SeatsOfHold queues Queries.SeatsOfHold.
func (p *Pipeline) SeatsOfHold(arg SeatsOfHoldParams) *Rows[SeatsOfHoldRow] {
	return queueRows(p, pgx.RowToStructByPos[SeatsOfHoldRow], func(q *Queries) { q.SeatsOfHold(recording, arg) })
}

// PaymentLockByProviderID queues Queries.PaymentLockByProviderID.
func (p *Pipeline) PaymentLockByProviderID(arg PaymentLockByProviderIDParams) *Row[Payment] {
	return queueRow(p, pgx.RowToStructByPos[Payment], func(q *Queries) { q.PaymentLockByProviderID(recording, arg) })
}

// PaymentClaim queues Queries.PaymentClaim.
func (p *Pipeline) PaymentClaim(arg PaymentClaimParams) *Row[Payment] {
	return queueRow(p, pgx.RowToStructByPos[Payment], func(q *Queries) { q.PaymentClaim(recording, arg) })
}

// PaymentSucceed queues Queries.PaymentSucceed.
func (p *Pipeline) PaymentSucceed(arg PaymentSucceedParams) *Affected {
	return p.affected(func(q *Queries) { q.PaymentSucceed(recording, arg) })
}

// HoldLock queues Queries.HoldLock.
func (p *Pipeline) HoldLock(arg HoldLockParams) *Row[HoldLockRow] {
	return queueRow(p, pgx.RowToStructByPos[HoldLockRow], func(q *Queries) { q.HoldLock(recording, arg) })
}

// ClientLock queues Queries.ClientLock.
func (p *Pipeline) ClientLock(arg ClientLockParams) {
	p.affected(func(q *Queries) { q.ClientLock(recording, arg) })
}

// BuyerLock queues Queries.BuyerLock.
func (p *Pipeline) BuyerLock(arg BuyerLockParams) {
	p.affected(func(q *Queries) { q.BuyerLock(recording, arg) })
}

// CodeLock queues Queries.CodeLock.
func (p *Pipeline) CodeLock(arg CodeLockParams) {
	p.affected(func(q *Queries) { q.CodeLock(recording, arg) })
}

// GATierGet queues Queries.GATierGet.
func (p *Pipeline) GATierGet(arg GATierGetParams) *Row[GATierGetRow] {
	return queueRow(p, pgx.RowToStructByPos[GATierGetRow], func(q *Queries) { q.GATierGet(recording, arg) })
}

// OrderCreate queues Queries.OrderCreate.
func (p *Pipeline) OrderCreate(arg OrderCreateParams) *Row[OrderCreateRow] {
	return queueRow(p, pgx.RowToStructByPos[OrderCreateRow], func(q *Queries) { q.OrderCreate(recording, arg) })
}

// HoldCreate queues Queries.HoldCreate.
func (p *Pipeline) HoldCreate(arg HoldCreateParams) *Row[HoldCreateRow] {
	return queueRow(p, pgx.RowToStructByPos[HoldCreateRow], func(q *Queries) { q.HoldCreate(recording, arg) })
}

// GATakeFromOne queues Queries.GATakeFromOne.
func (p *Pipeline) GATakeFromOne(arg GATakeFromOneParams) *Row[int32] {
	return queueRow(p, pgx.RowTo[int32], func(q *Queries) { q.GATakeFromOne(recording, arg) })
}

// SeatHold queues Queries.SeatHold.
func (p *Pipeline) SeatHold(arg SeatHoldParams) *Rows[SeatHoldRow] {
	return queueRows(p, pgx.RowToStructByPos[SeatHoldRow], func(q *Queries) { q.SeatHold(recording, arg) })
}

// SeatClaimUnlocked queues Queries.SeatClaimUnlocked.
func (p *Pipeline) SeatClaimUnlocked(arg SeatClaimUnlockedParams) *Rows[SeatClaimUnlockedRow] {
	return queueRows(p, pgx.RowToStructByPos[SeatClaimUnlockedRow], func(q *Queries) { q.SeatClaimUnlocked(recording, arg) })
}

// BuyerWithinLimit queues Queries.BuyerWithinLimit.
func (p *Pipeline) BuyerWithinLimit(arg BuyerWithinLimitParams) *Row[BuyerWithinLimitRow] {
	return queueRow(p, pgx.RowToStructByPos[BuyerWithinLimitRow], func(q *Queries) { q.BuyerWithinLimit(recording, arg) })
}

// SeatSell queues Queries.SeatSell.
func (p *Pipeline) SeatSell(arg SeatSellParams) *Rows[int64] {
	return queueRows(p, pgx.RowTo[int64], func(q *Queries) { q.SeatSell(recording, arg) })
}

// TicketsIssueForSeats queues Queries.TicketsIssueForSeats.
func (p *Pipeline) TicketsIssueForSeats(arg TicketsIssueForSeatsParams) *Affected {
	return p.affected(func(q *Queries) { q.TicketsIssueForSeats(recording, arg) })
}

// TicketsIssueForGA queues Queries.TicketsIssueForGA.
func (p *Pipeline) TicketsIssueForGA(arg TicketsIssueForGAParams) *Affected {
	return p.affected(func(q *Queries) { q.TicketsIssueForGA(recording, arg) })
}

// OrderConfirm queues Queries.OrderConfirm.
func (p *Pipeline) OrderConfirm(arg OrderConfirmParams) *Affected {
	return p.affected(func(q *Queries) { q.OrderConfirm(recording, arg) })
}

// queueRow queues the statement call sends, for one row or none.
func queueRow[T any](p *Pipeline, scan pgx.RowToFunc[T], call func(*Queries)) *Row[T] {
	r := new(Row[T])
	p.queue(call).Query(func(rows pgx.Rows) error {
		v, err := pgx.CollectExactlyOneRow(rows, scan)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		r.Val, r.Found = v, err == nil
		return err
	})
	return r
}

// queueRows queues the statement call sends, for all its rows.
func queueRows[T any](p *Pipeline, scan pgx.RowToFunc[T], call func(*Queries)) *Rows[T] {
	r := &Rows[T]{Vals: []T{}}
	p.queue(call).Query(func(rows pgx.Rows) error {
		vals, err := pgx.AppendRows(r.Vals, rows, scan)
		r.Vals = vals
		return err
	})
	return r
}

// affected queues the statement call sends, for its count of affected rows.
func (p *Pipeline) affected(call func(*Queries)) *Affected {
	a := new(Affected)
	p.queue(call).Exec(func(ct pgconn.CommandTag) error {
		a.N = ct.RowsAffected()
		return nil
	})
	return a
}

// queue records what call sends and queues it.
func (p *Pipeline) queue(call func(*Queries)) *pgx.QueuedQuery {
	var r recorder
	call(&Queries{db: &r})
	if r.sql == "" {
		panic("db.Pipeline: the call sent no statement")
	}
	return p.b.Queue(r.sql, r.args...)
}

// recorder is a DBTX that keeps the one statement a Queries method sends, and answers
// errRecorded: the method's own result is thrown away.
type recorder struct {
	sql  string
	args []any
}

var errRecorded = errors.New("recorded, not sent")

// recording is the context of a call whose statement is only recorded.
var recording = context.Background()

func (r *recorder) keep(sql string, args []any) {
	if r.sql != "" {
		panic("db.Pipeline: the call sent more than one statement")
	}
	r.sql, r.args = sql, args
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.keep(sql, args)
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.keep(sql, args)
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.keep(sql, args)
	return recordedRow{}
}

func (r *recorder) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	panic("db.Pipeline: COPY cannot be queued")
}

func (r *recorder) SendBatch(context.Context, *pgx.Batch) pgx.BatchResults {
	panic("db.Pipeline: a batch cannot be queued")
}

type recordedRow struct{}

func (recordedRow) Scan(...any) error { return errRecorded }
