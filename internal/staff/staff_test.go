package staff

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

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
// counts as a failure like any other; a success gives its own count back and clears
// the account's count from this client.
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
	if _, err := s.Login(ctx, Attempt{Email: m.Email, Password: strings.Repeat("y", MaxPassword+1), Address: "192.0.2.1"}); !errors.Is(err, ErrBadLogin) {
		t.Errorf("an over-long password: %v, want ErrBadLogin", err)
	}
	if _, err := s.Login(ctx, Attempt{Email: m.Email, Password: "not the password", Address: "192.0.2.1"}); !errors.Is(err, ErrBadLogin) {
		t.Errorf("a wrong password: %v, want ErrBadLogin", err)
	}
	want := map[string]int{"pair:ann@example.com address:192.0.2.1": 2, "address:192.0.2.1": 2, "account:ann@example.com": 2}
	checkCounters(t, pool, want)
	if got, err := s.Login(ctx, Attempt{Email: "ANN@example.com", Password: good.Password, Address: "192.0.2.1"}); err != nil || got.ID != m.ID || got.Device == "" {
		t.Errorf("login in capitals: %+v, %v; want the member and a device token", got, err)
	}
	want["pair:ann@example.com address:192.0.2.1"] = 0
	checkCounters(t, pool, want)
}

// checkCounters compares the throttle's counters with want.
func checkCounters(t *testing.T, pool *pgxpool.Pool, want map[string]int) {
	t.Helper()
	for key, n := range want {
		var got int
		if err := pool.QueryRow(t.Context(), `SELECT failures FROM staff_login_throttle WHERE key = $1`, key).Scan(&got); err != nil || got != n {
			t.Errorf("counter %q: got %d (%v), want %d", key, got, err, n)
		}
	}
}

// TestPruneFailures: counters quiet for longer than the window go, and so do devices
// and addresses unused for longer than they stay known; the others stay.
func TestPruneFailures(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	s := New(pool)
	s.SetTestParams()
	ctx := t.Context()
	m, err := s.Add(ctx, NewMember{Email: "pat@example.com", Name: "Pat", Role: Door, Password: "a long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO staff_login_throttle (key, failures, last_at) VALUES
		('account:old@example.com', 3, now() - interval '61 minutes'),
		('address:192.0.2.9', 30, now() - interval '1 day'),
		('account:new@example.com', 2, now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO staff_known_clients (staff_id, kind, key, last_at) VALUES
		($1, 'address', '192.0.2.1', now() - interval '181 days'), ($1, 'address', '192.0.2.2', now())`, m.ID); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneFailures(ctx)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d (%v), want the 2 counters past the window and the address past being known", n, err)
	}
	var left string
	if err := pool.QueryRow(ctx, `SELECT (SELECT string_agg(key, ',') FROM staff_login_throttle) || ' ' ||
		(SELECT string_agg(key, ',') FROM staff_known_clients)`).Scan(&left); err != nil || left != "account:new@example.com 192.0.2.2" {
		t.Errorf("left %q (%v), want the recent ones", left, err)
	}
}
