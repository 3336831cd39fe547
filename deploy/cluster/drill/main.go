// Command drill is the part of the cluster drills (deploy/cluster/drills.sh) that is
// easier to say in Go than in a shell: the invariant checks against the primary, a
// live-map viewer that follows the seat stream through the balancer and compares what
// it saw with the database, an idempotent hold and its retry on another instance, and
// the first hold that succeeds after a failure.
//
//	drill check     -db URL -event ID          every bookingtest invariant, money ones and orphaned holds
//	drill watch     -url URL -event ID -db URL -viewers N -for D
//	drill idem-hold -url URL -event ID -state FILE   a hold with an Idempotency-Key
//	drill idem-retry -url URL -state FILE            the same request again: the first answer?
//	drill first-hold -url URL -event ID -since NS    retries a one-seat hold until it is made
//
// Each prints its figures and ends with status 1 when what it checks does not hold.
package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/benchkit"
	"boxoffice/internal/booking/bookingtest"
)

const doc = `drill checks what the cluster drills (deploy/cluster/drills.sh) need to see.`

func main() {
	benchkit.Main("drill", doc,
		benchkit.Command{Name: "check", Summary: "bookingtest invariants, money and orphaned holds of an event, on the primary", Run: runCheck},
		benchkit.Command{Name: "watch", Summary: "live-map viewers through the balancer, compared with the database at the end", Run: runWatch},
		benchkit.Command{Name: "idem-hold", Summary: "a hold with an Idempotency-Key; its session, key and answer go to -state", Run: runIdemHold},
		benchkit.Command{Name: "idem-retry", Summary: "the hold of -state again, on another address: the first answer?", Run: runIdemRetry},
		benchkit.Command{Name: "first-hold", Summary: "retries a one-seat hold until one is made; prints the time since -since", Run: runFirstHold},
	)
}

// errFailed ends a subcommand whose check did not hold (exit status 1).
var errFailed = errors.New("FAIL")

// orphanedHolds finds held seats whose hold row is missing, released or sold: a
// seat's hold must always belong to a live hold.
const orphanedHolds = `
	SELECT 'seat ' || s.id || ' held by ' || s.held_by || ' without a live hold row'
	FROM seats s
	LEFT JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
	WHERE s.event_id = $1 AND s.held_by IS NOT NULL AND s.sold_at IS NULL AND s.hold_expires_at > now()
	  AND (h.id IS NULL OR h.released_at IS NOT NULL OR h.sold_at IS NOT NULL)`

func runCheck(ctx context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("drill", "check", env)
	dbURL := fs.String("db", "", "the primary's PostgreSQL URL")
	event := fs.Int64("event", 0, "the event's id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	seats, err := bookingtest.Violations(ctx, pool, *event)
	if err != nil {
		return fmt.Errorf("seat invariants: %w", err)
	}
	money, err := bookingtest.MoneyViolations(ctx, pool, *event)
	if err != nil {
		return fmt.Errorf("money invariants: %w", err)
	}
	var orphans []string
	rows, err := pool.Query(ctx, orphanedHolds, *event)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		orphans = append(orphans, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var sold, held, tickets int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE sold_at IS NOT NULL),
		count(*) FILTER (WHERE sold_at IS NULL AND held_by IS NOT NULL AND hold_expires_at > now()),
		(SELECT count(*) FROM tickets WHERE event_id = $1 AND voided_at IS NULL)
		FROM seats WHERE event_id = $1`, *event).Scan(&sold, &held, &tickets); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "check event %d: seats sold %d, held %d, valid tickets %d; seat invariants broken %d, money %d, orphaned holds %d\n",
		*event, sold, held, tickets, len(seats), len(money), len(orphans))
	for _, l := range append(append(seats, money...), orphans...) {
		fmt.Fprintln(env.Stdout, "  ", l)
	}
	if len(seats)+len(money)+len(orphans) > 0 {
		return errFailed
	}
	return nil
}
