package session

import (
	"maps"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
)

// Codec is scs's gob codec with the decoding of recent session data remembered. scs
// decodes a session on every request, and gob builds its decoder afresh each time (a
// new gob.Decoder learns the types again): at an onsale that is a tenth of the
// server's CPU, for the same few hundred bytes of a waiting buyer's session every few
// seconds. The bytes are the key, so a changed session is decoded anew, and what is
// stored stays gob: sessions written before and after read the same.
type Codec struct {
	inner scs.GobCodec

	mu   sync.Mutex
	memo map[string]decoded
}

type decoded struct {
	deadline time.Time
	values   map[string]any // never handed out: callers get a copy, which scs changes
}

// maxDecoded bounds the memory: past it the memo starts again empty. It is as many as
// the store keeps in memory (maxCached), so that a session the store serves without
// PostgreSQL is decoded without gob too: with fewer, an onsale with more buyers than
// the memo holds empties it again and again, and every request pays gob's decoding.
const maxDecoded = maxCached

// NewCodec returns a Codec remembering up to maxDecoded decodings.
func NewCodec() *Codec { return &Codec{memo: make(map[string]decoded)} }

// Encode is gob's, and remembers what it encoded as the decoding of its bytes: a
// new or changed session is read again at its next request (at an onsale's arrival
// burst, every newcomer's session a second after it was written), and gob's decoding
// of it would be the only one.
func (c *Codec) Encode(deadline time.Time, values map[string]any) ([]byte, error) {
	b, err := c.inner.Encode(deadline, values)
	if err != nil {
		return b, err
	}
	c.remember(b, decoded{deadline: deadline.Round(0), values: maps.Clone(values)})
	return b, nil
}

// Decode returns b's deadline and a copy of its values: the values a session holds
// (strings and numbers) are immutable, so a shallow copy is the caller's own.
func (c *Codec) Decode(b []byte) (time.Time, map[string]any, error) {
	c.mu.Lock()
	d, ok := c.memo[string(b)]
	c.mu.Unlock()
	if ok {
		return d.deadline, maps.Clone(d.values), nil
	}
	deadline, values, err := c.inner.Decode(b)
	if err != nil {
		return deadline, values, err
	}
	c.remember(b, decoded{deadline: deadline, values: maps.Clone(values)})
	return deadline, values, nil
}

// remember keeps d as the decoding of b.
func (c *Codec) remember(b []byte, d decoded) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.memo) >= maxDecoded {
		clear(c.memo)
	}
	c.memo[string(b)] = d
}
