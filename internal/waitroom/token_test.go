package waitroom

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// tokenRoom is a Room for signing and verifying only: its Redis is never asked.
func tokenRoom(t *testing.T, keys ...Key) *Room {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	r := New(rdb, "test:", keys, Hooks{}, quiet, Options{})
	return r
}

// TestTokenTable: every way a token can be wrong is refused with ErrInvalidToken;
// a valid one, and one signed by a key kept for verifying after a rotation, pass.
func TestTokenTable(t *testing.T) {
	t.Parallel()
	oldKey := Key{ID: "2026-11", Secret: []byte("the old secret, 32 bytes long...")}
	newKey := Key{ID: "2026-12", Secret: []byte("the new secret, 32 bytes long...")}
	before := tokenRoom(t, oldKey)         // before the rotation
	during := tokenRoom(t, newKey, oldKey) // new key signs, old one still verifies
	after := tokenRoom(t, newKey)          // old key removed

	exp := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	valid := during.sign(7, "visitor-a", exp)
	flip := func(tok string, i int) string {
		raw, _ := tokenEncoding.DecodeString(tok)
		raw[i] ^= 0x01
		return tokenEncoding.EncodeToString(raw)
	}

	for _, c := range []struct {
		name    string
		room    *Room
		token   string
		event   int64
		visitor string
		ok      bool
	}{
		{"valid", during, valid, 7, "visitor-a", true},
		{"valid after the rotation", after, valid, 7, "visitor-a", true},
		{"signed before the rotation, old key kept", during, before.sign(7, "visitor-a", exp), 7, "visitor-a", true},
		{"signed before the rotation, old key removed", after, before.sign(7, "visitor-a", exp), 7, "visitor-a", false},
		{"flipped byte in the event id", during, flip(valid, 1), 7, "visitor-a", false},
		{"flipped byte in the MAC", during, flip(valid, len(valid)*3/4-1), 7, "visitor-a", false},
		{"another event", during, valid, 8, "visitor-a", false},
		{"signed for another event", during, during.sign(8, "visitor-a", exp), 7, "visitor-a", false},
		{"copied to another visitor", during, valid, 7, "visitor-b", false},
		{"expired", during, during.sign(7, "visitor-a", time.Now().Add(-time.Second)), 7, "visitor-a", false},
		{"empty", during, "", 7, "visitor-a", false},
		{"not base64", during, "not a token!", 7, "visitor-a", false},
		{"truncated", during, valid[:len(valid)-5], 7, "visitor-a", false},
		{"forged with another secret", during, tokenRoom(t, Key{ID: newKey.ID, Secret: []byte("guess")}).sign(7, "visitor-a", exp), 7, "visitor-a", false},
	} {
		claims, err := c.room.Verify(c.token, c.event, c.visitor)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: got %v, want accepted", c.name, err)
		case c.ok && (claims.EventID != c.event || claims.Visitor != c.visitor || !claims.ExpiresAt.Equal(exp)):
			t.Errorf("%s: got claims %+v, want event %d, %s, until %v", c.name, claims, c.event, c.visitor, exp)
		case !c.ok && !errors.Is(err, ErrInvalidToken):
			t.Errorf("%s: got %v, want ErrInvalidToken", c.name, err)
		case !c.ok:
			t.Logf("%s: %v", c.name, err)
		}
	}
	if got := during.sign(7, "visitor-a", exp); got != valid {
		t.Errorf("signing again got %q, want the same token %q", got, valid)
	}
	if len(valid) > 80 {
		t.Errorf("got a token of %d characters, want a compact one (at most 80)", len(valid))
	}
}

// TestTokenAnyFlippedBitRefused: no single flipped bit anywhere in a token passes.
func TestTokenAnyFlippedBitRefused(t *testing.T) {
	t.Parallel()
	r := tokenRoom(t, testKey)
	tok := r.sign(1, "v", time.Now().Add(time.Minute))
	raw, _ := tokenEncoding.DecodeString(tok)
	for i := range raw {
		for bit := range 8 {
			raw[i] ^= 1 << bit
			if _, err := r.Verify(tokenEncoding.EncodeToString(raw), 1, "v"); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("byte %d bit %d flipped: got %v, want ErrInvalidToken", i, bit, err)
			}
			raw[i] ^= 1 << bit
		}
	}
}
