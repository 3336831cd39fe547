package staff

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/alexedwards/argon2id"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
)

// hashParams are the argon2id parameters of new password hashes: 64 MiB, three passes,
// one lane (RFC 9106's second recommended setting, with one lane instead of four: the
// same memory and work per guess for an attacker, one core here). With Hashes at one
// an instance's logins hold at most 64 MiB and one core for hashing. A stored hash carries its own parameters and verifies under them; a login
// that verifies one made under others stores it again under these.
var hashParams = argon2id.Params{Memory: 64 * 1024, Iterations: 3, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// ErrBusy answers a login that waited HashWait for a hashing slot in vain: so many
// logins are being checked that another would take cores the sale runs on.
var ErrBusy = errors.New("staff: too many logins being checked at once")

// hashSlots bounds the argon2id computations at once in this process, and counts
// them: inFlight now, peak the most there ever were, waiting those queued for a slot.
type hashSlots struct {
	slots    chan struct{}
	wait     time.Duration
	inFlight atomic.Int64
	peak     atomic.Int64
	waiting  atomic.Int64
	// gate, when set (tests), runs inside each slot before the hash, so that a test
	// can hold slots taken and see who waits.
	gate func()
}

func newHashSlots(n int, wait time.Duration) *hashSlots {
	return &hashSlots{slots: make(chan struct{}, max(1, n)), wait: wait}
}

// acquire takes a slot. A login (bounded) waits at most wait, then answers ErrBusy;
// an admin's own change (creating an account, setting a password) waits as long as
// its request.
func (h *hashSlots) acquire(ctx context.Context, bounded bool) error {
	select {
	case h.slots <- struct{}{}:
	default:
		h.waiting.Add(1)
		defer h.waiting.Add(-1)
		var timeout <-chan time.Time
		if bounded {
			t := time.NewTimer(h.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case h.slots <- struct{}{}:
		case <-timeout:
			return ErrBusy
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for n := h.inFlight.Add(1); ; {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if h.gate != nil {
		h.gate()
	}
	return nil
}

func (h *hashSlots) release() {
	h.inFlight.Add(-1)
	<-h.slots
}

func (s *Service) setParams(p *argon2id.Params) {
	dummy, _ := argon2id.CreateHash("boxoffice-dummy-password", p) // only fails if crypto/rand does
	s.params.Store(p)
	s.dummy.Store(&dummy)
}

// SetTestParams makes hashing cheap, for tests that create many accounts. Existing
// hashes keep their own parameters and still verify.
func (s *Service) SetTestParams() {
	s.setParams(&argon2id.Params{Memory: 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
}

// hash hashes a password under today's parameters; bounded as in acquire.
func (s *Service) hash(ctx context.Context, password string, bounded bool) (string, error) {
	if err := s.hashing.acquire(ctx, bounded); err != nil {
		return "", err
	}
	defer s.hashing.release()
	return argon2id.CreateHash(password, s.params.Load())
}

// compare checks password against a stored hash in a login's bounded wait. stale
// says the hash was made under other parameters than today's.
func (s *Service) compare(ctx context.Context, password, hash string) (ok, stale bool, err error) {
	if err := s.hashing.acquire(ctx, true); err != nil {
		return false, false, err
	}
	defer s.hashing.release()
	ok, p, err := argon2id.CheckHash(password, hash)
	if err != nil {
		return false, false, fmt.Errorf("staff: stored hash: %w", err)
	}
	return ok, *p != *s.params.Load(), nil
}

// rehash stores the member's password again under today's parameters, unless it was
// changed meanwhile. It is called after a login verified password against old.
func (s *Service) rehash(ctx context.Context, id int64, password, old string) error {
	h, err := s.hash(ctx, password, true)
	if err != nil {
		return err
	}
	_, err = s.q.StaffRehash(ctx, db.StaffRehashParams{ID: id, OldHash: old, NewHash: h})
	return dberr.Translate(err)
}
