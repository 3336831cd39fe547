package staff

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
)

const ownerPassword = "the owner's own long password"

// newTestService is the service on a fresh database under p with cheap hashing, and
// an account of its own. A login waits as long as it takes for a hashing slot unless
// p says how long.
func newTestService(t *testing.T, p Policy) (*Service, *pgxpool.Pool, Member) {
	t.Helper()
	if p.HashWait == DefaultPolicy().HashWait {
		p.HashWait = time.Hour
	}
	pool := dbtest.Pool(t)
	s := NewWith(pool, p)
	s.SetTestParams()
	m, err := s.Add(t.Context(), NewMember{Email: "owner@example.com", Name: "Owner", Role: Door, Password: ownerPassword})
	if err != nil {
		t.Fatal(err)
	}
	return s, pool, m
}

// slowPolicy is DefaultPolicy with delays far longer than a test: once a counter is
// past its free count it stays shut for the test, however slow the machine.
func slowPolicy() Policy {
	p := DefaultPolicy()
	p.FirstDelay, p.MaxDelay = time.Hour, 2*time.Hour
	return p
}

// TestStrangerCannotLockOwnerOut: a stranger's 100 wrong passwords from 100 other
// addresses leave the owner free to log in from the device and from the address they
// logged in with before. The stranger's guesses are throttled all the same: past the
// account's free count for strangers no guess is checked, and the owner's right
// password from a browser and address the account does not know is refused too (the
// control: what the stranger's guesses did, the known device and address undo).
func TestStrangerCannotLockOwnerOut(t *testing.T) {
	t.Parallel()
	p := slowPolicy()
	s, _, m := newTestService(t, p)
	ctx := t.Context()
	const home = "192.0.2.10"
	first, err := s.Login(ctx, Attempt{Email: m.Email, Password: ownerPassword, Address: home})
	if err != nil || first.Device == "" {
		t.Fatalf("the owner's first login: %+v, %v; want a device token", first, err)
	}

	checked := 0
	for i := range 100 {
		_, err := s.Login(ctx, Attempt{Email: m.Email, Password: fmt.Sprintf("guess %d", i), Address: fmt.Sprintf("198.51.100.%d", i+1)})
		var throttled *ThrottledError
		switch {
		case errors.Is(err, ErrBadLogin):
			checked++
		case errors.As(err, &throttled) && throttled.Wait > 0:
		default:
			t.Fatalf("guess %d: %v, want ErrBadLogin or a ThrottledError", i, err)
		}
	}
	if checked != p.AccountFree {
		t.Errorf("guesses checked: got %d, want %d (the account's free count for strangers)", checked, p.AccountFree)
	}

	travelling := Attempt{Email: m.Email, Password: ownerPassword, Address: "203.0.113.7", Devices: []string{"junk", first.Device}}
	if got, err := s.Login(ctx, travelling); err != nil || got.ID != m.ID || got.Device != "" {
		t.Errorf("the owner on their device at a new address: %+v, %v; want in, no new token", got, err)
	}
	if got, err := s.Login(ctx, Attempt{Email: m.Email, Password: ownerPassword, Address: home}); err != nil || got.ID != m.ID {
		t.Errorf("the owner at their address in a new browser: %+v, %v; want in", got, err)
	}
	// The control.
	if _, err := s.Login(ctx, Attempt{Email: m.Email, Password: ownerPassword, Address: "203.0.113.99"}); !errors.Is(err, ErrThrottled) {
		t.Errorf("the right password from an unknown browser and address: %v, want ErrThrottled", err)
	}
}

// TestParallelGuessesCounted: 50 wrong passwords at once, from one address on one
// account, are counted 50 times on each of its counters, because each attempt counts
// in the statement that lets it through. The control runs the same 50 through the
// old path, which read the count, checked the password and then wrote the count it
// had read plus one: it counts fewer.
func TestParallelGuessesCounted(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	p.PairFree, p.AddressFree, p.AccountFree = 1000, 1000, 1000 // none refused
	s, pool, m := newTestService(t, p)
	const addr = "192.0.2.50"
	keys := []string{"pair:" + m.Email + " address:" + addr, "address:" + addr, "account:" + m.Email}
	answers := inParallel(50, func(i int) error {
		_, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: fmt.Sprintf("guess %d", i), Address: addr})
		return err
	})
	if n := answers[ErrBadLogin]; n != 50 {
		t.Errorf("answers %v: want 50 ErrBadLogin", answers)
	}
	for _, k := range keys {
		if n := failuresOf(t, pool, k); n != 50 {
			t.Errorf("counter %q: got %d, want 50", k, n)
		}
	}

	// The control: read, check, write back what was read plus one.
	const control = "control:" + addr
	if _, err := pool.Exec(t.Context(), `INSERT INTO staff_login_throttle (key) VALUES ($1)`, control); err != nil {
		t.Fatal(err)
	}
	inParallel(50, func(i int) error {
		n := failuresOf(t, pool, control)
		if _, _, err := s.check(t.Context(), m.Email, fmt.Sprintf("guess %d", i)); !errors.Is(err, ErrBadLogin) {
			return err
		}
		_, err := pool.Exec(t.Context(), `UPDATE staff_login_throttle SET failures = $2 WHERE key = $1`, control, n+1)
		return err
	})
	n := failuresOf(t, pool, control)
	t.Logf("the read-then-write control counted %d of 50", n)
	if n >= 50 {
		t.Errorf("the read-then-write control counted %d of 50: the test cannot tell lost counts", n)
	}
}

// TestParallelGuessesThrottled: of 50 wrong passwords at once, exactly the free count
// are checked and the rest refused unchecked. The control, the old read-then-write
// path, lets more than the free count through to the hash.
func TestParallelGuessesThrottled(t *testing.T) {
	t.Parallel()
	p := slowPolicy()
	s, pool, m := newTestService(t, p)
	const addr = "192.0.2.51"
	answers := inParallel(50, func(i int) error {
		_, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: fmt.Sprintf("guess %d", i), Address: addr})
		return err
	})
	if answers[ErrBadLogin] != p.PairFree || answers[ErrThrottled] != 50-p.PairFree {
		t.Errorf("answers %v: want %d checked (ErrBadLogin) and the rest ErrThrottled", answers, p.PairFree)
	}
	if n := failuresOf(t, pool, "pair:"+m.Email+" address:"+addr); n != p.PairFree {
		t.Errorf("pair counter: got %d, want %d", n, p.PairFree)
	}

	const control = "control:" + addr
	if _, err := pool.Exec(t.Context(), `INSERT INTO staff_login_throttle (key) VALUES ($1)`, control); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	passed := 0
	inParallel(50, func(i int) error {
		n := failuresOf(t, pool, control)
		if n >= p.PairFree {
			return ErrThrottled
		}
		mu.Lock()
		passed++
		mu.Unlock()
		if _, _, err := s.check(t.Context(), m.Email, fmt.Sprintf("guess %d", i)); !errors.Is(err, ErrBadLogin) {
			return err
		}
		_, err := pool.Exec(t.Context(), `UPDATE staff_login_throttle SET failures = failures + 1 WHERE key = $1`, control)
		return err
	})
	t.Logf("the read-then-write control let %d of 50 through to the hash", passed)
	if passed <= p.PairFree {
		t.Errorf("the read-then-write control let %d guesses through, want more than %d: the test cannot tell a leaky throttle", passed, p.PairFree)
	}
}

// inParallel runs f(0..n-1) at once, from one barrier, and counts the answers: the
// service's errors (ErrBadLogin, ErrThrottled, ErrBusy) by that error, nil and any
// other error by itself.
func inParallel(n int, f func(i int) error) map[error]int {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		start = make(chan struct{})
		out   = map[error]int{}
	)
	for i := range n {
		wg.Go(func() {
			<-start
			err := f(i)
			for _, known := range []error{ErrBadLogin, ErrThrottled, ErrBusy} {
				if errors.Is(err, known) {
					err = known
				}
			}
			mu.Lock()
			out[err]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return out
}

func failuresOf(t *testing.T, pool *pgxpool.Pool, key string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.WithoutCancel(t.Context()), `SELECT failures FROM staff_login_throttle WHERE key = $1`, key).Scan(&n); err != nil {
		t.Errorf("counter %q: %v", key, err)
	}
	return n
}
