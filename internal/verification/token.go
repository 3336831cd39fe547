package verification

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

	"boxoffice/internal/keyring"
)

// A link's token is base64url (unpadded) of
//
//	payload = version (1 byte) | event id (uvarint) | email id (uvarint)
//	          | end, unix seconds (uvarint) | nonce (16 bytes) | key id length (1 byte) | key id
//	mac     = HMAC-SHA256(secret, linkDomain | payload), 32 bytes
//
// The MAC lets a forged or altered link be refused without a query; the nonce, kept
// with the registration until the link is used, makes it work once, and only while it
// is the registration's latest. The domain string keeps a MAC made here from meaning
// anything to another use of the same secret (the waiting room's tokens).
const (
	linkVersion = 1
	linkDomain  = "boxoffice/verification/link/v1\x00"
	nonceSize   = 16
	macSize     = keyring.Size
)

var linkEncoding = base64.RawURLEncoding

// link is what a token says.
type link struct {
	eventID, emailID int64
	expires          time.Time
	nonce            []byte
}

// sign returns l's token, signed by the first key.
func (s *Service) sign(l link) string {
	k := s.keys[0]
	p := make([]byte, 0, 1+3*binary.MaxVarintLen64+nonceSize+1+len(k.ID)+macSize)
	p = append(p, linkVersion)
	p = binary.AppendUvarint(p, uint64(l.eventID))
	p = binary.AppendUvarint(p, uint64(l.emailID))
	p = binary.AppendUvarint(p, uint64(l.expires.Unix()))
	p = append(p, l.nonce...)
	p = append(p, byte(len(k.ID)))
	p = append(p, k.ID...)
	p = append(p, linkMAC(k.Secret, p)...)
	return linkEncoding.EncodeToString(p)
}

func linkMAC(secret, payload []byte) []byte { return keyring.MAC(secret, linkDomain, payload) }

// parse checks a token's signature and reads it. It does not look at the end: the
// caller decides with its clock. Every refusal wraps ErrInvalidLink.
func (s *Service) parse(token string) (link, error) {
	refuse := func(why string) (link, error) { return link{}, fmt.Errorf("%w: %s", ErrInvalidLink, why) }
	raw, err := linkEncoding.DecodeString(token)
	if err != nil || len(raw) < 1+macSize || raw[0] != linkVersion {
		return refuse("malformed")
	}
	payload, sum := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	rest := payload[1:]
	var nums [3]uint64
	for i := range nums {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return refuse("malformed")
		}
		nums[i], rest = v, rest[n:]
	}
	if len(rest) < nonceSize+1 || len(rest) != nonceSize+1+int(rest[nonceSize]) {
		return refuse("malformed")
	}
	nonce, keyID := rest[:nonceSize], string(rest[nonceSize+1:])
	secret, ok := s.verifiers[keyID]
	if !ok {
		return refuse("signed by a key that is not configured")
	}
	// hmac.Equal compares in constant time: how much of a forged MAC matches leaks nothing.
	if !hmac.Equal(sum, linkMAC(secret, payload)) {
		return refuse("bad signature")
	}
	return link{eventID: int64(nums[0]), emailID: int64(nums[1]), expires: time.Unix(int64(nums[2]), 0), nonce: nonce}, nil
}
