package staff

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"boxoffice/internal/dbtest"
)

// TestHashConcurrencyBounded: 20 logins at once, each held inside its hash until all
// have arrived, never have more than Hashes hashes running; the others queue and all
// get in once the hashes finish. The control, with a bound of 20, sees all 20 hash at
// once: the peak counter catches a missing bound.
func TestHashConcurrencyBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bound, wantPeak int
	}{{2, 2}, {20, 20}} {
		t.Run(fmt.Sprintf("bound %d", tc.bound), func(t *testing.T) {
			t.Parallel()
			p := DefaultPolicy()
			p.Hashes, p.PairFree, p.AddressFree, p.AccountFree = tc.bound, 100, 100, 100
			s, _, m := newTestService(t, p)
			release := make(chan struct{})
			free := sync.OnceFunc(func() { close(release) })
			t.Cleanup(free) // a failed wait below still lets the logins end
			s.hashing.gate = func() { <-release }
			done := make(chan map[error]int)
			go func() {
				done <- inParallel(20, func(i int) error {
					_, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: ownerPassword, Address: fmt.Sprintf("192.0.2.%d", i+1)})
					return err
				})
			}()
			dbtest.Eventually(t, "all 20 logins hashing or queued", time.Minute, func() bool {
				return s.hashing.inFlight.Load() == int64(tc.wantPeak) && s.hashing.waiting.Load() == int64(20-tc.wantPeak)
			})
			free()
			if answers := <-done; answers[nil] != 20 {
				t.Errorf("answers %v: want 20 logged in", answers)
			}
			if peak := s.hashing.peak.Load(); peak != int64(tc.wantPeak) {
				t.Errorf("peak hashes at once: got %d, want %d", peak, tc.wantPeak)
			}
		})
	}
}

// TestLoginBusy: a login that finds every hashing slot taken for HashWait is told
// ErrBusy, and its attempt is given back uncounted; once the slot is free the same
// login gets in.
func TestLoginBusy(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	p.Hashes, p.HashWait = 1, 50*time.Millisecond
	s, pool, m := newTestService(t, p)
	entered, release := make(chan struct{}), make(chan struct{})
	s.hashing.gate = func() {
		entered <- struct{}{}
		<-release
	}
	first := make(chan error)
	go func() {
		_, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: "a wrong password", Address: "192.0.2.1"})
		first <- err
	}()
	<-entered
	_, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: ownerPassword, Address: "192.0.2.2"})
	if !errors.Is(err, ErrBusy) {
		t.Errorf("a login while the slot is held: %v, want ErrBusy", err)
	}
	checkCounters(t, pool, map[string]int{"pair:" + m.Email + " address:192.0.2.2": 0, "address:192.0.2.2": 0})
	s.hashing.gate = nil
	close(release)
	if err := <-first; !errors.Is(err, ErrBadLogin) {
		t.Errorf("the login holding the slot: %v, want ErrBadLogin", err)
	}
	if _, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: ownerPassword, Address: "192.0.2.2"}); err != nil {
		t.Errorf("the login again once free: %v", err)
	}
}

// TestOldHashes: a hash stored under other parameters (as New made them before: many
// lanes) still verifies, and the login stores it again under today's.
func TestOldHashes(t *testing.T) {
	t.Parallel()
	s, pool, m := newTestService(t, DefaultPolicy())
	old, err := argon2id.CreateHash(ownerPassword, &argon2id.Params{Memory: 1024, Iterations: 1, Parallelism: 4, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE staff SET password_hash = $2 WHERE id = $1`, m.ID, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: ownerPassword, Address: "192.0.2.1"}); err != nil {
		t.Fatalf("login under the old hash: %v", err)
	}
	var stored string
	if err := pool.QueryRow(t.Context(), `SELECT password_hash FROM staff WHERE id = $1`, m.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, "m=1024,t=1,p=1$") {
		t.Errorf("stored hash after login %q: want today's parameters (p=1)", stored)
	}
	if _, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: ownerPassword, Address: "192.0.2.1"}); err != nil {
		t.Errorf("login under the new hash: %v", err)
	}
}

// TestRotatingWithinA64: guesses from addresses rotated within one IPv6 /64 are one
// address to the throttle: past its free count the next is refused, from a new
// address in the same /64 too, and writes no counter of its own.
func TestRotatingWithinA64(t *testing.T) {
	t.Parallel()
	p := slowPolicy()
	s, pool, _ := newTestService(t, p)
	for i := range p.AddressFree {
		email := fmt.Sprintf("guess%d@example.com", i) // a new account each: only the address counts up
		if _, err := s.Login(t.Context(), Attempt{Email: email, Password: "a guess", Address: fmt.Sprintf("2001:db8:7:7::%x", i+1)}); !errors.Is(err, ErrBadLogin) {
			t.Fatalf("guess %d: %v, want ErrBadLogin", i, err)
		}
	}
	if _, err := s.Login(t.Context(), Attempt{Email: "next@example.com", Password: "a guess", Address: "2001:db8:7:7:abcd::1"}); !errors.Is(err, ErrThrottled) {
		t.Errorf("a new address in the same /64: %v, want ErrThrottled", err)
	}
	var written int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM staff_login_throttle WHERE key LIKE '%next@example.com%'`).Scan(&written); err != nil || written != 0 {
		t.Errorf("counters written by the refused attempt: %d (%v), want 0", written, err)
	}
	if _, err := s.Login(t.Context(), Attempt{Email: "next@example.com", Password: "a guess", Address: "2001:db8:7:8::1"}); !errors.Is(err, ErrBadLogin) {
		t.Errorf("an address in the next /64: %v, want ErrBadLogin (not throttled)", err)
	}
}

// TestNewPasswordForgetsClients: a password change forgets the devices and addresses
// the account logged in from.
func TestNewPasswordForgetsClients(t *testing.T) {
	t.Parallel()
	s, pool, m := newTestService(t, DefaultPolicy())
	if _, err := s.Login(t.Context(), Attempt{Email: m.Email, Password: ownerPassword, Address: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM staff_known_clients WHERE staff_id = $1`, m.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 2 {
		t.Fatalf("known clients after a login: %d, want 2 (the device and the address)", n)
	}
	if _, err := s.SetPassword(t.Context(), m.ID, "another long password"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("known clients after a new password: %d, want 0", n)
	}
}
