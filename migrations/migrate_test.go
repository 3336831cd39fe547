package migrations_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/migrations"
)

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
