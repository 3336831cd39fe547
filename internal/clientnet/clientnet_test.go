package clientnet

import (
	"strings"
	"testing"
)

// TestKey: IPv6 counts per /64, IPv4 (also mapped into IPv6) per address, anything
// else as itself and bounded.
func TestKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"203.0.113.7":                      "203.0.113.7",
		"::ffff:203.0.113.7":               "203.0.113.7",
		"2001:db8:1:2:3:4:5:6":             "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff:ffff:ffff": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":                  "2001:db8:1:3::/64",
		"2001:DB8:1:2::1":                  "2001:db8:1:2::/64",
		" 2001:db8:1:2:aaaa::bbbb ":        "2001:db8:1:2::/64",
		"fe80::1%eth0":                     "fe80::/64",
		"::1":                              "::/64",
		"not an address":                   "not an address",
		strings.Repeat("x", 100):           strings.Repeat("x", 64),
	} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q): got %q, want %q", in, got, want)
		}
	}
}
