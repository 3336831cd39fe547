package proof

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/config"
	"boxoffice/internal/dbtest"
)

var testSecret = []byte("boxoffice_admission_test_secret_of_32_bytes")

func newGuard(t *testing.T, maxNumber int) (*Guard, *redis.Client, string) {
	t.Helper()
	rdb, prefix := dbtest.Redis(t)
	return New(rdb, prefix, [][]byte{testSecret}, maxNumber), rdb, prefix
}

// decode reads a payload back, for tests that change one field of it.
func decode(t *testing.T, encoded string) map[string]any {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t *testing.T, m map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func TestSolvedOnceThenSpent(t *testing.T) {
	t.Parallel()
	g, rdb, prefix := newGuard(t, 1000)
	ch := g.Challenge()
	if ch.Algorithm != "SHA-256" || ch.MaxNumber != 1000 || !strings.Contains(ch.Salt, "?expires=") {
		t.Fatalf("challenge %+v: want SHA-256, maxnumber 1000 and the expiry in the salt", ch)
	}
	p, err := Solve(ch)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(t.Context(), p); err != nil {
		t.Fatalf("first use: got %v, want accepted", err)
	}
	if err := g.Verify(t.Context(), p); !errors.Is(err, ErrSpent) {
		t.Fatalf("second use: got %v, want ErrSpent", err)
	}
	// Remembered under the prefix, until a little after the challenge expires.
	ttl, err := rdb.TTL(t.Context(), prefix+"proof:"+ch.Challenge).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= Lifetime-time.Minute || ttl > Lifetime+memorySlack {
		t.Fatalf("spent solution kept for %s, want about %s", ttl, Lifetime+memorySlack)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	g, _, _ := newGuard(t, 1000)
	good := func() string {
		p, err := Solve(g.Challenge())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := New(redis.NewClient(&redis.Options{}), "", [][]byte{[]byte("another_secret_of_thirty_two_bytes_at_least")}, 1000)
	foreign, err := Solve(other.Challenge())
	if err != nil {
		t.Fatal(err)
	}
	change := func(k string, v any) string {
		m := decode(t, good())
		m[k] = v
		return encode(t, m)
	}
	wrongNumber := func() string {
		m := decode(t, good())
		m["number"] = m["number"].(float64) + 1
		return encode(t, m)
	}
	for _, tc := range []struct {
		name    string
		payload string
		want    error
	}{
		{"empty", "", ErrMalformed},
		{"not base64", "%%%", ErrMalformed},
		{"not JSON", base64.StdEncoding.EncodeToString([]byte("nope")), ErrMalformed},
		{"another algorithm", change("algorithm", "SHA-1"), ErrMalformed},
		{"a salt of another form", change("salt", "abc"), ErrMalformed},
		{"a wrong number", wrongNumber(), ErrWrong},
		{"a forged signature", change("signature", strings.Repeat("0", 64)), ErrWrong},
		{"signed with another key", foreign, ErrWrong},
		{"too long", strings.Repeat("A", 2000), ErrMalformed},
	} {
		if err := g.Verify(t.Context(), tc.payload); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// Digits moved from the number to the end of the salt hash the same, so the signature
// still fits; without the salt's closing "&" they would stretch the expiry tenfold.
func TestSplicedSalt(t *testing.T) {
	t.Parallel()
	g, _, _ := newGuard(t, 1000)
	for {
		ch := g.Challenge()
		p, err := Solve(ch)
		if err != nil {
			t.Fatal(err)
		}
		m := decode(t, p)
		n := strconv.Itoa(int(m["number"].(float64)))
		if len(n) < 2 || n[1] == '0' {
			continue // nothing to splice without changing the digits
		}
		salt := ch.Salt + n[:1]
		rest, _ := strconv.Atoi(n[1:])
		if hashOf(salt, int64(rest)) != ch.Challenge {
			t.Fatalf("the spliced salt hashes otherwise: the test proves nothing")
		}
		m["salt"], m["number"] = salt, rest
		if err := g.Verify(t.Context(), encode(t, m)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("spliced salt %q: got %v, want ErrMalformed", salt, err)
		}
		return
	}
}

func TestExpired(t *testing.T) {
	t.Parallel()
	g, _, _ := newGuard(t, 1000)
	start := time.Now()
	g.now = func() time.Time { return start }
	p, err := Solve(g.Challenge())
	if err != nil {
		t.Fatal(err)
	}
	g.now = func() time.Time { return start.Add(Lifetime + time.Second) }
	if err := g.Verify(t.Context(), p); !errors.Is(err, ErrExpired) {
		t.Fatalf("after its lifetime: got %v, want ErrExpired", err)
	}
	g.now = func() time.Time { return start.Add(Lifetime - time.Second) }
	if err := g.Verify(t.Context(), p); err != nil {
		t.Fatalf("within its lifetime: got %v, want accepted", err)
	}
}

// A key rotation: challenges signed with the old first key still verify while that key
// is listed.
func TestOlderKeyVerifies(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	old := New(rdb, prefix, [][]byte{testSecret}, 1000)
	p, err := Solve(old.Challenge())
	if err != nil {
		t.Fatal(err)
	}
	rotated := New(rdb, prefix, [][]byte{[]byte("the_new_admission_secret_of_32_bytes_plus"), testSecret}, 1000)
	if err := rotated.Verify(t.Context(), p); err != nil {
		t.Fatalf("signed with the second key: got %v, want accepted", err)
	}
}

// viaProxy is a Guard whose Redis is reached through a proxy the test can take down,
// and a solution of one of its challenges.
func viaProxy(t *testing.T) (*Guard, *dbtest.Proxy, string) {
	t.Helper()
	rdb, prefix := dbtest.Redis(t)
	proxy := dbtest.NewProxy(t, rdb.Options().Addr)
	via := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = via.Close() })
	g := New(via, prefix, [][]byte{testSecret}, 1000)
	p, err := Solve(g.Challenge())
	if err != nil {
		t.Fatal(err)
	}
	return g, proxy, p
}

// Redis away: the instance's own memory decides. A correct solution counts, its replay
// is refused, and still refused once Redis is back (it never heard of the first); a
// forged one is refused as forged.
func TestRedisAway(t *testing.T) {
	t.Parallel()
	g, proxy, p := viaProxy(t)
	proxy.Down()
	if err := g.Verify(t.Context(), p); err != nil {
		t.Fatalf("Redis away, a correct solution: got %v, want nil", err)
	}
	if err := g.Verify(t.Context(), p); !errors.Is(err, ErrSpent) {
		t.Fatalf("Redis away, the same solution again: got %v, want ErrSpent", err)
	}
	proxy.Up()
	if err := g.Verify(t.Context(), p); !errors.Is(err, ErrSpent) {
		t.Fatalf("Redis back, the solution spent while it was away: got %v, want ErrSpent", err)
	}
	m := decode(t, p)
	m["signature"] = strings.Repeat("1", 64)
	if err := g.Verify(t.Context(), encode(t, m)); !errors.Is(err, ErrWrong) {
		t.Fatalf("a forged signature: got %v, want ErrWrong", err)
	}
}

// twoInstances are two Guards over one Redis, as two instances of the program, and a
// solution of one of a's challenges.
func twoInstances(t *testing.T) (a, b *Guard, p string) {
	t.Helper()
	rdb, prefix := dbtest.Redis(t)
	a = New(rdb, prefix, [][]byte{testSecret}, 1000)
	b = New(rdb, prefix, [][]byte{testSecret}, 1000)
	p, err := Solve(a.Challenge())
	if err != nil {
		t.Fatal(err)
	}
	return a, b, p
}

// Another instance (a Guard of its own, one Redis) refuses what this one spent: Redis
// carries the memory between instances.
func TestSpentAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b, p := twoInstances(t)
	if err := a.Verify(t.Context(), p); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if err := b.Verify(t.Context(), p); !errors.Is(err, ErrSpent) {
		t.Fatalf("the other instance: got %v, want ErrSpent", err)
	}
}

// Buy spends a solution for a token and remembers it: the same solution again, here or
// at another instance, answers the first token (its answer was lost), not a second;
// a solution spent by Verify buys nothing, and one spent by Buy verifies no more.
func TestBuyAnswersWhatItBought(t *testing.T) {
	t.Parallel()
	a, b, p := twoInstances(t)
	sol, err := a.Check(p)
	if err != nil {
		t.Fatalf("Check of a correct solution: %v", err)
	}
	if got, err := a.Buy(t.Context(), sol, "place-1"); err != nil || got != "place-1" {
		t.Fatalf("the first Buy: got %q, %v; want place-1", got, err)
	}
	if got, err := a.Buy(t.Context(), sol, "place-2"); err != nil || got != "place-1" {
		t.Errorf("the same solution again: got %q, %v; want place-1, what it bought", got, err)
	}
	bsol, err := b.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Buy(t.Context(), bsol, "place-3"); err != nil || got != "place-1" {
		t.Errorf("the same solution at another instance: got %q, %v; want place-1", got, err)
	}
	if err := b.Verify(t.Context(), p); !errors.Is(err, ErrSpent) {
		t.Errorf("Verify of a solution Buy spent: got %v, want ErrSpent", err)
	}

	verified, err := Solve(a.Challenge())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Verify(t.Context(), verified); err != nil {
		t.Fatal(err)
	}
	vsol, err := b.Check(verified)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Buy(t.Context(), vsol, "place-4"); !errors.Is(err, ErrSpent) {
		t.Errorf("Buy with a solution Verify spent: got %q, %v; want ErrSpent", got, err)
	}
	if _, err := a.Check("bm90IGEgcHJvb2Y="); !errors.Is(err, ErrMalformed) {
		t.Errorf("Check of no solution: got %v, want ErrMalformed", err)
	}
}

// Redis away: Buy spends in the instance's memory, as Verify does, and the same
// solution again is refused (Redis cannot say what it bought), never bought twice.
func TestBuyRedisAway(t *testing.T) {
	t.Parallel()
	g, proxy, p := viaProxy(t)
	sol, err := g.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	proxy.Down()
	if got, err := g.Buy(t.Context(), sol, "place-1"); err != nil || got != "place-1" {
		t.Fatalf("Redis away, the first Buy: got %q, %v; want place-1", got, err)
	}
	if got, err := g.Buy(t.Context(), sol, "place-2"); !errors.Is(err, ErrSpent) {
		t.Errorf("Redis away, the same solution again: got %q, %v; want ErrSpent", got, err)
	}
}

// The instance's memory, full of unexpired solutions, keeps no more: with Redis away
// a solution is then refused as unavailable rather than let through unremembered.
func TestLocalMemoryFull(t *testing.T) {
	t.Parallel()
	var l localSpent
	now := time.Now()
	l.seen = make(map[[32]byte]int64, maxLocal)
	for i := range maxLocal {
		var k [32]byte
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		l.seen[k] = now.Add(time.Minute).Unix()
	}
	ch := strings.Repeat("ab", 32)
	if before, kept := l.spend(ch, now.Add(time.Minute), now); before || kept {
		t.Fatalf("full memory: got before=%v kept=%v, want false, false", before, kept)
	}
	if before, kept := l.spend(ch, now.Add(3*time.Minute), now.Add(2*time.Minute)); before || !kept {
		t.Fatalf("once the others expired: got before=%v kept=%v, want false, true", before, kept)
	}
}

// The numbers drawn cover the range: a draw stuck near 0 would cost scripts nothing.
func TestNumbersSpread(t *testing.T) {
	t.Parallel()
	g := New(nil, "", [][]byte{testSecret}, 1000)
	high := 0
	for range 50 {
		p, err := Solve(g.Challenge())
		if err != nil {
			t.Fatal(err)
		}
		if decode(t, p)["number"].(float64) > 500 {
			high++
		}
	}
	if high < 10 || high > 40 {
		t.Fatalf("%d of 50 numbers above half the maximum, want about 25", high)
	}
}

// BenchmarkSolve is what a program pays for one proof at the default difficulty (a
// browser's Web Crypto is several times slower per hash, spread over its workers).
func BenchmarkSolve(b *testing.B) {
	g := New(nil, "", [][]byte{testSecret}, config.DefaultProofMaxNumber)
	for b.Loop() {
		if _, err := Solve(g.Challenge()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssueAndCheck is the server's part of one proof, Redis aside.
func BenchmarkIssueAndCheck(b *testing.B) {
	g := New(nil, "", [][]byte{testSecret}, 10)
	p, err := Solve(g.Challenge())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		g.Challenge()
		if _, _, err := g.check(p); err != nil {
			b.Fatal(err)
		}
	}
}
