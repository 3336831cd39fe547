package migrations_test

import (
	"context"
	"database/sql"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"

	"boxoffice/migrations"
)

var (
	// createFunction finds a function's name and body (between $$) in SQL text.
	createFunction = regexp.MustCompile(`(?s)CREATE (?:OR REPLACE )?FUNCTION (\w+)\(.*?\$\$(.*?)\$\$`)
	gooseDown      = "-- +goose Down"
)

// migrated is a database migrated from nothing by Up, and a connection to it closed
// when the test ends.
func migrated(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	dbURL := emptyDatabase(t)
	if _, err := migrations.Up(t.Context(), dbURL); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return dbURL, conn
}

// functionBodies reads the functions a SQL text creates: their bodies by name, the
// last one for a name created twice, and how many times each name is created.
func functionBodies(text string) (bodies map[string]string, created map[string]int) {
	bodies, created = map[string]string{}, map[string]int{}
	for _, m := range createFunction.FindAllStringSubmatch(text, -1) {
		bodies[m[1]] = m[2]
		created[m[1]]++
	}
	return bodies, created
}

// folderBodies is the functions the function files create, with their bodies.
func folderBodies(t *testing.T) map[string]string {
	t.Helper()
	files, err := migrations.FunctionFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("function files: %v, %v", files, err)
	}
	all := map[string]string{}
	for _, f := range files {
		b, err := fs.ReadFile(migrations.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		bodies, created := functionBodies(string(b))
		for name, n := range created {
			if _, dup := all[name]; dup || n > 1 {
				t.Errorf("%s: %s is created more than once in the functions folder", f, name)
			}
		}
		maps.Copy(all, bodies)
	}
	return all
}

// liveBodies reads the body of every function of the public schema by name; a name
// with several functions (overloads) appears once per function in counts.
func liveBodies(t *testing.T, conn *pgx.Conn) (bodies map[string]string, counts map[string]int) {
	t.Helper()
	rows, err := conn.Query(t.Context(), `
		SELECT p.proname, p.prosrc FROM pg_proc p
		WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f'`)
	if err != nil {
		t.Fatal(err)
	}
	bodies, counts = map[string]string{}, map[string]int{}
	for rows.Next() {
		var name, src string
		if err := rows.Scan(&name, &src); err != nil {
			t.Fatal(err)
		}
		bodies[name] = src
		counts[name]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return bodies, counts
}

// TestFunctionsHaveOneHome: on a database migrated from nothing, each function of the
// functions folder exists once (no overload left behind by a numbered migration) and
// its body is the file's, whatever bodies the numbered migrations gave it before; and
// every function that the numbered migrations create more than once (a rule changed
// over time) lives in the folder, so a reader finds its current body there.
func TestFunctionsHaveOneHome(t *testing.T) {
	t.Parallel()
	_, conn := migrated(t)
	want := folderBodies(t)
	live, counts := liveBodies(t, conn)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		switch {
		case counts[name] != 1:
			t.Errorf("%s: %d functions of that name, want 1", name, counts[name])
		case live[name] != want[name]:
			t.Errorf("%s: the live body is not the functions folder's:\n%s", name, live[name])
		}
	}

	numbered, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	times := map[string]int{}
	for _, f := range numbered {
		b, err := fs.ReadFile(migrations.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		up, _, _ := strings.Cut(string(b), gooseDown)
		_, created := functionBodies(up)
		for name, n := range created {
			times[name] += n
		}
	}
	if times["hold_seats"] < 2 {
		t.Fatalf("the numbered migrations create hold_seats %d times, want its history (2 or more): the scan of them is broken", times["hold_seats"])
	}
	for name, n := range times {
		if _, ok := want[name]; n > 1 && !ok {
			t.Errorf("%s: created by %d numbered migrations and not in %s/", name, n, migrations.FunctionsDir)
		}
	}
}

// TestFunctionsAppliedAgain: Up applies the function files again whenever it ran a
// numbered migration, so that bodies a Down migration put back are replaced; and when
// nothing changed it leaves the functions alone (the same pg_proc row, so the plans
// that depend on them stay).
func TestFunctionsAppliedAgain(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dbURL, conn := migrated(t)
	want := folderBodies(t)["hold_seats"]
	body := func() (src string, xmin uint32) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT prosrc, xmin::text::bigint FROM pg_proc WHERE proname = 'hold_seats' AND pronamespace = 'public'::regnamespace`).Scan(&src, &xmin); err != nil {
			t.Fatal(err)
		}
		return src, xmin
	}
	_, first := body()
	if _, err := migrations.Up(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	if src, again := body(); again != first || src != want {
		t.Errorf("Up with nothing to do rewrote hold_seats (xmin %d, then %d), or its body is not the file's", first, again)
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
	if _, err := p.DownTo(ctx, 14); err != nil { // 00015's Down puts back an older hold_seats
		t.Fatal(err)
	}
	if src, _ := body(); src == want {
		t.Fatalf("after going down to 14 hold_seats still has the folder's body: the test cannot tell")
	}
	if _, err := migrations.Up(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	if src, _ := body(); src != want {
		t.Errorf("after Down and Up hold_seats is not the folder's:\n%s", src)
	}
}
