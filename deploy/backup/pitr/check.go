package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"boxoffice/internal/booking/bookingtest"

	"github.com/jackc/pgx/v5/pgxpool"
)

// order is an order as one database has it: whether it is confirmed, and whether it
// was confirmed after the target time.
type order struct {
	ID        int64
	Confirmed bool
	After     bool
}

// outcome is what check found, for the report.
type outcome struct {
	Marked, Restored, SourceAfter int
	Problems                      []string
}

// compare judges a restore: every marked order confirmed in it, none of its orders
// confirmed after the target, and at least one order of the source confirmed after the
// target, which the restore must lack (a restore that lacks nothing proves nothing).
func compare(marked []int64, restored, source []order) outcome {
	out := outcome{Marked: len(marked)}
	byID := make(map[int64]order, len(restored))
	for _, o := range restored {
		byID[o.ID] = o
		if o.Confirmed {
			out.Restored++
		}
		if o.Confirmed && o.After {
			out.Problems = append(out.Problems, fmt.Sprintf("order %d is confirmed after the target", o.ID))
		}
	}
	for _, id := range marked {
		if o, ok := byID[id]; !ok || !o.Confirmed {
			out.Problems = append(out.Problems, fmt.Sprintf("order %d, confirmed before the target, is not confirmed", id))
		}
	}
	for _, o := range source {
		if !o.Confirmed || !o.After {
			continue
		}
		out.SourceAfter++
		if r, ok := byID[o.ID]; ok && r.Confirmed {
			out.Problems = append(out.Problems, fmt.Sprintf("order %d, confirmed after the target, is confirmed", o.ID))
		}
	}
	if out.SourceAfter == 0 {
		out.Problems = append(out.Problems, "the source confirmed no order after the target: the restore cut nothing")
	}
	return out
}

// orders reads an event's orders; After compares confirmed_at, the confirming
// transaction's start, with the target: a transaction that commits by the target
// started by it.
func orders(ctx context.Context, pool *pgxpool.Pool, event int64, target string) ([]order, error) {
	rows, err := pool.Query(ctx, `
		SELECT id, status = 'confirmed', coalesce(confirmed_at > $2::timestamptz, false)
		FROM orders WHERE event_id = $1`, event, target)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []order
	for rows.Next() {
		var o order
		if err := rows.Scan(&o.ID, &o.Confirmed, &o.After); err != nil {
			return nil, err
		}
		list = append(list, o)
	}
	return list, rows.Err()
}

// checkRestore runs compare on the restored database and the source, then the seat
// invariants, which hold at any instant, in flight or not.
func checkRestore(ctx context.Context, restored *pgxpool.Pool, sourceURL, markPath string, stdout io.Writer) error {
	m, err := readMark(markPath)
	if err != nil {
		return err
	}
	source, err := pgxpool.New(ctx, sourceURL)
	if err != nil {
		return err
	}
	defer source.Close()
	got, err := orders(ctx, restored, m.Event, m.Target)
	if err != nil {
		return fmt.Errorf("restored: %w", err)
	}
	later, err := orders(ctx, source, m.Event, m.Target)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	out := compare(m.Confirmed, got, later)
	seats, err := bookingtest.Violations(ctx, restored, m.Event)
	if err != nil {
		return err
	}
	out.Problems = append(out.Problems, seats...)
	fmt.Fprintf(stdout, "target %s: %d orders confirmed before it, %d confirmed in the restore, %d confirmed after it in the source\n",
		m.Target, out.Marked, out.Restored, out.SourceAfter)
	return report(stdout, out.Problems)
}

// settle waits until no refund of the event is under way, then checks every
// invariant of the seats and the money.
func settle(ctx context.Context, pool *pgxpool.Pool, event int64, wait time.Duration, stdout io.Writer) error {
	deadline := time.Now().Add(wait)
	for {
		var left int
		err := pool.QueryRow(ctx, `
			SELECT (SELECT count(*) FROM refunds r JOIN orders o ON o.id = r.order_id
			        WHERE o.event_id = $1 AND r.state IN ('due', 'pending'))
			     + (SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'refund_pending')`, event).Scan(&left)
		if err != nil {
			return err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: after %v, %d refunds or refund_pending orders left", errFailed, wait, left)
		}
		select { // polling: the refunds are the restored program's jobs
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	seats, err := bookingtest.Violations(ctx, pool, event)
	if err != nil {
		return err
	}
	money, err := bookingtest.MoneyViolations(ctx, pool, event)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "settled: %d seat and %d money invariant violations\n", len(seats), len(money))
	return report(stdout, append(seats, money...))
}

func report(stdout io.Writer, problems []string) error {
	for _, p := range problems {
		fmt.Fprintln(stdout, "  FAIL", p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %d problems", errFailed, len(problems))
	}
	fmt.Fprintln(stdout, "  ok")
	return nil
}
