package keyring

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// TestMACsMatchMAC: the reused keyed states make the MAC that MAC makes, message after
// message and from many goroutines at once (a state handed back dirty would differ),
// and another secret or domain makes another.
func TestMACsMatchMAC(t *testing.T) {
	secret, domain := []byte("s3cret"), "test/domain\x00"
	m := NewMACs(secret, domain)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				msg := []byte(fmt.Sprintf("message %d of %d", i, g))
				want := MAC(secret, domain, msg)
				got := m.Append([]byte("prefix"), msg)
				if !bytes.Equal(got[:6], []byte("prefix")) || !bytes.Equal(got[6:], want) {
					t.Errorf("Append(%q) = %x, want prefix then %x", msg, got, want)
					return
				}
				if !m.Equal(want, msg) {
					t.Errorf("Equal(MAC, %q) = false, want true", msg)
					return
				}
			}
		})
	}
	wg.Wait()
	msg := []byte("one message")
	for name, other := range map[string]*MACs{"secret": NewMACs([]byte("other"), domain), "domain": NewMACs(secret, "other\x00")} {
		if other.Equal(MAC(secret, domain, msg), msg) {
			t.Errorf("another %s: Equal = true, want false", name)
		}
	}
}
