// Package proof is the proof of work a browser does before it joins a waiting room or
// makes its session's first hold: a cost that a script repeating the call thousands of
// times feels, and a person does not notice. It speaks ALTCHA's challenge scheme, the
// one its widget (static/js/vendor) still solves: the challenge is the SHA-256 of a
// salt and a secret number up to a maximum, signed with HMAC-SHA256; the browser finds
// the number by trying them all from 0; the expiry travels inside the salt, so the
// signature covers it. A solution counts once: spent ones are remembered in Redis until
// their challenge expires, with what they bought (Buy), and by the instance that
// accepted them; while Redis is away the instance's own memory decides.
//
// It imports only go-redis and keyring: web asks it, and it knows nothing of sessions
// or HTTP.
package proof

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/keyring"
)

// Algorithm is the challenge's hash, by the name the widget knows it.
const Algorithm = "SHA-256"

// Lifetime is how long a challenge may be solved and spent. The widget solves a fresh
// one when its challenge expires; a longer life would let a script store up more
// solutions for the moment an onsale opens.
const Lifetime = 10 * time.Minute

// memoryTimeout bounds the Redis call that remembers a spent solution. Redis answers
// in well under a millisecond; past this it is away.
const memoryTimeout = 2 * time.Second

// memorySlack keeps a spent solution past its expiry, for instances whose clocks differ.
const memorySlack = time.Minute

// Errors of Verify. Each says why a payload is refused; none is the server's fault.
var (
	ErrMalformed = errors.New("proof: not a solved challenge")
	ErrExpired   = errors.New("proof: the challenge has expired")
	ErrWrong     = errors.New("proof: the solution or its signature is wrong")
	ErrSpent     = errors.New("proof: the solution was spent already")
	// ErrUnavailable: Redis, which remembers spent solutions, did not answer, and
	// this instance's own memory is full. The solution is refused (a replay must
	// never pass) but may well be unspent: sent again later, it counts.
	ErrUnavailable = errors.New("proof: spent solutions cannot be checked now")
)

// Challenge is what GET /api/v1/challenge answers, in ALTCHA's field names.
type Challenge struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"` // hex SHA-256 of Salt and the secret number
	MaxNumber int    `json:"maxnumber"`
	Salt      string `json:"salt"`      // random hex, then "?expires=<unix seconds>&"
	Signature string `json:"signature"` // hex HMAC-SHA256 of Challenge
}

// payload is a solved challenge as the widget sends it: base64 of this JSON.
type payload struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	Number    int64  `json:"number"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
}

// saltForm is the only salt this package issues. Anchored, with the closing "&": a
// client cannot move digits between the number and the salt to stretch the expiry
// (sha256(salt + number) reads the same), because the salt must still end in "&".
var saltForm = regexp.MustCompile(`^[0-9a-f]{24}\?expires=([0-9]{10})&$`)

// Guard issues challenges and verifies their solutions.
type Guard struct {
	keys      [][]byte // the first signs; all verify
	maxNumber int
	rdb       redis.Cmdable
	prefix    string
	now       func() time.Time
	local     localSpent
}

// keyLabel separates the keys derived here from other uses of the same secrets.
const keyLabel = "boxoffice proof of work"

// New returns a Guard whose challenges have the given difficulty. The HMAC keys are
// derived from secrets (the admission keys: every instance shares them, and the first
// is the one in use), so that any instance verifies another's challenge. Spent
// solutions are remembered in rdb under prefix.
func New(rdb redis.Cmdable, prefix string, secrets [][]byte, maxNumber int) *Guard {
	g := &Guard{maxNumber: maxNumber, rdb: rdb, prefix: prefix + "proof:", now: time.Now}
	for _, s := range secrets {
		g.keys = append(g.keys, keyring.MAC(s, keyLabel))
	}
	return g
}

// Challenge returns a fresh challenge, valid for Lifetime.
func (g *Guard) Challenge() Challenge {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	number := int64(binary.BigEndian.Uint64(b[12:]) % uint64(g.maxNumber+1))
	salt := hex.EncodeToString(b[:12]) + "?expires=" + strconv.FormatInt(g.now().Add(Lifetime).Unix(), 10) + "&"
	ch := hashOf(salt, number)
	return Challenge{Algorithm: Algorithm, Challenge: ch, MaxNumber: g.maxNumber, Salt: salt, Signature: sign(g.keys[0], ch)}
}

// Verify checks a solved challenge (the widget's payload) and spends it: the same
// payload is refused from then on. It returns one of the errors above for a payload
// that does not count. The instance's own memory refuses what it accepted before,
// even where a slow Redis would not say in time; Redis refuses what another instance
// accepted. While Redis is away the instance's memory alone decides, so a solution
// counts at most once per instance then.
func (g *Guard) Verify(ctx context.Context, encoded string) error {
	sol, err := g.Check(encoded)
	if err != nil {
		return err
	}
	_, err = g.spend(ctx, sol, spentMark)
	return err
}

// Solution is a solved challenge that Check found sound, not yet spent.
type Solution struct {
	challenge string
	expires   time.Time
}

// Check verifies everything about a solved challenge but whether it was spent: the
// caller spends it with Buy once its other checks have passed, so a call refused for
// another reason leaves the solution to be sent again.
func (g *Guard) Check(encoded string) (Solution, error) {
	p, expires, err := g.check(encoded)
	if err != nil {
		return Solution{}, err
	}
	return Solution{challenge: p.Challenge, expires: expires}, nil
}

// Buy spends sol, as Verify does, for what it buys: token, which is remembered with
// the solution. A solution spent before for a token answers that token instead (its
// first answer was lost on the way, and the same solution is asked for the same thing
// again); one spent with Verify, or known spent only to this instance's memory while
// Redis cannot say for what, is ErrSpent. The caller tells a token bought now from
// one bought before by comparing it with its own.
func (g *Guard) Buy(ctx context.Context, sol Solution, token string) (string, error) {
	if token == "" || token == spentMark {
		return "", errors.New("proof: a solution buys a token, not nothing")
	}
	return g.spend(ctx, sol, token)
}

// spentMark is what Redis remembers for a solution that Verify spent.
const spentMark = "1"

// spend remembers sol as spent for what, in this instance's memory and in Redis, and
// answers what, or what the solution was spent for before (ErrSpent when that was
// spentMark or cannot be read).
func (g *Guard) spend(ctx context.Context, sol Solution, what string) (string, error) {
	now := g.now()
	ttl := sol.expires.Sub(now) + memorySlack
	before, kept := g.local.spend(sol.challenge, sol.expires.Add(memorySlack), now)
	ctx, cancel := context.WithTimeout(ctx, memoryTimeout)
	defer cancel()
	key := g.prefix + sol.challenge
	if before {
		// This instance spent it: for what, only Redis can say.
		if what == spentMark {
			return "", ErrSpent
		}
		return g.spentFor(g.rdb.Get(ctx, key).Result())
	}
	// SET NX GET: set unless set, answering what was there; one round trip, so two
	// instances spending one solution at once agree on the first.
	prev, err := g.rdb.SetArgs(ctx, key, what, redis.SetArgs{Mode: "NX", Get: true, TTL: ttl}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return what, nil // spent now
	case err != nil && !kept:
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	case err != nil:
		return what, nil // Redis away: this instance's memory has spent it
	case what == spentMark:
		return "", ErrSpent // Verify: spent before, whatever for
	}
	return g.spentFor(prev, nil)
}

// spentFor answers what a spent solution bought, from Redis's answer.
func (g *Guard) spentFor(prev string, err error) (string, error) {
	if err != nil || prev == spentMark || prev == "" {
		return "", ErrSpent
	}
	return prev, nil
}

// check verifies everything about a payload but whether it was spent, and returns it
// with its expiry.
func (g *Guard) check(encoded string) (payload, time.Time, error) {
	var p payload
	if len(encoded) > 1024 {
		return p, time.Time{}, ErrMalformed
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return p, time.Time{}, ErrMalformed
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Algorithm != Algorithm || p.Number < 0 {
		return p, time.Time{}, ErrMalformed
	}
	m := saltForm.FindStringSubmatch(p.Salt)
	if m == nil {
		return p, time.Time{}, ErrMalformed
	}
	unix, _ := strconv.ParseInt(m[1], 10, 64) // ten digits always parse
	expires := time.Unix(unix, 0)
	if !g.now().Before(expires) {
		return p, time.Time{}, ErrExpired
	}
	if subtle.ConstantTimeCompare([]byte(hashOf(p.Salt, p.Number)), []byte(p.Challenge)) != 1 {
		return p, time.Time{}, ErrWrong
	}
	for _, k := range g.keys {
		if hmac.Equal([]byte(sign(k, p.Challenge)), []byte(p.Signature)) {
			return p, expires, nil
		}
	}
	return p, time.Time{}, ErrWrong
}

func hashOf(salt string, number int64) string {
	sum := sha256.Sum256(strconv.AppendInt([]byte(salt), number, 10))
	return hex.EncodeToString(sum[:])
}

func sign(key []byte, challenge string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(challenge))
	return hex.EncodeToString(m.Sum(nil))
}

// maxSearch bounds Solve for a challenge that names no maximum.
const maxSearch = 10_000_000

// Solve finds a challenge's secret number as the widget does, trying every number from
// 0 up, and returns the payload to send (the X-Altcha header, or the form field
// altcha). It is for programs that stand in for a browser: tests, the onsale
// simulator. It costs as many SHA-256 hashes as the number found.
func Solve(ch Challenge) (string, error) {
	var want [sha256.Size]byte
	if n, err := hex.Decode(want[:], []byte(ch.Challenge)); err != nil || n != sha256.Size || ch.Algorithm != Algorithm {
		return "", fmt.Errorf("proof: not a %s challenge", Algorithm)
	}
	limit := int64(ch.MaxNumber)
	if limit <= 0 {
		limit = maxSearch
	}
	buf := make([]byte, 0, len(ch.Salt)+20)
	buf = append(buf, ch.Salt...)
	for n := int64(0); n <= limit; n++ {
		if sha256.Sum256(strconv.AppendInt(buf, n, 10)) == want {
			raw, err := json.Marshal(payload{Algorithm: ch.Algorithm, Challenge: ch.Challenge, Number: n, Salt: ch.Salt, Signature: ch.Signature})
			if err != nil {
				return "", err
			}
			return base64.StdEncoding.EncodeToString(raw), nil
		}
	}
	return "", fmt.Errorf("proof: no number up to %d solves the challenge", limit)
}
