package config

import (
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SMTP is the mail server that email goes through, read from SMTP_URL:
//
//	smtp://[user:password@]host[:port][?tls=optional]   STARTTLS, port 587 unless given
//	smtps://[user:password@]host[:port]                  TLS from the first byte, port 465
//
// STARTTLS is required, so that a man in the middle cannot strip it and read the
// tickets, unless the host is loopback (a local mail catcher such as mailpit speaks
// plain SMTP) or the URL says tls=optional (a relay on a trusted network); then it is
// used when the server offers it. A user and password are sent only over TLS, or to a
// loopback host.
//
// The zero value (no Host) is no server at all: email is written to the log instead of
// sent, which is what a checkout without SMTP_URL does.
type SMTP struct {
	Host        string
	Port        int
	ImplicitTLS bool // smtps://
	RequireTLS  bool // smtp:// to anything but loopback, unless tls=optional
	Username    string
	Password    string
}

// Enabled reports whether email is sent rather than logged.
func (s SMTP) Enabled() bool { return s.Host != "" }

// String names the server without its password, for logs.
func (s SMTP) String() string {
	if !s.Enabled() {
		return "none (email is noted in the log, not sent)"
	}
	scheme := "smtp"
	if s.ImplicitTLS {
		scheme = "smtps"
	}
	user := ""
	if s.Username != "" {
		user = url.User(s.Username).String() + "@"
	}
	return scheme + "://" + user + net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
}

// DevMailFrom is the sender used when MAIL_FROM is not set: fine for a local mail
// catcher, refused by real servers, so a non-loopback SMTP_URL requires MAIL_FROM.
const DevMailFrom = "boxoffice <tickets@localhost>"

// loadMail reads the mail and job settings into c and returns what is wrong with them.
// It runs after ADDR is read: BASE_URL defaults to the listening port.
func loadMail(c *Config, getenv func(string) string) []error {
	var errs []error
	smtp, err := ParseSMTPURL(getenv("SMTP_URL"))
	if err != nil {
		errs = append(errs, fmt.Errorf("SMTP_URL: %w", err)) // never the URL: it may hold a password
	}
	c.SMTP = smtp

	c.MailFrom = getenv("MAIL_FROM")
	switch {
	case c.MailFrom == "" && smtp.Enabled() && !isLoopback(smtp.Host):
		errs = append(errs, errors.New("MAIL_FROM is not set: a real mail server needs a sender of your own domain, e.g. \"Box office <tickets@example.com>\""))
	case c.MailFrom == "":
		c.MailFrom = DevMailFrom
	default:
		if a, err := mail.ParseAddress(c.MailFrom); err != nil {
			errs = append(errs, fmt.Errorf("MAIL_FROM=%q: want an address such as \"Box office <tickets@example.com>\"", c.MailFrom))
		} else {
			c.MailFrom = a.String()
		}
	}

	c.BaseURL = strings.TrimRight(getenv("BASE_URL"), "/")
	if c.BaseURL == "" {
		_, port, _ := net.SplitHostPort(c.Addr)
		c.BaseURL = "http://localhost:" + port
	} else if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") ||
		u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		errs = append(errs, fmt.Errorf("BASE_URL=%q: want the site's address, such as https://tickets.example.com", c.BaseURL))
	}

	// River's periodic jobs are meant for a minute and up; sub-minute work is a ticker.
	if c.ReconcileInterval > 0 && c.ReconcileInterval < time.Minute {
		errs = append(errs, fmt.Errorf("RECONCILE_INTERVAL=%s: want a minute or more", c.ReconcileInterval))
	}
	return errs
}

// ParseSMTPURL reads SMTP_URL (see SMTP); "" is no server. Its errors never repeat
// the URL, which may hold a password.
func ParseSMTPURL(v string) (SMTP, error) {
	if v == "" {
		return SMTP{}, nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return SMTP{}, errors.New("want smtp://[user:password@]host[:port] or smtps://…")
	}
	s := SMTP{Host: u.Hostname()}
	switch u.Scheme {
	case "smtp":
		s.Port = 587
	case "smtps":
		s.Port, s.ImplicitTLS = 465, true
	default:
		return SMTP{}, fmt.Errorf("scheme %q: want smtp or smtps", u.Scheme)
	}
	if s.Host == "" || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return SMTP{}, errors.New("want smtp://[user:password@]host[:port] or smtps://…")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return SMTP{}, fmt.Errorf("port %q: want 1 to 65535", p)
		}
		s.Port = n
	}
	q := u.Query()
	optional := false
	switch tls := q.Get("tls"); {
	case len(q) > 1 || (len(q) == 1 && !q.Has("tls")):
		return SMTP{}, errors.New("the only setting in the query is tls=optional")
	case tls == "optional" && !s.ImplicitTLS:
		optional = true
	case q.Has("tls"):
		return SMTP{}, fmt.Errorf("tls=%q: the only choice is tls=optional, on smtp://", tls)
	}
	s.RequireTLS = !s.ImplicitTLS && !optional && !isLoopback(s.Host)
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
		if !s.ImplicitTLS && !s.RequireTLS && !isLoopback(s.Host) {
			return SMTP{}, errors.New("a password with tls=optional could travel unencrypted: use smtps:// or STARTTLS")
		}
	}
	return s, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
