// Package config reads boxoffice's settings from the environment, once, at start.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"
)

// Config is every setting, typed and validated.
type Config struct {
	Addr            string        // ADDR: where to listen
	DatabaseURL     string        // DATABASE_URL
	RedisURL        string        // REDIS_URL
	RedisPrefix     string        // REDIS_PREFIX: before every Redis key and channel
	DBMaxConns      int32         // DB_MAX_CONNS: pool size; about 4 per core is the sweet spot
	HoldTTL         time.Duration // HOLD_TTL
	MaxPerBuyer     int           // MAX_SEATS_PER_BUYER: per event, held or bought
	TidyInterval    time.Duration // TIDY_INTERVAL: how often lapsed holds are cleared
	CookieSecure    bool          // COOKIE_SECURE: send cookies over HTTPS only
	WebhookSecret   string        // PAYMENT_WEBHOOK_SECRET
	WebhookURL      string        // PAYMENT_WEBHOOK_URL: where the test provider posts
	PaymentDelivery string        // PAYMENT_DELIVERY: the test provider's default delivery
	PaymentLate     time.Duration // PAYMENT_LATE_DELAY
	LogFormat       string        // LOG_FORMAT: json or text
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT
}

// DevWebhookSecret is the webhook secret used when none is configured.
const DevWebhookSecret = "whsec_boxoffice_development_only"

// Load reads the configuration through getenv.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:            or(getenv("ADDR"), ":8080"),
		DatabaseURL:     getenv("DATABASE_URL"),
		RedisURL:        getenv("REDIS_URL"),
		RedisPrefix:     or(getenv("REDIS_PREFIX"), "boxoffice:"),
		WebhookSecret:   or(getenv("PAYMENT_WEBHOOK_SECRET"), DevWebhookSecret),
		WebhookURL:      getenv("PAYMENT_WEBHOOK_URL"),
		PaymentDelivery: getenv("PAYMENT_DELIVERY"),
		LogFormat:       or(getenv("LOG_FORMAT"), "text"),
	}
	var errs []error
	num := func(name string, def int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive whole number", name, v))
		}
		return n
	}
	dur := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a duration such as 10m or 500ms", name, v))
		}
		return d
	}
	c.DBMaxConns = int32(num("DB_MAX_CONNS", 16))
	c.MaxPerBuyer = num("MAX_SEATS_PER_BUYER", 10)
	c.HoldTTL = dur("HOLD_TTL", 10*time.Minute)
	c.TidyInterval = dur("TIDY_INTERVAL", 2*time.Second)
	c.PaymentLate = dur("PAYMENT_LATE_DELAY", 3*time.Second)
	c.ShutdownTimeout = dur("SHUTDOWN_TIMEOUT", 10*time.Second)
	if v := getenv("COOKIE_SECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("COOKIE_SECURE=%q: want true or false", v))
		}
		c.CookieSecure = b
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is not set (make run sets it up)"))
	}
	if c.RedisURL == "" {
		errs = append(errs, errors.New("REDIS_URL is not set (make run sets it up)"))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("LOG_FORMAT=%q: want json or text", c.LogFormat))
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("ADDR=%q: want host:port or :port", c.Addr))
	}
	if c.WebhookURL == "" {
		_, port, _ := net.SplitHostPort(c.Addr)
		c.WebhookURL = "http://127.0.0.1:" + port + "/api/v1/payments/webhook"
	} else if u, err := url.Parse(c.WebhookURL); err != nil || u.Host == "" {
		errs = append(errs, fmt.Errorf("PAYMENT_WEBHOOK_URL=%q: want an absolute URL", c.WebhookURL))
	}
	return c, errors.Join(errs...)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
