package config

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

// prodEnv is a production configuration that starts, with kv on top ("" unsets).
func prodEnv(kv ...string) map[string]string {
	m := map[string]string{
		"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "BOXOFFICE_ENV": "production",
		"PAYMENT_PROVIDER": "stripe", "STRIPE_SECRET_KEY": "sk_live_x", "PAYMENT_WEBHOOK_SECRET": "whsec_live_x",
		"ADMISSION_KEYS": "k1:" + strings.Repeat("s", 32),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

// TestProductionStarts: a production configuration with its own secrets, a real
// provider and the defaults starts, with secure cookies and JSON logs.
func TestProductionStarts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"stated", prodEnv()},
		{"https BASE_URL", prodEnv("BOXOFFICE_ENV", "", "BASE_URL", "https://tickets.example.com")},
		{"staging with test payments", prodEnv("PAYMENT_PROVIDER", "test", "ALLOW_TEST_PAYMENTS", "staging")},
		{"metrics on loopback", prodEnv("METRICS_ADDR", "127.0.0.1:9091")},
		{"metrics on IPv6 loopback", prodEnv("METRICS_ADDR", "[::1]:9091")},
		{"public metrics with a reason", prodEnv("METRICS_ADDR", ":9091", "METRICS_PUBLIC_REASON", "a private network, firewalled")},
	} {
		c, err := Load(env(tc.env))
		if err != nil {
			t.Errorf("%s: got %v, want it to start", tc.name, err)
			continue
		}
		if !c.Production() || !c.CookieSecure || c.LogFormat != "json" {
			t.Errorf("%s: got env %q, secure cookies %v, logs %s; want production, true, json", tc.name, c.Env, c.CookieSecure, c.LogFormat)
		}
	}
}

// TestProductionRefuses: each unsafe setting alone keeps production from starting,
// with an error that names it; together they are all named in one error.
func TestProductionRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"development webhook secret", prodEnv("PAYMENT_WEBHOOK_SECRET", DevWebhookSecret), "PAYMENT_WEBHOOK_SECRET"},
		{"webhook secret unset (test provider)", prodEnv("PAYMENT_PROVIDER", "test", "ALLOW_TEST_PAYMENTS", "staging", "PAYMENT_WEBHOOK_SECRET", ""), "PAYMENT_WEBHOOK_SECRET"},
		{"admission keys unset", prodEnv("ADMISSION_KEYS", ""), "ADMISSION_KEYS"},
		{"development key among others", prodEnv("ADMISSION_KEYS", "k1:"+strings.Repeat("s", 32)+","+DevAdmissionKeys), "ADMISSION_KEYS"},
		{"development key renamed", prodEnv("ADMISSION_KEYS", "mine"+strings.TrimPrefix(DevAdmissionKeys, "dev")), "ADMISSION_KEYS"},
		{"payment provider unset", prodEnv("PAYMENT_PROVIDER", "", "STRIPE_SECRET_KEY", ""), "PAYMENT_PROVIDER is not set"},
		{"test provider", prodEnv("PAYMENT_PROVIDER", "test"), "PAYMENT_PROVIDER=test"},
		{"insecure cookies", prodEnv("COOKIE_SECURE", "false"), "COOKIE_SECURE"},
		{"metrics on every interface", prodEnv("METRICS_ADDR", ":9091"), "METRICS_ADDR"},
		{"metrics on a public address", prodEnv("METRICS_ADDR", "203.0.113.7:9091"), "METRICS_ADDR"},
		{"metrics on a host name", prodEnv("METRICS_ADDR", "metrics.internal:9091"), "METRICS_ADDR"},
		{"metrics with a blank reason", prodEnv("METRICS_ADDR", "0.0.0.0:9091", "METRICS_PUBLIC_REASON", "  "), "METRICS_ADDR"},
		{"inferred from https", prodEnv("BOXOFFICE_ENV", "", "BASE_URL", "https://tickets.example.com", "COOKIE_SECURE", "false"), "BASE_URL is https"},
		{"unknown environment", prodEnv("BOXOFFICE_ENV", "prod"), "BOXOFFICE_ENV"},
		{"unknown staging word", prodEnv("ALLOW_TEST_PAYMENTS", "yes"), "ALLOW_TEST_PAYMENTS"},
	} {
		_, err := Load(env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %s", tc.name, err, tc.want)
		}
	}

	all := prodEnv("PAYMENT_WEBHOOK_SECRET", "", "ADMISSION_KEYS", "", "PAYMENT_PROVIDER", "", "STRIPE_SECRET_KEY", "",
		"COOKIE_SECURE", "0", "METRICS_ADDR", ":9091")
	_, err := Load(env(all))
	var pe *ProductionError
	if !errors.As(err, &pe) || len(pe.Refused) != 5 {
		t.Fatalf("everything unsafe: got %v, want one production error with 5 refusals", err)
	}
	for _, name := range []string{"PAYMENT_WEBHOOK_SECRET", "ADMISSION_KEYS", "PAYMENT_PROVIDER", "COOKIE_SECURE", "METRICS_ADDR"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if strings.Contains(err.Error(), strings.TrimPrefix(DevAdmissionKeys, "dev:")) {
		t.Errorf("error %q repeats the development secret", err)
	}
}

// TestDevelopmentAllows: the same unsafe settings start in development, stated or
// overriding an https BASE_URL, and the development secrets are named for serve's
// warnings; the cookies stay as set.
func TestDevelopmentAllows(t *testing.T) {
	t.Parallel()
	unsafe := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "METRICS_ADDR": ":9091"}
	for _, extra := range []map[string]string{
		{},
		{"BOXOFFICE_ENV": "development", "BASE_URL": "https://tickets.example.com"},
	} {
		m := maps.Clone(unsafe)
		maps.Copy(m, extra)
		c, err := Load(env(m))
		if err != nil {
			t.Errorf("%v: got %v, want it to start", extra, err)
			continue
		}
		if c.Production() || c.CookieSecure || c.LogFormat != "text" || c.PaymentProvider != ProviderTest {
			t.Errorf("%v: got %+v, want development with its defaults", extra, c)
		}
		if got := strings.Join(c.DevSecrets(), ","); got != "PAYMENT_WEBHOOK_SECRET,ADMISSION_KEYS" {
			t.Errorf("development secrets: got %q, want both named", got)
		}
	}
}

// TestServerLimits: the listeners' and streams' limits, their defaults, and what is
// refused.
func TestServerLimits(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y"}
	c, err := Load(env(base))
	if err != nil {
		t.Fatal(err)
	}
	want := HTTPLimits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	if c.HTTP != want || c.Streams != (StreamLimits{PerSession: 6, PerAddress: 64, Max: 10_000}) {
		t.Errorf("defaults: got %+v %+v", c.HTTP, c.Streams)
	}
	m := maps.Clone(base)
	maps.Copy(m, map[string]string{"READ_HEADER_TIMEOUT": "1s", "READ_TIMEOUT": "20s", "IDLE_TIMEOUT": "30s",
		"MAX_HEADER_BYTES": "8192", "STREAMS_PER_SESSION": "2", "STREAMS_PER_ADDRESS": "10", "STREAMS_MAX": "500"})
	c, err = Load(env(m))
	want = HTTPLimits{ReadHeaderTimeout: time.Second, ReadTimeout: 20 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 8192}
	if err != nil || c.HTTP != want || c.Streams != (StreamLimits{PerSession: 2, PerAddress: 10, Max: 500}) {
		t.Errorf("set: got %+v %+v (%v)", c.HTTP, c.Streams, err)
	}
	for _, tc := range []struct{ name, value, want string }{
		{"READ_HEADER_TIMEOUT", "0", "READ_HEADER_TIMEOUT="},
		{"READ_TIMEOUT", "2s", "shorter than READ_HEADER_TIMEOUT"},
		{"IDLE_TIMEOUT", "forever", "IDLE_TIMEOUT="},
		{"MAX_HEADER_BYTES", "100", "want 4096 or more"},
		{"STREAMS_PER_SESSION", "0", "STREAMS_PER_SESSION="},
		{"STREAMS_PER_ADDRESS", "-1", "STREAMS_PER_ADDRESS="},
		{"STREAMS_MAX", "many", "STREAMS_MAX="},
	} {
		m := maps.Clone(base)
		m[tc.name] = tc.value
		if _, err := Load(env(m)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: got %v, want an error saying %q", tc.name, tc.value, err, tc.want)
		}
	}
}
