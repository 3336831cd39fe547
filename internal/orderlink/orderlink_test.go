package orderlink

import (
	"encoding/binary"
	"errors"
	"net/url"
	"strings"
	"testing"

	"boxoffice/internal/keyring"
)

var (
	oldKey = keyring.Key{ID: "old", Secret: []byte("an old secret of at least thirty-two bytes")}
	newKey = keyring.Key{ID: "new", Secret: []byte("a new secret, also at least thirty-two bytes")}
)

// TestRoundTrip: a token reads back as the link it was made from, also after the key
// that signed it was rotated to second place.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	before := New([]keyring.Key{oldKey})
	after := New([]keyring.Key{newKey, oldKey})
	for _, l := range []Link{{OrderID: 1, Version: 1}, {OrderID: 1 << 40, Version: 7}} {
		tok := before.Token(l)
		for name, s := range map[string]*Signer{"same keys": before, "rotated keys": after} {
			got, err := s.Parse(tok)
			if err != nil || got != l {
				t.Errorf("%s: Parse(Token(%+v)) got %+v, %v; want the link back", name, l, got, err)
			}
		}
	}
}

// TestRefused: every change to a token is refused: each byte altered, cut short,
// lengthened, a key no longer configured, another key's signature under the same id,
// and a MAC over the same payload for another use of the same secret.
func TestRefused(t *testing.T) {
	t.Parallel()
	s := New([]keyring.Key{oldKey})
	good := s.Token(Link{OrderID: 42, Version: 2})
	raw, err := encoding.DecodeString(good)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		bad := append([]byte(nil), raw...)
		bad[i] ^= 0x01
		if _, err := s.Parse(encoding.EncodeToString(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("byte %d altered: got %v, want ErrInvalid", i, err)
		}
	}
	other := map[string]string{
		"empty":       "",
		"cut short":   encoding.EncodeToString(raw[:len(raw)-1]),
		"lengthened":  encoding.EncodeToString(append(append([]byte(nil), raw...), 0)),
		"not base64":  good[:10] + "!" + good[11:],
		"too long":    strings.Repeat("A", MaxToken+1),
		"unknown key": New([]keyring.Key{newKey}).Token(Link{OrderID: 42, Version: 2}),
		"forged key": New([]keyring.Key{{ID: "old", Secret: []byte("a guess at the secret, thirty-two bytes")}}).
			Token(Link{OrderID: 42, Version: 2}),
	}
	payload := raw[:len(raw)-macSize]
	other["other domain"] = encoding.EncodeToString(append(append([]byte(nil), payload...),
		keyring.MAC(oldKey.Secret, "boxoffice/verification/link/v1\x00", payload)...))
	zero := append([]byte{format}, binary.AppendUvarint(binary.AppendUvarint(nil, 0), 1)...)
	zero = append(append(zero, byte(len(oldKey.ID))), oldKey.ID...)
	other["order 0"] = encoding.EncodeToString(append(zero, keyring.MAC(oldKey.Secret, domain, zero)...))
	for name, tok := range other {
		if l, err := s.Parse(tok); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %+v, %v; want ErrInvalid", name, l, err)
		}
	}
}

// TestPath: the address carries the token, escaped, on the order's page or file.
func TestPath(t *testing.T) {
	t.Parallel()
	s := New([]keyring.Key{oldKey})
	l := Link{OrderID: 42, Version: 3}
	p := s.Path(l, "/tickets.pdf")
	u, err := url.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/orders/42/tickets.pdf" {
		t.Errorf("path: got %q, want /orders/42/tickets.pdf", u.Path)
	}
	if got, err := s.Parse(u.Query().Get(Param)); err != nil || got != l {
		t.Errorf("token in %q: got %+v, %v; want %+v", p, got, err, l)
	}
}
