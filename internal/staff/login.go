package staff

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/clientnet"
	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
)

// Policy is how logins are throttled and hashed.
//
// Every attempt counts, before its password is hashed, on the account from this
// client (a known device, else the address), on the address across accounts (unless
// the client is a known device), and on the account from clients it has never
// logged in from. Each counter lets its free count of failures through at once; past
// that the next attempt waits FirstDelay after the last failure, twice that after the
// next, up to MaxDelay. A success gives its count back and clears the first counter.
// So a stranger's guesses slow the stranger, and the owner on a device or address
// they logged in from before is not slowed by them.
type Policy struct {
	// PairFree failures of one account from one client; AddressFree from one
	// address (IPv6 per /64) across accounts; AccountFree of one account from every
	// client it does not know, together.
	PairFree, AddressFree, AccountFree int
	FirstDelay, MaxDelay               time.Duration
	// Window forgets a counter's failures after that long without one.
	Window time.Duration
	// KnownFor is how long a device or address stays known to an account after the
	// last login from it.
	KnownFor time.Duration
	// Hashes is how many argon2id hashes run at once (each 64 MiB and a core);
	// a login waits up to HashWait for one, then gets ErrBusy.
	Hashes   int
	HashWait time.Duration
}

// DefaultPolicy is the policy of the defaults: a few typos cost nothing, a guesser
// from one place gets about a guess every five minutes once past them.
func DefaultPolicy() Policy {
	return Policy{PairFree: 5, AddressFree: 20, AccountFree: 10,
		FirstDelay: time.Second, MaxDelay: 5 * time.Minute, Window: time.Hour,
		KnownFor: 180 * 24 * time.Hour, Hashes: 1, HashWait: 5 * time.Second}
}

// delays is the wait after each failure past a free count, in seconds: FirstDelay
// doubling up to MaxDelay, which is the last and stays.
func (p Policy) delays() []float64 {
	var out []float64
	for d := p.FirstDelay; ; d *= 2 {
		if d >= p.MaxDelay || d <= 0 {
			return append(out, p.MaxDelay.Seconds())
		}
		out = append(out, d.Seconds())
	}
}

// ThrottledError answers an attempt refused before its password was looked at; it
// wraps ErrThrottled. Wait is how long until this client's next attempt counts.
type ThrottledError struct{ Wait time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%v: try again in %s", ErrThrottled, e.Wait)
}

// Unwrap makes errors.Is(err, ErrThrottled) true.
func (e *ThrottledError) Unwrap() error { return ErrThrottled }

// Attempt is one login as the web layer saw it.
type Attempt struct {
	Email, Password string
	// Address is the client's address (IPv6 is counted per /64).
	Address string
	// Devices are the known-device tokens the browser presented, for any account.
	Devices []string
}

// LoggedIn is a successful login.
type LoggedIn struct {
	Member
	// Device is a new known-device token for the browser to keep; empty when the
	// browser presented one the account knows already.
	Device string
}

// MaxDevices bounds the known-device tokens of one browser (one per account) that a
// login looks at and a browser keeps.
const MaxDevices = 8

// client is how the account knows the one trying: by a device token's hash, by an
// address it logged in from, or not at all.
type client struct {
	device       string
	addressKnown bool
}

// counter is one throttle counter an attempt takes, and its free count.
type counter struct {
	key  string
	free int
}

// counters are the counters an attempt takes; the first is the account from this
// client, the one a success clears.
func (p Policy) counters(email, address string, c client) []counter {
	if c.device != "" {
		return []counter{{"pair:" + email + " device:" + c.device, p.PairFree}}
	}
	out := []counter{{"pair:" + email + " address:" + address, p.PairFree}, {"address:" + address, p.AddressFree}}
	if !c.addressKnown {
		out = append(out, counter{"account:" + email, p.AccountFree})
	}
	return out
}

// Login checks an attempt. Refused by the throttle it answers a ThrottledError
// without looking at the password; otherwise an unknown email, a wrong password and a
// disabled account all answer ErrBadLogin, after the same work, and stay counted. A
// login that found no hashing slot in time answers ErrBusy and is not counted.
func (s *Service) Login(ctx context.Context, a Attempt) (LoggedIn, error) {
	email := strings.ToLower(strings.TrimSpace(a.Email))
	if len(email) > 254 {
		email = email[:254]
	}
	address := clientnet.Key(a.Address)
	c, err := s.knownClient(ctx, email, address, a.Devices)
	if err != nil {
		return LoggedIn{}, err
	}
	counters := s.policy.counters(email, address, c)
	keys := make([]string, len(counters))
	for i, k := range counters {
		keys[i] = k.key
	}
	if err := s.take(ctx, counters); err != nil {
		return LoggedIn{}, err
	}
	m, stale, err := s.check(ctx, email, a.Password)
	if errors.Is(err, ErrBusy) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Never checked: the attempt gives its count back.
		if gbErr := s.q.LoginAttemptGiveBack(context.WithoutCancel(ctx), db.LoginAttemptGiveBackParams{Keys: keys}); gbErr != nil {
			return LoggedIn{}, errors.Join(err, dberr.Translate(gbErr))
		}
		return LoggedIn{}, err
	} else if err != nil {
		return LoggedIn{}, err
	}
	if err := s.q.LoginAttemptGiveBack(ctx, db.LoginAttemptGiveBackParams{Keys: keys, Reset: keys[0]}); err != nil {
		return LoggedIn{}, dberr.Translate(err)
	}
	out := LoggedIn{Member: member(m)}
	if out.Device, err = s.remember(ctx, m.ID, address, c); err != nil {
		return LoggedIn{}, err
	}
	if stale {
		// A busy moment skips it: the next login stores it again.
		if err := s.rehash(ctx, m.ID, a.Password, m.PasswordHash); err != nil && !errors.Is(err, ErrBusy) {
			return LoggedIn{}, err
		}
	}
	return out, nil
}

// knownClient is how the account named email knows this client.
func (s *Service) knownClient(ctx context.Context, email, address string, devices []string) (client, error) {
	hashes := make([]string, 0, min(len(devices), MaxDevices))
	for _, d := range devices[:min(len(devices), MaxDevices)] {
		hashes = append(hashes, deviceHash(d))
	}
	r, err := s.q.StaffKnownClient(ctx, db.StaffKnownClientParams{Email: email, Address: address,
		Devices: hashes, KnownSeconds: s.policy.KnownFor.Seconds()})
	if errors.Is(err, pgx.ErrNoRows) {
		return client{}, nil
	} else if err != nil {
		return client{}, dberr.Translate(err)
	}
	return client{device: r.Device, addressKnown: r.AddressKnown}, nil
}

// take counts the attempt on every counter, or refuses it without counting: the one
// statement's verdict. A counter that does not exist yet (or was pruned meanwhile) is
// created only when none of the others refuses, so that refused attempts write
// nothing.
func (s *Service) take(ctx context.Context, counters []counter) error {
	keys, frees := make([]string, len(counters)), make([]int32, len(counters))
	for i, c := range counters {
		keys[i], frees[i] = c.key, int32(c.free)
	}
	for range 3 {
		r, err := s.q.LoginAttemptTake(ctx, db.LoginAttemptTakeParams{Keys: keys, Frees: frees,
			WindowSeconds: s.policy.Window.Seconds(), Delays: s.delays})
		switch {
		case err != nil:
			return dberr.Translate(err)
		case int(r.Taken) == len(keys):
			return nil
		case int(r.Present) == len(keys) || r.WaitSeconds > 0:
			return &ThrottledError{Wait: time.Duration(max(r.WaitSeconds, 1)) * time.Second}
		}
		if err := s.q.LoginAttemptEnsure(ctx, keys); err != nil {
			return dberr.Translate(err)
		}
	}
	return errors.New("staff: login counters pruned under every attempt")
}

// check looks the password up; stale says its hash is under old parameters. Only a
// right password of an enabled account answers no error.
func (s *Service) check(ctx context.Context, email, password string) (m db.Staff, stale bool, err error) {
	// Past the cap the password cannot be right: no hash is computed for it.
	if len(password) > MaxPassword {
		return m, false, ErrBadLogin
	}
	m, err = s.q.StaffByEmail(ctx, email)
	if errors.Is(err, pgx.ErrNoRows) {
		// As much work as a wrong password, so the time does not tell.
		if _, _, err := s.compare(ctx, password, *s.dummy.Load()); err != nil {
			return m, false, err
		}
		return m, false, ErrBadLogin
	} else if err != nil {
		return m, false, dberr.Translate(err)
	}
	ok, stale, err := s.compare(ctx, password, m.PasswordHash)
	if err != nil {
		return m, false, err
	}
	if !ok || m.DisabledAt != nil {
		return m, false, ErrBadLogin
	}
	return m, stale, nil
}

// remember records the address and the device a member logged in from, and returns
// a new device token when the browser had none the account knows.
func (s *Service) remember(ctx context.Context, id int64, address string, c client) (string, error) {
	if err := s.q.StaffKnownTouch(ctx, db.StaffKnownTouchParams{StaffID: id, Kind: "address", Key: address}); err != nil {
		return "", dberr.Translate(err)
	}
	token, hash := c.device, c.device
	if token == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // crypto/rand.Read does not fail
		token = base64.RawURLEncoding.EncodeToString(b)
		hash = deviceHash(token)
	}
	if err := s.q.StaffKnownTouch(ctx, db.StaffKnownTouchParams{StaffID: id, Kind: "device", Key: hash}); err != nil {
		return "", dberr.Translate(err)
	}
	if c.device != "" {
		return "", nil
	}
	return token, nil
}

// deviceHash is what the database keeps of a device token: a leaked table names no
// cookie a browser could present.
func deviceHash(token string) string {
	if len(token) > 64 {
		token = token[:64]
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// PruneFailures deletes throttle counters quiet for longer than the window (they
// count as nothing) and devices and addresses unused for longer than KnownFor (known
// no more): logins already read them so, and this only bounds the tables.
func (s *Service) PruneFailures(ctx context.Context) (int64, error) {
	n, err := s.q.LoginAttemptPrune(ctx, s.policy.Window.Seconds())
	if err != nil {
		return n, dberr.Translate(err)
	}
	k, err := s.q.StaffKnownPrune(ctx, s.policy.KnownFor.Seconds())
	return n + k, dberr.Translate(err)
}
