package db_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// The seat claims and the sale take their seats' ids as an array. Read straight from
// the parameter, the ids' count makes each call's own plan cheaper than the prepared
// statement's generic plan, and PostgreSQL plans the statement anew at every call
// (queries/seats.sql, SeatSell). Behind a sub-select the generic plan is kept from the
// sixth call on. The test runs each statement seven times on one connection and reads
// PostgreSQL's own counts of the plans it made (pg_prepared_statements); as a negative
// control it runs SeatSell's text with the ids read straight again, which must get no
// generic plan, or the check could not fail.
func TestSeatClaimsKeepTheirPlan(t *testing.T) {
	ctx := t.Context()
	pool, o, _ := orderPaying(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	rows, _ := tx.Query(ctx, `SELECT id FROM seats WHERE event_id = $1 AND held_by IS NULL AND sold_at IS NULL ORDER BY id LIMIT 2`, o.EventID)
	free, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(free) != 2 {
		t.Fatalf("free seats: %v %v", free, err)
	}
	later := time.Now().Add(time.Hour)
	q := db.New(tx)
	const calls = 7
	for i := range calls {
		// Claimed by the first call, the free seats are no longer free for the next
		// ones, which claim nothing: the plan is made and run all the same.
		if _, err := q.SeatClaimUnlocked(ctx, db.SeatClaimUnlockedParams{EventID: o.EventID, SeatIds: free, HoldID: &o.HoldID, ExpiresAt: &later}); err != nil {
			t.Fatalf("SeatClaimUnlocked, call %d: %v", i+1, err)
		}
		if _, err := q.SeatHold(ctx, db.SeatHoldParams{EventID: o.EventID, SeatIds: free, HoldID: &o.HoldID, ExpiresAt: &later}); err != nil {
			t.Fatalf("SeatHold, call %d: %v", i+1, err)
		}
		// Selling is idempotent on the order: every call sells the order's seats to it.
		sold, err := q.SeatSell(ctx, db.SeatSellParams{EventID: o.EventID, SeatIds: o.SeatIds, OrderID: &o.ID, HoldID: &o.HoldID})
		if err != nil || len(sold) != len(o.SeatIds) {
			t.Fatalf("SeatSell, call %d: got %v, %v; want the order's %d seats", i+1, sold, err, len(o.SeatIds))
		}
	}

	var sellText string
	for _, name := range []string{"SeatClaimUnlocked", "SeatHold", "SeatSell"} {
		text, generic, custom := plansOf(t, tx, "-- name: "+name+" :")
		if generic < 1 || custom > 5 {
			t.Errorf("%s after %d calls: %d generic and %d custom plans, want the generic plan kept from the sixth call", name, calls, generic, custom)
		}
		if name == "SeatSell" {
			sellText = text
		}
	}

	// The negative control: the same statement reading the ids straight.
	straight := strings.Replace(sellText, "ANY((SELECT $4::bigint[])::bigint[])", "ANY($4::bigint[])", 1)
	straight = strings.Replace(straight, "-- name: SeatSell :", "-- name: SeatSellStraight :", 1)
	if straight == sellText {
		t.Fatalf("SeatSell's text no longer reads the ids through a sub-select: %s", sellText)
	}
	for i := range calls {
		rows, _ := tx.Query(ctx, straight, o.ID, o.EventID, o.HoldID, o.SeatIds)
		if _, err := pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			t.Fatalf("SeatSell read straight, call %d: %v", i+1, err)
		}
	}
	if _, generic, custom := plansOf(t, tx, "-- name: SeatSellStraight :"); generic != 0 {
		t.Errorf("negative control: SeatSell reading the ids straight got %d generic and %d custom plans, want no generic plan (the check cannot fail)", generic, custom)
	}
}

// plansOf finds the statement prepared on tx's connection whose text starts with
// prefix, and says how many generic and custom plans PostgreSQL made for it.
func plansOf(t *testing.T, tx pgx.Tx, prefix string) (text string, generic, custom int64) {
	t.Helper()
	err := tx.QueryRow(t.Context(),
		`SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE starts_with(statement, $1)`,
		prefix).Scan(&text, &generic, &custom)
	if err != nil {
		t.Fatalf("prepared statement %q: %v", prefix, err)
	}
	return text, generic, custom
}
