package config

import (
	"strings"
	"testing"
	"time"
)

// TestRefundKeyWindow: an hour by default, set by REFUND_KEY_WINDOW, and refused
// beyond the provider's own window or when not a positive duration.
func TestRefundKeyWindow(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}
	load := func(v string) (Config, error) {
		m := map[string]string{"REFUND_KEY_WINDOW": v}
		for k, x := range base {
			m[k] = x
		}
		return Load(env(m))
	}
	if c, err := load(""); err != nil || c.RefundKeyWindow != time.Hour {
		t.Errorf("default: got %s, %v; want 1h", c.RefundKeyWindow, err)
	}
	if c, err := load("20h"); err != nil || c.RefundKeyWindow != 20*time.Hour {
		t.Errorf("set: got %s, %v; want 20h", c.RefundKeyWindow, err)
	}
	for _, bad := range []string{"25h", "0s", "-1h", "soon"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "REFUND_KEY_WINDOW") {
			t.Errorf("REFUND_KEY_WINDOW=%s: got %v, want an error naming it", bad, err)
		}
	}
}
