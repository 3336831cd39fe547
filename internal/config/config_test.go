package config

import (
	"log/slog"
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
	if c.Addr != ":8080" || c.MetricsAddr != "" || c.HoldTTL != 10*time.Minute || c.MaxPerBuyer != 10 || c.DBMaxConns != 16 {
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
		"LOG_FORMAT": "xml", "LOG_LEVEL": "loud", "ADDR": "8080", "PAYMENT_WEBHOOK_URL": "/relative", "TRUSTED_PROXIES": "203.0.113.0/24, edge",
		"METRICS_ADDR": "9091",
	}))
	if err == nil {
		t.Fatal("got no error, want one per bad setting")
	}
	for _, name := range []string{"DATABASE_URL", "REDIS_URL", "HOLD_TTL", "MAX_SEATS_PER_BUYER", "DB_MAX_CONNS",
		"COOKIE_SECURE", "LOG_FORMAT", "LOG_LEVEL", "ADDR", "PAYMENT_WEBHOOK_URL", "TRUSTED_PROXIES", "METRICS_ADDR"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

// TestLogLevel: LOG_LEVEL names the least level logged, info when unset.
func TestLogLevel(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]slog.Level{"": slog.LevelInfo, "debug": slog.LevelDebug, "WARN": slog.LevelWarn, "error": slog.LevelError} {
		c, err := Load(env(map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://x", "LOG_LEVEL": v}))
		if err != nil || c.LogLevel != want {
			t.Errorf("LOG_LEVEL=%q: got %v (%v), want %v", v, c.LogLevel, err, want)
		}
	}
}

// TestMetricsAddr: metrics get a listener of their own, or none.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://x", "ADDR": "127.0.0.1:8080"}
	with := func(v string) map[string]string {
		m := map[string]string{"METRICS_ADDR": v}
		for k, x := range base {
			m[k] = x
		}
		return m
	}
	c, err := Load(env(with("127.0.0.1:9091")))
	if err != nil || c.MetricsAddr != "127.0.0.1:9091" {
		t.Errorf("got %q, %v, want 127.0.0.1:9091", c.MetricsAddr, err)
	}
	for _, bad := range []string{"9091", "127.0.0.1:8080"} {
		if _, err := Load(env(with(bad))); err == nil || !strings.Contains(err.Error(), "METRICS_ADDR") {
			t.Errorf("METRICS_ADDR=%q: got %v, want an error naming METRICS_ADDR", bad, err)
		}
	}
}

// TestTrustedProxies: a comma-separated list of networks, spaces allowed.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{
		"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://x", "TRUSTED_PROXIES": "203.0.113.0/24, 2001:db8::/32",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TrustedProxies) != 2 || c.TrustedProxies[0].String() != "203.0.113.0/24" || c.TrustedProxies[1].String() != "2001:db8::/32" {
		t.Errorf("got %v, want the two networks", c.TrustedProxies)
	}
}

// TestAdmissionKeys: the first key signs and the rest verify; the development key
// stands in when none is set; bad lists are refused by name, never echoing a secret.
func TestAdmissionKeys(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}
	c, err := Load(env(base))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AdmissionKeys) != 1 || c.AdmissionKeys[0].ID != "dev" || len(c.AdmissionKeys[0].Secret) < 32 {
		t.Errorf("default keys: got %+v, want the one development key", c.AdmissionKeys)
	}
	if c.RateLimit != 10 || c.RateBurst != 20 {
		t.Errorf("rate limit: got %d/s burst %d, want 10/s burst 20", c.RateLimit, c.RateBurst)
	}
	long := strings.Repeat("s", 32)
	keys, err := ParseAdmissionKeys("k2:" + long + "2, k1:" + long + "1")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].ID != "k2" || string(keys[0].Secret) != long+"2" || keys[1].ID != "k1" {
		t.Errorf("got %+v, want k2 then k1 in the order given", keys)
	}
	for _, tc := range []struct{ name, v, want string }{
		{"short secret", "k:tooshort", "at least 32"},
		{"no kid", ":" + long, "kid"},
		{"no colon", long, "kid"},
		{"odd kid", "k y:" + long, "kid"},
		{"twice", "k:" + long + ",k:" + long + "x", "twice"},
		{"empty entry", "k:" + long + ",", "key 2"},
	} {
		_, err := ParseAdmissionKeys(tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), long) {
			t.Errorf("%s: error %q repeats the secret", tc.name, err)
		}
	}
	bad := map[string]string{"ADMISSION_KEYS": "k:short", "RATE_LIMIT": "0", "RATE_BURST": "x"}
	for k, v := range base {
		bad[k] = v
	}
	_, err = Load(env(bad))
	for _, name := range []string{"ADMISSION_KEYS", "RATE_LIMIT", "RATE_BURST"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestPaymentProvider(t *testing.T) {
	t.Parallel()
	base := func(kv ...string) map[string]string {
		m := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := Load(env(base()))
	if err != nil || c.PaymentProvider != ProviderTest || c.StripeSecretKey != "" || c.StripeAPIURL != "" {
		t.Fatalf("default: %+v, %v; want the test provider", c, err)
	}
	c, err = Load(env(base("PAYMENT_PROVIDER", "stripe", "STRIPE_SECRET_KEY", "sk_test_x",
		"PAYMENT_WEBHOOK_SECRET", "whsec_x", "STRIPE_API_URL", "http://127.0.0.1:12111")))
	if err != nil {
		t.Fatal(err)
	}
	if c.PaymentProvider != ProviderStripe || c.StripeSecretKey != "sk_test_x" || c.StripeAPIURL != "http://127.0.0.1:12111" || c.WebhookSecret != "whsec_x" {
		t.Fatalf("stripe: %+v", c)
	}
	for _, tc := range []struct {
		m    map[string]string
		want string
	}{
		{base("PAYMENT_PROVIDER", "paypal"), "PAYMENT_PROVIDER"},
		{base("PAYMENT_PROVIDER", "stripe", "PAYMENT_WEBHOOK_SECRET", "whsec_x"), "STRIPE_SECRET_KEY"},
		{base("PAYMENT_PROVIDER", "stripe", "STRIPE_SECRET_KEY", "sk_test_x"), "PAYMENT_WEBHOOK_SECRET"},
		{base("STRIPE_API_URL", "localhost"), "STRIPE_API_URL"},
	} {
		_, err := Load(env(tc.m))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v) = %v, want an error naming %s", tc.m, err, tc.want)
		}
	}
}

// TestMoneySettings: how long a payment waits for its webhook before it is looked up,
// and how long Idempotency-Key answers are kept, with their defaults and bounds.
func TestMoneySettings(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := Load(env(base))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReconcileAfter != 3*time.Minute || c.IdempotencyTTL != 24*time.Hour {
		t.Errorf("defaults: got %s and %s, want 3m and 24h", c.ReconcileAfter, c.IdempotencyTTL)
	}
	c, err = Load(env(with("RECONCILE_AFTER", "10m", "IDEMPOTENCY_TTL", "1h")))
	if err != nil || c.ReconcileAfter != 10*time.Minute || c.IdempotencyTTL != time.Hour {
		t.Errorf("set: got %s and %s (%v), want 10m and 1h", c.ReconcileAfter, c.IdempotencyTTL, err)
	}
	for _, tc := range []struct{ name, value, want string }{
		{"RECONCILE_AFTER", "soon", "want a duration"},
		{"RECONCILE_AFTER", "-3m", "want a duration"},
		{"RECONCILE_AFTER", "0s", "want a duration"},
		{"RECONCILE_AFTER", "20s", "want 1m0s or more"},
		{"IDEMPOTENCY_TTL", "1d", "want a duration"},
		{"IDEMPOTENCY_TTL", "30s", "want 1m0s or more"},
	} {
		_, err := Load(env(with(tc.name, tc.value)))
		if err == nil || !strings.Contains(err.Error(), tc.name+"=") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: got %v, want an error naming it: %q", tc.name, tc.value, err, tc.want)
		}
	}
	// The bounds themselves are allowed.
	if _, err := Load(env(with("RECONCILE_AFTER", "1m", "IDEMPOTENCY_TTL", "1m"))); err != nil {
		t.Errorf("at the bounds: got %v, want none", err)
	}
}

// TestDurationsOrOff: the settings that take a duration or "off" (the waiting rooms'
// latency bound, the confirmations' wait for a busy sale), their defaults, "off", and
// a clear error for anything else that is not a positive duration.
func TestDurationsOrOff(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}
	for _, s := range []struct {
		name string
		def  time.Duration
		got  func(Config) time.Duration
	}{
		{"LATENCY_BOUND", DefaultLatencyBound, func(c Config) time.Duration { return c.LatencyBound }},
		{"EMAIL_WAIT", 5 * time.Minute, func(c Config) time.Duration { return c.EmailWait }},
	} {
		for _, tc := range []struct {
			value string
			want  time.Duration
		}{{"", s.def}, {"400ms", 400 * time.Millisecond}, {"off", 0}} {
			m := map[string]string{s.name: tc.value}
			for k, v := range base {
				m[k] = v
			}
			c, err := Load(env(m))
			if err != nil || s.got(c) != tc.want {
				t.Errorf("%s=%q: got %v (%v), want %v", s.name, tc.value, s.got(c), err, tc.want)
			}
		}
		for _, v := range []string{"0", "-1s", "fast", "OFF"} {
			m := map[string]string{s.name: v}
			for k, v := range base {
				m[k] = v
			}
			if _, err := Load(env(m)); err == nil || !strings.Contains(err.Error(), s.name+"=") {
				t.Errorf("%s=%q: got %v, want an error naming it", s.name, v, err)
			}
		}
	}
}

// TestEmailSaleRate: the confirmations' pace in a sale, 20 a second by default, "off"
// for none, and a clear error for anything but a positive whole number.
func TestEmailSaleRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  int
	}{{"", 20}, {"5", 5}, {"off", 0}} {
		c, err := Load(env(map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "EMAIL_SALE_RATE": tc.value}))
		if err != nil || c.EmailSaleRate != tc.want {
			t.Errorf("EMAIL_SALE_RATE=%q: got %d (%v), want %d", tc.value, c.EmailSaleRate, err, tc.want)
		}
	}
	for _, v := range []string{"0", "-3", "2.5", "fast"} {
		_, err := Load(env(map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "EMAIL_SALE_RATE": v}))
		if err == nil || !strings.Contains(err.Error(), "EMAIL_SALE_RATE=") {
			t.Errorf("EMAIL_SALE_RATE=%q: got %v, want an error naming it", v, err)
		}
	}
}
