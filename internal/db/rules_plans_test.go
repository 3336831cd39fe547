package db_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// The rules every statement asks (seat_is_free, seat_is_held, seat_hold_lapsed,
// hold_is_live, hold_lapsed, event_on_sale: migrations/functions) are SQL functions
// that PostgreSQL inlines, so the statements are planned as if the expressions were
// written out and the partial indexes on seats and holds still match. The test reads
// the generic plan (the one a prepared statement keeps) of the hot statements on an
// event with holds, some lapsed, and wants each on the indexes named, never reading a
// whole table of seats or holds; then the statements inside hold_seats and its
// callers, as auto_explain logs them. As a negative control it plans best
// available's search with seat_hold_lapsed replaced by a copy PostgreSQL cannot inline
// (STRICT, with a body that is not), which must lose the lapsed holds' index, or the
// check could not fail.
func TestRulesKeepTheIndexScans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, eventID := saleUnderWay(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"SeatHold", []string{"Index Scan using seats_pkey on seats\n", "Index Scan using seats_pkey on seats s\n"}},
		{"SeatClaimUnlocked", []string{"Index Scan using seats_pkey on seats\n", "Index Scan using seats_pkey on seats s\n"}},
		{"SeatSell", []string{"Index Scan using seats_pkey on seats\n", "Index Scan using seats_pkey on seats s\n"}},
		{"SeatBestRows", []string{"Index Scan using seats_free_by_depth on seats f", "Index Scan using seats_held_expiry on seats l"}},
		{"SeatBestRowsInSection", []string{"Index Scan using seats_free_by_section on seats f", "Index Scan using seats_held_expiry on seats l"}},
		{"SeatTidyLapsed", []string{"Index Scan using seats_held_expiry on seats\n"}},
		{"SeatsOfHold", []string{"Index Scan using seats_held_by on seats"}},
		{"HoldBasketSeats", []string{"Index Scan using seats_held_by on seats s"}},
		{"HoldBasket", []string{"Index Scan using holds_pkey on holds h"}},
		{"SeatsOfHolds", []string{"Index Scan using seats_held_"}}, // by hold or by expiry, as the statistics say
		{"HoldSeatsHeld", []string{"Index Scan using seats_held_by on seats s", "Index Scan using holds_buyer on holds h"}},
		{"HoldsGALapsed", []string{"Index Scan using holds_ga_lapsing on holds"}},
		{"HoldsOfBuyer", []string{"Index Scan using holds_buyer on holds h"}},
		{"StaffHoldsOfEvent", []string{"Index Scan using holds_staff on holds h", "Index Scan using seats_held_by on seats s"}},
		{"ControlCounts", []string{"Index Only Scan using seats_held_expiry on seats"}},
		// The buyer's count is read once, from FROM: as a sub-select's column it would be
		// pulled up into each expression that uses it and run as often. The network's
		// count runs only when its limit is on (a one-time filter).
		{"HoldCreate", []string{"Function Scan on buyer_places b", "One-Time Filter: (($8 <> ''::text) AND ($9 > 0))", "Function Scan on client_places"}},
		{"BuyerWithinLimit", []string{"Function Scan on buyer_places b"}},
	} {
		plan := genericPlan(t, conn.Conn(), tc.name, db.StatementText[tc.name])
		for _, w := range tc.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s: the plan has no %q:\n%s", tc.name, strings.TrimSpace(w), plan)
			}
		}
		if tc.name != "ControlCounts" && regexp.MustCompile(`Seq Scan on (seats|holds)\b`).MatchString(plan) {
			t.Errorf("%s: the plan reads a whole table:\n%s", tc.name, plan)
		}
	}

	// The negative control.
	if _, err := conn.Exec(ctx, `CREATE FUNCTION seat_hold_lapsed_opaque(s seats) RETURNS boolean
		LANGUAGE sql STABLE STRICT AS $$ SELECT s.held_by IS NOT NULL AND s.hold_expires_at <= now() $$`); err != nil {
		t.Fatal(err)
	}
	opaque := strings.Replace(db.StatementText["SeatBestRows"], "seat_hold_lapsed(l)", "seat_hold_lapsed_opaque(l)", 1)
	if opaque == db.StatementText["SeatBestRows"] {
		t.Fatal("SeatBestRows no longer asks seat_hold_lapsed(l)")
	}
	if plan := genericPlan(t, conn.Conn(), "SeatBestRowsOpaque", opaque); strings.Contains(plan, "seats_held_expiry") {
		t.Errorf("negative control: SeatBestRows with a function that cannot be inlined still uses seats_held_expiry (the check cannot fail):\n%s", plan)
	}

	checkHoldSeatsPlans(t, pool, eventID)
}

// checkHoldSeatsPlans makes a hold of one seat and one of two through
// hold_seats_client, and wants the plans auto_explain logs of the statements inside
// on their indexes.
func checkHoldSeatsPlans(t *testing.T, pool *pgxpool.Pool, eventID int64) {
	ctx := t.Context()
	cfg := pool.Config().ConnConfig.Copy()
	var logged []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { logged = append(logged, n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, stmt := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
		`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_level = 'notice'`,
		`SET plan_cache_mode = force_generic_plan`} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v (the test loads auto_explain, which needs a superuser, as .ci/services.sh makes the test database's owner)", stmt, err)
		}
	}
	rows, _ := conn.Query(ctx, `SELECT id FROM seats WHERE event_id = $1 AND held_by IS NULL AND sold_at IS NULL ORDER BY id DESC LIMIT 3`, eventID)
	free, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(free) != 3 {
		t.Fatalf("free seats: %v, %v", free, err)
	}
	for i, ids := range [][]int64{free[:1], free[1:]} {
		var held int
		// The second as the API's hold call, which finds the buyer's basket in the same
		// scan as the buyer's count (buyer_basket).
		err := conn.QueryRow(ctx, `SELECT count(*) FROM hold_seats_client($1, $2, $3, 600, 10, 'net', 20, true, 0, $4) WHERE status = 'held'`,
			eventID, fmt.Sprintf("plans-%d", i), ids, i == 1).Scan(&held)
		if err != nil || held != len(ids) {
			t.Fatalf("hold %v: %d held, %v", ids, held, err)
		}
	}
	for _, want := range []struct{ statement, plan string }{
		{"UPDATE seats s SET held_by = v_hold", "Index Scan using seats_pkey on seats s"},
		{"FROM (SELECT s.id FROM seats s", "Index Scan using seats_pkey on seats s"},
		{"h.buyer = p_buyer", "Index Scan using holds_buyer on holds h"},
		{"max(h.id) FILTER", "Index Scan using holds_buyer on holds h"}, // buyer_basket
		{"h.client_key = p_client", "Index Only Scan using holds_client_live on holds h"},
	} {
		found := false
		for _, l := range logged {
			if strings.Contains(l, want.statement) {
				found = true
				if !strings.Contains(l, want.plan) {
					t.Errorf("inside hold_seats: %q has no %q:\n%s", want.statement, want.plan, l)
				}
			}
		}
		if !found {
			t.Errorf("inside hold_seats: no statement %q logged", want.statement)
		}
	}
}

// genericPlan prepares text on conn and explains its generic plan (the session plans
// generic plans only).
func genericPlan(t *testing.T, conn *pgx.Conn, name, text string) string {
	t.Helper()
	sd, err := conn.Prepare(t.Context(), "plan_"+name, text)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	args := strings.TrimSuffix(strings.Repeat("NULL,", len(sd.ParamOIDs)), ",")
	q := `EXPLAIN (COSTS OFF) EXECUTE "plan_` + name + `"`
	if args != "" {
		q += "(" + args + ")"
	}
	rows, _ := conn.Query(t.Context(), q)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return strings.Join(lines, "\n") + "\n"
}

// saleUnderWay is a fresh database with an event of 20,000 seats in the middle of its
// sale: 300 holds of four best seats, a third of them checked out, a fifth lapsed,
// and the statistics read (ANALYZE), as the planner sees a busy sale.
func saleUnderWay(t *testing.T) (*pgxpool.Pool, int64) {
	t.Helper()
	ctx := t.Context()
	pool := dbtest.Pool(t)
	eventID, err := demo.Create(ctx, pool, demo.BigSpec("plans", 20_000, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	svc := booking.New(pool, booking.Config{MaxPerBuyer: 10}, nil, nil, slog.New(slog.DiscardHandler))
	for i := range 300 {
		buyer := fmt.Sprintf("buyer-%d", i)
		h, err := svc.Buyer.Hold(ctx, booking.HoldRequest{EventID: eventID, Buyer: buyer, Quantity: 4})
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := svc.Buyer.Checkout(ctx, h.ID, buyer, buyer+"@example.com"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, stmt := range []string{
		`UPDATE seats SET hold_expires_at = now() - interval '1 minute' WHERE event_id = $1 AND held_by % 5 = 0`,
		`UPDATE holds SET expires_at = now() - interval '1 minute' WHERE event_id = $1 AND id % 5 = 0`,
	} {
		if _, err := pool.Exec(ctx, stmt, eventID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	return pool, eventID
}
