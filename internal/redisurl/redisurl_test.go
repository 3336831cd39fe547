package redisurl

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw     string
		cluster bool
		addrs   []string
	}{
		{"redis://127.0.0.1:6379/0", false, []string{"127.0.0.1:6379"}},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", true,
			[]string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7000&dial_timeout=2", true, []string{"127.0.0.1:7000", "127.0.0.1:7000"}},
	} {
		c, err := Open(tc.raw)
		if err != nil {
			t.Fatalf("Open(%q): %v", tc.raw, err)
		}
		switch cl := c.(type) {
		case *redis.ClusterClient:
			if !tc.cluster {
				t.Errorf("Open(%q) is a cluster client, want one server", tc.raw)
			}
			if got := cl.Options().Addrs; len(got) != len(tc.addrs) || got[0] != tc.addrs[0] || got[len(got)-1] != tc.addrs[len(tc.addrs)-1] {
				t.Errorf("Open(%q) seeds %v, want %v", tc.raw, got, tc.addrs)
			}
			if !cl.Options().ContextTimeoutEnabled {
				t.Errorf("Open(%q): calls do not end at their context's deadline", tc.raw)
			}
		case *redis.Client:
			if tc.cluster {
				t.Errorf("Open(%q) is one server's client, want a cluster client", tc.raw)
			}
			if got := cl.Options().Addr; got != tc.addrs[0] {
				t.Errorf("Open(%q) addr %s, want %s", tc.raw, got, tc.addrs[0])
			}
			if !cl.Options().ContextTimeoutEnabled {
				t.Errorf("Open(%q): calls do not end at their context's deadline", tc.raw)
			}
		}
		_ = c.Close()
	}
	for _, bad := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:7000?addr=127.0.0.1:7001&nope=1", "redis://%zz"} {
		if c, err := Open(bad); err == nil {
			_ = c.Close()
			t.Errorf("Open(%q) = nil error, want one", bad)
		}
	}
}
