package waitroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"
)

// An admission token is base64url (unpadded) of
//
//	payload = version (1 byte) | event id (uvarint) | end of admission, unix ms (uvarint)
//	          | key id length (1 byte) | key id
//	mac     = HMAC-SHA256(secret, tokenDomain | payload | visitor), 32 bytes
//
// about 60 characters. The visitor is bound by the MAC but not carried: the verifier
// knows whose session it is, and a token copied to another visitor fails the MAC. The
// domain string keeps a MAC made here from meaning anything to another use of the same
// secret.
const (
	tokenVersion = 1
	tokenDomain  = "boxoffice/waitroom/admission/v1\x00"
	macSize      = sha256.Size
)

var tokenEncoding = base64.RawURLEncoding

// sign returns the admission token for visitor on the event until exp, signed by the
// first key.
func (r *Room) sign(eventID int64, visitor string, exp time.Time) string {
	k := r.keys[0]
	p := make([]byte, 0, 1+2*binary.MaxVarintLen64+1+len(k.ID)+macSize)
	p = append(p, tokenVersion)
	p = binary.AppendUvarint(p, uint64(eventID))
	p = binary.AppendUvarint(p, uint64(exp.UnixMilli()))
	p = append(p, byte(len(k.ID)))
	p = append(p, k.ID...)
	p = append(p, mac(k.Secret, p, visitor)...)
	return tokenEncoding.EncodeToString(p)
}

func mac(secret, payload []byte, visitor string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(tokenDomain))
	m.Write(payload)
	m.Write([]byte(visitor))
	return m.Sum(nil)
}

// Verify checks a token by signature alone: no Redis, so admitted shoppers keep buying
// while Redis is down. The end of an admission is stamped by Redis's clock and checked
// against this server's: keep the clocks within a second of each other (NTP). Every
// refusal wraps ErrInvalidToken with its reason.
func (r *Room) Verify(token string, eventID int64, visitor string) (Claims, error) {
	refuse := func(format string, a ...any) (Claims, error) {
		return Claims{}, fmt.Errorf("%w: "+format, append([]any{ErrInvalidToken}, a...)...)
	}
	raw, err := tokenEncoding.DecodeString(token)
	if err != nil || len(raw) < 1+macSize || raw[0] != tokenVersion {
		return refuse("malformed")
	}
	payload, sum := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	rest := payload[1:]
	ev, n := binary.Uvarint(rest)
	if n <= 0 {
		return refuse("malformed")
	}
	rest = rest[n:]
	expMS, n := binary.Uvarint(rest)
	if n <= 0 {
		return refuse("malformed")
	}
	rest = rest[n:]
	if len(rest) < 1 || len(rest) != 1+int(rest[0]) {
		return refuse("malformed")
	}
	keyID := string(rest[1:])
	secret, ok := r.verifiers[keyID]
	if !ok {
		return refuse("signed by key %q, which is not configured", keyID)
	}
	// hmac.Equal compares in constant time: how much of a forged MAC matches leaks nothing.
	if !hmac.Equal(sum, mac(secret, payload, visitor)) {
		return refuse("bad signature (altered, or issued to another visitor)")
	}
	// Claims are read only once the MAC vouches for them.
	if int64(ev) != eventID {
		return refuse("issued for event %d, not %d", ev, eventID)
	}
	exp := time.UnixMilli(int64(expMS))
	if !time.Now().Before(exp) {
		return refuse("expired at %s", exp.UTC().Format(time.RFC3339))
	}
	return Claims{EventID: eventID, Visitor: visitor, ExpiresAt: exp, KeyID: keyID}, nil
}
