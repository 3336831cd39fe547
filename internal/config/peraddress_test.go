package config

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestPerAddress: each limit per client address has its default, takes a positive
// whole number or "off", and names itself when wrong; the seats held at once cannot be
// fewer than one buyer may hold.
func TestPerAddress(t *testing.T) {
	t.Parallel()
	load := func(kv ...string) (Config, error) {
		m := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return Load(env(m))
	}
	c, err := load()
	want := PerAddress{SessionsPerHour: 120, JoinsPerHour: 120, HoldsPerMinute: 120, CodesPerHour: 30, SeatsHeld: 40}
	if err != nil || c.PerAddress != want {
		t.Errorf("defaults: got %+v (%v), want %+v", c.PerAddress, err, want)
	}
	fields := map[string]func(PerAddress) int{
		"ADDRESS_SESSIONS_PER_HOUR": func(p PerAddress) int { return p.SessionsPerHour },
		"ADDRESS_JOINS_PER_HOUR":    func(p PerAddress) int { return p.JoinsPerHour },
		"ADDRESS_HOLDS_PER_MINUTE":  func(p PerAddress) int { return p.HoldsPerMinute },
		"ADDRESS_SEATS_HELD":        func(p PerAddress) int { return p.SeatsHeld },
		"ADDRESS_CODES_PER_HOUR":    func(p PerAddress) int { return p.CodesPerHour },
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		get := fields[name]
		for v, want := range map[string]int{"25": 25, "off": 0} {
			c, err := load(name, v)
			if err != nil || get(c.PerAddress) != want {
				t.Errorf("%s=%q: got %d (%v), want %d", name, v, get(c.PerAddress), err, want)
			}
		}
		for _, v := range []string{"0", "-3", "many", "OFF"} {
			if _, err := load(name, v); err == nil || !strings.Contains(err.Error(), name+"=") {
				t.Errorf("%s=%q: got %v, want an error naming it", name, v, err)
			}
		}
	}
	if _, err := load("ADDRESS_SEATS_HELD", "6", "MAX_SEATS_PER_BUYER", "8"); err == nil || !strings.Contains(err.Error(), "MAX_SEATS_PER_BUYER") {
		t.Errorf("6 seats per address, 8 per buyer: got %v, want an error naming both", err)
	}
	if c, err := load("ADDRESS_SEATS_HELD", "off", "MAX_SEATS_PER_BUYER", "8"); err != nil || c.PerAddress.SeatsHeld != 0 {
		t.Errorf("off with 8 per buyer: got %d (%v), want 0 and no error", c.PerAddress.SeatsHeld, err)
	}
}
