package db_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
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

// hold_seats (migrations/functions/hold_seats.sql) reads the asked-for seats' ids
// through a sub-select for the same reason, inside PL/pgSQL, whose statements' plans
// PostgreSQL keeps in the same cache as a client's. Those plans are not in pg_prepared_statements, so the test
// counts them with pg_stat_statements (track = all counts the statements inside a
// function, track_planning their plans): eight holds of two seats, and the lock of
// the seats and their claim must have been planned at most six times each. The
// negative control is the function's own text with the ids read straight, created
// beside it, which must be planned at every call.
func TestHoldSeatsKeepsItsPlans(t *testing.T) {
	ctx := t.Context()
	pool := dbtest.Pool(t)
	eventID, err := demo.Create(ctx, pool, demo.DemoSpec(time.Now()))
	if err != nil {
		t.Fatalf("create event: %v", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, stmt := range []string{
		`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`,
		`SET pg_stat_statements.track = 'all'`,
		`SET pg_stat_statements.track_planning = on`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v (the test needs pg_stat_statements in shared_preload_libraries, as .ci/services.sh configures PostgreSQL)", stmt, err)
		}
	}

	var def string
	if err := conn.QueryRow(ctx, `SELECT pg_get_functiondef('hold_seats'::regproc)`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	const lockIDs, claimIDs = "ANY((SELECT p_seat_ids)::bigint[])", "ANY((SELECT v_free)::bigint[])"
	if !strings.Contains(def, lockIDs) || !strings.Contains(def, claimIDs) {
		t.Fatalf("hold_seats no longer reads its ids through a sub-select:\n%s", def)
	}
	straight := strings.NewReplacer(lockIDs, "ANY(p_seat_ids)", claimIDs, "ANY(v_free)",
		"FUNCTION public.hold_seats(", "FUNCTION public.hold_seats_straight(").Replace(def)
	if !strings.Contains(straight, "hold_seats_straight(") {
		t.Fatalf("could not name the negative control's function:\n%s", def)
	}
	if _, err := conn.Exec(ctx, straight); err != nil {
		t.Fatalf("create the negative control: %v", err)
	}

	const calls = 8
	q := db.New(conn)
	deallocs := func() (n int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT dealloc FROM pg_stat_statements_info`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// run makes the eight holds each way, on seats of their own (attempt 0, 1, …).
	run := func(attempt int) {
		t.Helper()
		rows, _ := conn.Query(ctx, `SELECT id FROM seats WHERE event_id = $1 ORDER BY id LIMIT 32 OFFSET $2`, eventID, 32*attempt)
		seats, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(seats) != 32 {
			t.Fatalf("seats: %d, %v", len(seats), err)
		}
		for i := range calls {
			got, err := q.SeatsHoldExact(ctx, db.SeatsHoldExactParams{
				EventID: eventID, Buyer: fmt.Sprintf("plans-%d-%d", attempt, i), SeatIds: seats[2*i : 2*i+2], TtlSeconds: 60, BuyerLimit: 8,
			})
			if err != nil || len(got) != 2 || got[0].Status != "held" {
				t.Fatalf("hold %d: %+v, %v", i+1, got, err)
			}
			var held int
			err = conn.QueryRow(ctx, `SELECT count(*) FROM hold_seats_straight($1, $2, $3, 60, 8) WHERE status = 'held'`,
				eventID, fmt.Sprintf("straight-%d-%d", attempt, i), seats[2*calls+2*i:2*calls+2*i+2]).Scan(&held)
			if err != nil || held != 2 {
				t.Fatalf("negative control's hold %d: %d held, %v", i+1, held, err)
			}
		}
	}

	planned := func(ids string) (n int, called, plans int64) {
		t.Helper()
		rows, _ := conn.Query(ctx, `
			SELECT s.calls, s.plans FROM pg_stat_statements s
			WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			  AND NOT s.toplevel AND strpos(s.query, $1) > 0`, ids)
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]int64, error) {
			var v [2]int64
			return v, r.Scan(&v[0], &v[1])
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range got {
			called, plans = called+v[0], plans+v[1]
		}
		return len(got), called, plans
	}
	checks := []struct {
		ids       string
		straight  bool
		statement string
	}{
		{lockIDs, false, "the seats' lock"}, {claimIDs, false, "the claim"},
		{"s.id = ANY(p_seat_ids)", true, "the seats' lock read straight"}, {"s.id = ANY(v_free)", true, "the claim read straight"},
	}
	// pg_stat_statements keeps a bounded number of statements for the whole server,
	// and make test's many databases make it drop the least used now and then: a
	// statement of this test dropped between its calls and the read would have its
	// counts begun again. Such a round (the server's count of drops moved, and a
	// count is short) is run again from nothing, at most three times in all.
	type counts struct {
		n             int
		called, plans int64
	}
	var got []counts
	for attempt := 0; ; attempt++ {
		if _, err := conn.Exec(ctx, `SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)`); err != nil {
			t.Fatal(err)
		}
		before := deallocs()
		run(attempt)
		got = got[:0]
		short := false
		for _, c := range checks {
			n, called, plans := planned(c.ids)
			got = append(got, counts{n, called, plans})
			short = short || called != calls
		}
		if !short || deallocs() == before || attempt == 2 {
			break
		}
	}
	for i, c := range checks {
		n, called, plans := got[i].n, got[i].called, got[i].plans
		switch {
		case n != 1 || called != calls:
			t.Errorf("%s: %d statements in pg_stat_statements, %d calls; want one, called %d times", c.statement, n, called, calls)
		case !c.straight && plans > 6:
			t.Errorf("%s: planned %d times in %d calls, want the generic plan kept from the sixth call", c.statement, plans, called)
		case c.straight && plans < called:
			t.Errorf("negative control, %s: planned %d times in %d calls, want every call planned (the check cannot fail)", c.statement, plans, called)
		}
	}
}
