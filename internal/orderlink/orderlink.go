// Package orderlink signs and reads the access links of orders: the link in an order's
// emails that opens its page, its tickets as PDF and its calendar entry on any device,
// without the session that bought it. A link names the order and a version; the order
// keeps its current version in PostgreSQL (booking), and staff revoke its links by
// moving the version on, so a link that leaked stops working while the buyer is sent
// a new one.
//
// The links are signed with the admission keys (internal/keyring): the first key
// signs, every key verifies, so a key is rotated without breaking the links in
// mailboxes for as long as it stays configured. The domain string keeps a MAC made
// here from meaning anything to the other tokens those keys sign.
package orderlink

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/url"
	"strconv"

	"boxoffice/internal/keyring"
)

// A token is base64url (unpadded) of
//
//	payload = format (1 byte) | order id (uvarint) | link version (uvarint)
//	          | key id length (1 byte) | key id
//	mac     = HMAC-SHA256(secret, domain | payload), 32 bytes
//
// It carries no time: a ticket link must work until the show, and revocation, not
// age, is what ends it.
const (
	format  = 1
	domain  = "boxoffice/order/link/v1\x00"
	macSize = keyring.Size
	// MaxToken bounds what is read as a token: a real one is under 100 characters.
	MaxToken = 200
)

var encoding = base64.RawURLEncoding

// ErrInvalid wraps every reason a token is refused by its signature or shape: forged,
// altered, cut short, or signed by a key no longer configured. Whether it is still
// the order's current version is for the caller to ask.
var ErrInvalid = errors.New("orderlink: invalid token")

// Link is what a token names: an order, at a version of its links.
type Link struct {
	OrderID int64
	Version int
}

// Signer signs and reads order links. It is safe for concurrent use.
type Signer struct {
	keys      []keyring.Key
	verifiers map[string][]byte
}

// New returns a Signer whose first key signs. It panics without a key or with a key
// lacking an id or secret: a configuration error to catch at start.
func New(keys []keyring.Key) *Signer {
	return &Signer{keys: keys, verifiers: keyring.Verifiers("orderlink", keys)}
}

// Token is l's token, signed by the first key.
func (s *Signer) Token(l Link) string {
	k := s.keys[0]
	p := make([]byte, 0, 1+2*binary.MaxVarintLen64+1+len(k.ID)+macSize)
	p = append(p, format)
	p = binary.AppendUvarint(p, uint64(l.OrderID))
	p = binary.AppendUvarint(p, uint64(l.Version))
	p = append(p, byte(len(k.ID)))
	p = append(p, k.ID...)
	p = append(p, keyring.MAC(k.Secret, domain, p)...)
	return encoding.EncodeToString(p)
}

// Parse checks a token's signature and reads it. Every refusal wraps ErrInvalid.
func (s *Signer) Parse(token string) (Link, error) {
	if len(token) > MaxToken {
		return Link{}, ErrInvalid
	}
	raw, err := encoding.DecodeString(token)
	if err != nil || len(raw) < 1+macSize || raw[0] != format {
		return Link{}, ErrInvalid
	}
	payload, sum := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	order, rest := uvarint(payload[1:])
	version, rest := uvarint(rest)
	if len(rest) < 1 || len(rest) != 1+int(rest[0]) {
		return Link{}, ErrInvalid // a number cut short leaves nothing for the key id
	}
	secret, ok := s.verifiers[string(rest[1:])]
	if !ok {
		return Link{}, ErrInvalid
	}
	// hmac.Equal compares in constant time: how much of a forged MAC matches leaks nothing.
	if !hmac.Equal(sum, keyring.MAC(secret, domain, payload)) {
		return Link{}, ErrInvalid
	}
	if order == 0 || order > 1<<62 || version == 0 || version > 1<<30 {
		return Link{}, ErrInvalid
	}
	return Link{OrderID: int64(order), Version: int(version)}, nil
}

// uvarint reads a number off the front of b; one that is not there reads as 0 and
// leaves nothing.
func uvarint(b []byte) (uint64, []byte) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil
	}
	return v, b[n:]
}

// Param is the query parameter that carries a token on the order's addresses.
const Param = "t"

// Path is the order page's address with l's token: "/orders/42?t=…". Suffix names one
// of the order's files ("/tickets.pdf", "/event.ics"), or is empty for the page.
func (s *Signer) Path(l Link, suffix string) string {
	return "/orders/" + strconv.FormatInt(l.OrderID, 10) + suffix + "?" + Param + "=" + url.QueryEscape(s.Token(l))
}
