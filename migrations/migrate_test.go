package migrations_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"boxoffice/migrations"
)

// TestUpTakesAMissedMigration: a database that has every migration but an earlier one
// (order_links' here, as one that took a release built beside it would) gets that one
// too, and Up succeeds; the later ones are not run again.
func TestUpTakesAMissedMigration(t *testing.T) {
	t.Parallel()
	dbURL := emptyDatabase(t)
	if _, err := migrations.Up(t.Context(), dbURL); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `DROP TABLE order_links; DELETE FROM goose_db_version WHERE version_id = 21`); err != nil {
		t.Fatal(err)
	}
	n, err := migrations.Up(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("Up with migration 21 missing: %v", err)
	}
	if n != 1 {
		t.Errorf("Up applied %d migrations, want 1 (the missed one)", n)
	}
	var exists bool
	if err := conn.QueryRow(t.Context(), `SELECT to_regclass('order_links') IS NOT NULL`).Scan(&exists); err != nil || !exists {
		t.Errorf("order_links after Up: exists %v (%v), want true", exists, err)
	}
}

// TestUpAtOnce: two instances migrating an empty database at the same moment apply
// every migration, ours and River's, exactly once between them, and both succeed.
func TestUpAtOnce(t *testing.T) {
	t.Parallel()
	dbURL := emptyDatabase(t)
	ours, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	start := make(chan struct{})
	applied := make([]int, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			<-start
			applied[i], errs[i] = migrations.Up(t.Context(), dbURL)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var river int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM river_migration").Scan(&river); err != nil {
		t.Fatal(err)
	}
	if want := len(ours) + river; applied[0]+applied[1] != want || (applied[0] != 0 && applied[1] != 0) {
		t.Errorf("got %v applied, want %d (%d ours, %d River's) by one instance and none by the other", applied, want, len(ours), river)
	}
	var newest int
	if err := conn.QueryRow(t.Context(), "SELECT max(version) FROM river_migration").Scan(&newest); err != nil || newest != migrations.RiverVersion() {
		t.Errorf("got River at version %d (%v), want %d", newest, err, migrations.RiverVersion())
	}
}

// emptyDatabase creates a database with nothing in it, dropped when the test ends.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("DATABASE_URL")
	if admin == "" {
		t.Fatal("DATABASE_URL not set: run tests through `make test`")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := fmt.Sprintf("boxoffice_migtest_%x", b)
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// saleTables are the tables whose statistics targets TestSaleTablesStatistics checks
// (seats, the control, left at the default); those a Down drops are left out.
var saleTables = []string{"orders", "tickets", "payments", "payment_events", "holds", "sent_mail", "sessions", "idempotency_keys", "order_lines", "order_links", "hold_ga_places", "hold_seat_types", "hold_ga_types", "hold_vouchers", "voucher_redemptions", "access_code_uses", "seats"}

// TestSaleTablesStatistics: migrations 00014 and 00033 give every column of the
// sale's growing tables a statistics target of 10 and leave other tables at the
// default; their Downs put the default back and drop the helper.
func TestSaleTablesStatistics(t *testing.T) {
	t.Parallel()
	dbURL, conn := migrated(t)
	targets := func() (sale, seats map[int]int) {
		t.Helper()
		sale, seats = map[int]int{}, map[int]int{}
		rows, err := conn.Query(t.Context(), `
			SELECT a.attrelid = 'seats'::regclass, a.attstattarget, count(*)
			FROM pg_attribute a
			WHERE a.attrelid IN (SELECT to_regclass(t) FROM unnest($1::text[]) AS t)
			  AND a.attnum > 0 AND NOT a.attisdropped
			GROUP BY 1, 2`, saleTables)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var isSeats bool
			var target, n int
			if err := rows.Scan(&isSeats, &target, &n); err != nil {
				t.Fatal(err)
			}
			if isSeats {
				seats[target] += n
			} else {
				sale[target] += n
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return sale, seats
	}
	sale, seats := targets()
	if len(sale) != 1 || sale[10] < 100 {
		t.Errorf("after Up the sale tables' columns by statistics target: %v, want all (100 or more) at 10", sale)
	}
	if len(seats) != 1 || seats[-1] == 0 {
		t.Errorf("after Up the seats' columns by statistics target: %v, want all at the default (-1)", seats)
	}

	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(t.Context(), 13); err != nil {
		t.Fatal(err)
	}
	if sale, _ := targets(); len(sale) != 1 || sale[-1] == 0 {
		t.Errorf("after Down the sale tables' columns by statistics target: %v, want all at the default (-1)", sale)
	}
	var helper bool
	if err := conn.QueryRow(t.Context(), "SELECT to_regproc('set_statistics') IS NOT NULL").Scan(&helper); err != nil || helper {
		t.Errorf("after Down set_statistics exists: %v (%v)", helper, err)
	}
}
