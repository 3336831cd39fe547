package staff

import (
	"errors"
	"strings"
	"testing"

	"boxoffice/internal/dbtest"
)

// TestRoleMay: an admin may use every page; the others only pages that list them.
func TestRoleMay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role    Role
		allowed []Role
		want    bool
	}{
		{Admin, nil, true},
		{Admin, []Role{Door}, true},
		{BoxOffice, []Role{BoxOffice}, true},
		{BoxOffice, []Role{Door}, false},
		{BoxOffice, nil, false},
		{Door, []Role{Door, BoxOffice}, true},
		{Door, []Role{BoxOffice}, false},
		{Role("owner"), []Role{BoxOffice, Door}, false},
	} {
		if got := tc.role.May(tc.allowed...); got != tc.want {
			t.Errorf("%s.May(%v) = %v, want %v", tc.role, tc.allowed, got, tc.want)
		}
	}
}

// TestAddAndLogin: a bad account is refused naming the field, with nothing written;
// emails are compared without case; a password over the cap is a wrong password, and
// counts as a failure like any other.
func TestAddAndLogin(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	s := New(pool)
	s.SetTestParams()
	ctx := t.Context()
	good := NewMember{Email: "Ann@Example.com", Name: "Ann", Role: BoxOffice, Password: "a long enough password"}
	for field, m := range map[string]NewMember{
		"email":    {Email: "ann", Name: "Ann", Role: BoxOffice, Password: good.Password},
		"name":     {Email: "ann@example.com", Name: " ", Role: BoxOffice, Password: good.Password},
		"role":     {Email: "ann@example.com", Name: "Ann", Role: "owner", Password: good.Password},
		"password": {Email: "ann@example.com", Name: "Ann", Role: BoxOffice, Password: strings.Repeat("x", MaxPassword+1)},
	} {
		var invalid *InvalidError
		if _, err := s.Add(ctx, m); !errors.As(err, &invalid) || invalid.Field != field {
			t.Errorf("bad %s: got %v, want an InvalidError naming it", field, err)
		}
	}
	if n, err := s.Count(ctx); err != nil || n != 0 {
		t.Fatalf("refused accounts wrote %d rows (%v)", n, err)
	}
	m, err := s.Add(ctx, good)
	if err != nil || m.Email != "ann@example.com" {
		t.Fatalf("add: %+v, %v", m, err)
	}
	if _, err := s.Add(ctx, good); !errors.Is(err, ErrExists) {
		t.Errorf("the same email again: %v, want ErrExists", err)
	}
	if got, err := s.Login(ctx, "ANN@example.com", good.Password, "192.0.2.1"); err != nil || got.ID != m.ID {
		t.Errorf("login in capitals: %+v, %v", got, err)
	}
	if _, err := s.Login(ctx, m.Email, strings.Repeat("y", MaxPassword+1), "192.0.2.1"); !errors.Is(err, ErrBadLogin) {
		t.Errorf("an over-long password: %v, want ErrBadLogin", err)
	}
	var failures int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM staff_login_failures WHERE kind = 'account' AND key = $1`, m.Email).Scan(&failures); err != nil || failures != 1 {
		t.Errorf("failures counted for the account: %d (%v), want 1", failures, err)
	}
}

// TestPruneFailures: failures past the window go, those within it stay (the
// throttle counts them).
func TestPruneFailures(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	s := New(pool)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO staff_login_failures (kind, key, at) VALUES
		('account', 'old@example.com', now() - interval '16 minutes'),
		('address', '192.0.2.9', now() - interval '1 day'),
		('account', 'new@example.com', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneFailures(ctx)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want the 2 past the window", n, err)
	}
	var left string
	if err := pool.QueryRow(ctx, `SELECT string_agg(key, ',') FROM staff_login_failures`).Scan(&left); err != nil || left != "new@example.com" {
		t.Errorf("left %q (%v), want the recent one", left, err)
	}
}
