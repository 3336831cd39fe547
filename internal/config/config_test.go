package config

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.HoldTTL != 10*time.Minute || c.MaxPerBuyer != 10 || c.DBMaxConns != 16 {
		t.Errorf("got %+v, want the documented defaults", c)
	}
	if c.WebhookURL != "http://127.0.0.1:8080/api/v1/payments/webhook" {
		t.Errorf("webhook URL: got %q, want it on the listening port", c.WebhookURL)
	}
}

// TestLoadRejects: every bad setting is reported at once, by name.
func TestLoadRejects(t *testing.T) {
	t.Parallel()
	_, err := Load(env(map[string]string{
		"HOLD_TTL": "soon", "MAX_SEATS_PER_BUYER": "-1", "DB_MAX_CONNS": "x", "COOKIE_SECURE": "maybe",
		"LOG_FORMAT": "xml", "ADDR": "8080", "PAYMENT_WEBHOOK_URL": "/relative",
	}))
	if err == nil {
		t.Fatal("got no error, want one per bad setting")
	}
	for _, name := range []string{"DATABASE_URL", "REDIS_URL", "HOLD_TTL", "MAX_SEATS_PER_BUYER", "DB_MAX_CONNS",
		"COOKIE_SECURE", "LOG_FORMAT", "ADDR", "PAYMENT_WEBHOOK_URL"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}
