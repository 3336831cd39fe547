package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/staff"
)

// TestStaffAdd: `boxoffice staff add` creates an account whose password (read from
// standard input) logs in, records it in the audit log, and refuses a short password
// and a second account with the same email without writing anything.
func TestStaffAdd(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return ""
	}
	var out bytes.Buffer
	args := []string{"staff", "add", "-email", "Ann@Example.com", "-name", "Ann Lee", "-role", "box_office"}
	if err := run(t.Context(), args, env, strings.NewReader("a long enough password\n"), &out); err != nil {
		t.Fatalf("staff add: %v", err)
	}
	if !strings.Contains(out.String(), "ann@example.com") {
		t.Errorf("output %q does not name the account", out.String())
	}
	if err := run(t.Context(), args, env, strings.NewReader("another long password\n"), &out); err == nil {
		t.Error("a second account with the same email was accepted")
	}
	short := []string{"staff", "add", "-email", "bob@example.com", "-name", "Bob", "-role", "door"}
	if err := run(t.Context(), short, env, strings.NewReader("short\n"), &out); err == nil {
		t.Error("a 5-character password was accepted")
	}

	p := mustPool(t, url)
	svc := staff.New(p)
	m, err := svc.Login(t.Context(), staff.Attempt{Email: "ann@example.com", Password: "a long enough password", Address: "127.0.0.1"})
	if err != nil || m.Role != staff.BoxOffice || m.Name != "Ann Lee" {
		t.Errorf("login as the new account: %+v, %v", m, err)
	}
	var accounts, audited int
	if err := p.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM staff), (SELECT count(*) FROM audit_log WHERE action = 'staff.add')`).Scan(&accounts, &audited); err != nil {
		t.Fatal(err)
	}
	if accounts != 1 || audited != 1 {
		t.Errorf("%d accounts and %d audit entries, want 1 and 1", accounts, audited)
	}
}

// TestSeedDemoAdmin: the seed creates the demo admin on an empty staff table, prints
// how to log in, and leaves accounts alone on a second run.
func TestSeedDemoAdmin(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	p := mustPool(t, url)
	getenv := func(k string) string { return map[string]string{"ADDR": ":8123"}[k] }
	var out bytes.Buffer
	if err := seedAdmin(t.Context(), p, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "http://localhost:8123/admin") || !strings.Contains(out.String(), demoAdminPassword) {
		t.Errorf("seed says %q: want where and how to log in", out.String())
	}
	if _, err := staff.New(p).Login(t.Context(), staff.Attempt{Email: demoAdminEmail, Password: demoAdminPassword, Address: "127.0.0.1"}); err != nil {
		t.Errorf("demo admin login: %v", err)
	}
	out.Reset()
	if err := seedAdmin(t.Context(), p, getenv, &out); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := p.QueryRow(t.Context(), `SELECT count(*) FROM staff`).Scan(&n); err != nil || n != 1 {
		t.Errorf("after a second seed: %d accounts (%v), want 1", n, err)
	}
}

func mustPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
