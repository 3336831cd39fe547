// Package clientnet names the network a client address counts under, for every limit
// kept per client (holds, sessions, joins, streams, staff logins): an IPv4 address
// (or one mapped into IPv6) by itself, an IPv6 address by its /64 — one subscriber's
// whole allocation, which it can rotate through at will. It imports nothing of
// boxoffice.
package clientnet

import (
	"net/netip"
	"strings"
)

// maxOther bounds what is kept of an address that does not parse, which a client may
// have written itself: a key is never longer than this.
const maxOther = 64

// Key is the network address counts under: "192.0.2.7", "2001:db8:1:2::/64". Anything
// that is not an IP address is kept as given (trimmed, cut to 64 bytes): it can only
// count against itself.
func Key(address string) string {
	address = strings.TrimSpace(address)
	ip, err := netip.ParseAddr(address)
	if err != nil {
		if len(address) > maxOther {
			address = address[:maxOther]
		}
		return address
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64) // cannot fail for 64 on an IPv6 address
	return p.String()
}
