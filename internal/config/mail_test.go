package config

import (
	"strings"
	"testing"
	"time"
)

// TestMailDefaults: no SMTP_URL logs mail; the sender, the links and the job settings
// have working defaults on a laptop.
func TestMailDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "ADDR": ":9000"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SMTP.Enabled() || c.MailFrom != DevMailFrom || c.BaseURL != "http://localhost:9000" {
		t.Errorf("got smtp %v, from %q, base %q; want none, the development sender, http://localhost:9000", c.SMTP, c.MailFrom, c.BaseURL)
	}
	if c.JobWorkers != 4 || c.ReconcileInterval != time.Minute {
		t.Errorf("got %d workers, reconcile every %s; want 4 and 1m", c.JobWorkers, c.ReconcileInterval)
	}
}

// TestParseSMTPURL: STARTTLS is required but to loopback or when waived, smtps is TLS
// from the start, and errors never repeat the password.
func TestParseSMTPURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		want SMTP
	}{
		{"smtp://127.0.0.1:1025", SMTP{Host: "127.0.0.1", Port: 1025}},
		{"smtp://localhost", SMTP{Host: "localhost", Port: 587}},
		{"smtp://mail.example.com", SMTP{Host: "mail.example.com", Port: 587, RequireTLS: true}},
		{"smtp://relay.internal:25?tls=optional", SMTP{Host: "relay.internal", Port: 25}},
		{"smtps://u%40x:p%3Ass@mail.example.com", SMTP{Host: "mail.example.com", Port: 465, ImplicitTLS: true, Username: "u@x", Password: "p:ss"}},
		{"smtp://u:pw@[::1]:2525", SMTP{Host: "::1", Port: 2525, Username: "u", Password: "pw"}},
	} {
		got, err := ParseSMTPURL(tc.url)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.url, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"http://mail.example.com", "scheme"},
		{"smtp://", "host"},
		{"smtp://mail.example.com:0", "port"},
		{"smtp://mail.example.com/x", "host"},
		{"smtps://mail.example.com?tls=optional", "tls"},
		{"smtp://mail.example.com?auth=plain", "query"},
		{"smtp://u:secretpw@relay.internal?tls=optional", "unencrypted"},
	} {
		_, err := ParseSMTPURL(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%s: got %v, want an error about %s without the password", tc.url, err, tc.want)
		}
	}
	s, _ := ParseSMTPURL("smtps://u:secretpw@mail.example.com")
	if str := s.String(); strings.Contains(str, "secretpw") || str != "smtps://u@mail.example.com:465" {
		t.Errorf("got %q, want smtps://u@mail.example.com:465", str)
	}
}

// TestMailRejects: bad mail settings are reported by name; a real server needs a
// sender of its own.
func TestMailRejects(t *testing.T) {
	t.Parallel()
	_, err := Load(env(map[string]string{
		"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "SMTP_URL": "smtp://mail.example.com",
		"BASE_URL": "tickets.example.com", "JOB_WORKERS": "0", "RECONCILE_INTERVAL": "10s",
	}))
	for _, name := range []string{"MAIL_FROM", "BASE_URL", "JOB_WORKERS", "RECONCILE_INTERVAL"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
	c, err := Load(env(map[string]string{
		"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "SMTP_URL": "smtp://mail.example.com",
		"MAIL_FROM": "Box office <tickets@example.com>", "BASE_URL": "https://tickets.example.com/", "BOXOFFICE_ENV": "development",
	}))
	if err != nil || c.MailFrom != `"Box office" <tickets@example.com>` || c.BaseURL != "https://tickets.example.com" {
		t.Errorf("got from %q base %q (%v), want them read and tidied", c.MailFrom, c.BaseURL, err)
	}
	if _, err := Load(env(map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://y", "MAIL_FROM": "nobody"})); err == nil || !strings.Contains(err.Error(), "MAIL_FROM") {
		t.Errorf("MAIL_FROM=nobody: got %v, want it refused", err)
	}
}
