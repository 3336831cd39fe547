// Package keyring holds the HMAC keys that sign the program's tokens (the waiting
// room's admissions, the verified buyers' links): the first key signs, every key
// verifies, so that a key is rotated without refusing what it signed meanwhile.
//
// It imports only the standard library.
package keyring

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"hash"
	"sync"
)

// Key is one HMAC key, named by its id in every token it signs.
type Key struct {
	ID     string
	Secret []byte
}

// Size is the length of a MAC.
const Size = sha256.Size

// Verifiers maps each key's id to its secret. It panics, naming owner, without a key
// or with a key lacking an id (of 1 to 255 bytes, its length is one byte in a token)
// or a secret: a configuration error to catch at start.
func Verifiers(owner string, keys []Key) map[string][]byte {
	if len(keys) == 0 {
		panic(owner + ": no signing key")
	}
	ver := make(map[string][]byte, len(keys))
	for _, k := range keys {
		if k.ID == "" || len(k.ID) > 255 || len(k.Secret) == 0 {
			panic(fmt.Sprintf("%s: key %q needs an id of 1 to 255 bytes and a secret", owner, k.ID))
		}
		ver[k.ID] = k.Secret
	}
	return ver
}

// MAC is HMAC-SHA256 under secret of domain and then parts. The domain string keeps a
// MAC made for one use of a secret from meaning anything to another.
func MAC(secret []byte, domain string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(domain))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// MACs makes MACs under one secret and domain, as MAC does, from keyed HMAC states
// kept for reuse: hmac.New hashes the key into two blocks and allocates both hashes
// for every MAC, which a signer of thousands of tokens a second pays each time.
type MACs struct {
	domain []byte
	pool   sync.Pool
}

// NewMACs is the MACs under secret and domain.
func NewMACs(secret []byte, domain string) *MACs {
	m := &MACs{domain: []byte(domain)}
	m.pool.New = func() any { return hmac.New(sha256.New, secret) }
	return m
}

// Append appends the MAC of msg (MAC(secret, domain, msg)) to dst.
func (m *MACs) Append(dst, msg []byte) []byte {
	h := m.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(m.domain)
	h.Write(msg)
	dst = h.Sum(dst)
	m.pool.Put(h)
	return dst
}

// Equal reports whether sum is the MAC of msg, in constant time.
func (m *MACs) Equal(sum, msg []byte) bool {
	var buf [Size]byte
	return hmac.Equal(sum, m.Append(buf[:0], msg))
}
