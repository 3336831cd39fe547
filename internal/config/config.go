// Package config reads boxoffice's settings from the environment, once, at start.
//
// It imports only the standard library. No other package reads the environment: each
// gets its settings as values, through the composition root.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"boxoffice/internal/keyring"
	"boxoffice/internal/money"
)

// Config is every setting, typed and validated.
type Config struct {
	Addr            string        // ADDR: where to listen
	MetricsAddr     string        // METRICS_ADDR: /metrics, on a listener of its own, never the public one; empty: none
	DatabaseURL     string        // DATABASE_URL
	DB              Database      // DATABASE_POOLER, DATABASE_EXEC_MODE, DATABASE_MIGRATE_URL, DATABASE_REPLICA_*: database.go
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
	// PaymentProvider is who takes the money (PAYMENT_PROVIDER): "test", the built-in
	// test provider (the default in development; production must name it), or "stripe".
	PaymentProvider string
	StripeSecretKey string // STRIPE_SECRET_KEY: required with PAYMENT_PROVIDER=stripe
	StripeAPIURL    string // STRIPE_API_URL: Stripe's API address, for a local fake; empty is Stripe's own
	LogFormat       string // LOG_FORMAT: json or text
	// LogLevel is the least level logged (LOG_LEVEL: debug, info, warn or error, as
	// slog.Level reads them): debug adds each answered place call of the crowd's
	// arrivals, which the HTTP metrics count anyway.
	LogLevel        slog.Level
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT
	// AdmissionKeys sign and verify the waiting room's admission tokens
	// (ADMISSION_KEYS, "kid:secret,kid:secret"): the first signs, the others only
	// verify, so that a key can be rotated without turning admitted buyers away.
	AdmissionKeys []AdmissionKey
	// RateLimit and RateBurst bound each buyer's seat-selection calls per second,
	// across all instances (RATE_LIMIT, RATE_BURST).
	RateLimit int
	RateBurst int
	// PerAddress bounds what one client address (an IPv6 /64, or an IPv4 address) may
	// do, across all instances (ADDRESS_*; "off": 0, no limit).
	PerAddress PerAddress
	// TrustedProxies are the networks (CIDR) of proxies in front whose
	// X-Forwarded-For entries name the client (TRUSTED_PROXIES): a public CDN's edge
	// addresses, or the private network of a load balancer. Loopback is always
	// trusted; private networks only when listed, since any neighbour on one could
	// otherwise name itself any address.
	TrustedProxies []*net.IPNet
	// StaffIdleTimeout ends a staff session unused for that long
	// (STAFF_IDLE_TIMEOUT); StaffLifetime ends it however busy (STAFF_SESSION_LIFETIME).
	StaffIdleTimeout time.Duration
	StaffLifetime    time.Duration
	// StaffLoginHashes bounds the staff password hashes computed at once, each 64 MiB
	// and a core (STAFF_LOGIN_HASHES); a login waits up to StaffLoginWait for one
	// (STAFF_LOGIN_WAIT), then is asked to try again.
	StaffLoginHashes int
	StaffLoginWait   time.Duration

	// Mail and jobs (mail.go): where email goes, what it says it is from, the address
	// its links start with, and how the job queue works.
	SMTP              SMTP          // SMTP_URL; unset, email is noted in the log (never its text) and not sent
	MailFrom          string        // MAIL_FROM
	BaseURL           string        // BASE_URL: the site's public address, for links in email
	JobWorkers        int           // JOB_WORKERS: the money's jobs (refunds, reconciliation) one instance works at once
	EmailWorkers      int           // EMAIL_WORKERS: emails one instance sends at once
	ReconcileInterval time.Duration // RECONCILE_INTERVAL: how often payments are reconciled
	// ReconcileAfter is how long a pending payment (or refund) waits for the
	// provider's word before reconciliation looks it up (RECONCILE_AFTER).
	ReconcileAfter time.Duration
	// IdempotencyTTL is how long the answer of a request sent with an
	// Idempotency-Key is kept for its repeats (IDEMPOTENCY_TTL).
	IdempotencyTTL time.Duration
	// RefundKeyWindow is how long after a refund was first asked for a retry trusts
	// its idempotency key alone; a later retry looks the refund up first
	// (REFUND_KEY_WINDOW, at most MaxRefundKeyWindow).
	RefundKeyWindow time.Duration
	// LatencyBound is the 95th percentile latency of the sale's steps (holds,
	// checkouts, payments) past which the waiting rooms admit slower than configured
	// (LATENCY_BOUND; "off": 0, they always admit at the configured rate).
	LatencyBound time.Duration
	// EmailWait is the longest a confirmation email waits for the sale's steps to
	// come back under a fifth of the latency bound (EMAIL_WAIT; "off": 0, never waits).
	EmailWait time.Duration
	// EmailSaleRate is how many confirmation emails a second one instance starts
	// while a sale is on, one at a time (EMAIL_SALE_RATE; "off": 0, no pace).
	EmailSaleRate int

	// ProofOfWork and ProofMaxNumber: the proof of work asked before a queue join and
	// a session's first hold, and its difficulty (proof.go).
	ProofOfWork    bool
	ProofMaxNumber int

	// The environment and what production mode refuses (production.go), and the
	// server's own limits (server.go).
	Env                 string       // BOXOFFICE_ENV: production or development
	AllowTestPayments   string       // ALLOW_TEST_PAYMENTS: "staging" lets production take test payments
	MetricsPublicReason string       // METRICS_PUBLIC_REASON: why METRICS_ADDR listens beyond loopback
	HTTP                HTTPLimits   // READ_HEADER_TIMEOUT, READ_TIMEOUT, IDLE_TIMEOUT, MAX_HEADER_BYTES
	Streams             StreamLimits // STREAMS_PER_SESSION, STREAMS_PER_ADDRESS, STREAMS_MAX

	// Money is how the shop writes and reads amounts (SHOP_LOCALE, money.go).
	Money money.Shop
}

// PerAddress is the limits per client address: enough for a household or an office
// behind one address, and little for a script that opens a session a call.
type PerAddress struct {
	// SessionsPerHour and JoinsPerHour bound new buyer sessions and waiting-room
	// joins (ADDRESS_SESSIONS_PER_HOUR, ADDRESS_JOINS_PER_HOUR): an hour's worth may
	// come at once, then they refill evenly. An hour, because a script gains by
	// piling up places in a queue that may stand open for hours before the onsale.
	SessionsPerHour int
	JoinsPerHour    int
	// HoldsPerMinute bounds hold calls (ADDRESS_HOLDS_PER_MINUTE), a minute's worth
	// at once.
	HoldsPerMinute int
	// CodesPerHour bounds access codes entered (ADDRESS_CODES_PER_HOUR): few, since
	// a code guessed opens a presale.
	CodesPerHour int
	// SeatsHeld is how many seats and GA places of one event it may hold at once
	// (ADDRESS_SEATS_HELD); at least MAX_SEATS_PER_BUYER, so one buyer can fill a basket.
	SeatsHeld int
}

// The defaults of the limits per client address (README: "Limits per address").
const (
	DefaultAddressSessions  = 120 // an hour
	DefaultAddressJoins     = 120 // an hour
	DefaultAddressHolds     = 120 // a minute
	DefaultAddressCodes     = 30  // an hour
	DefaultAddressSeatsHeld = 40
)

// Bounds of the money settings.
const (
	// MinReconcileAfter keeps lookups well behind a charge's own time limit (30 s in
	// booking): a lookup that finds nothing frees the order's payment claim, so one
	// made while the charge may still be in flight could let the buyer pay twice.
	MinReconcileAfter = time.Minute
	// MinIdempotencyTTL keeps an answer at least as long as a key stays taken by a
	// request that never finished (a minute in booking), so that a client retrying
	// over a few seconds or minutes always gets the first answer.
	MinIdempotencyTTL = time.Minute
	// MaxRefundKeyWindow keeps REFUND_KEY_WINDOW inside the provider's own: Stripe
	// keeps an idempotency key 24 hours, and a repeat after that makes a second refund.
	MaxRefundKeyWindow = 24 * time.Hour
	// DefaultLatencyBound is LATENCY_BOUND's default: a step a person does not wait
	// for, and well past what an unloaded machine answers in (docs/BENCHMARKS.md).
	DefaultLatencyBound = 250 * time.Millisecond
)

// AdmissionKey is one HMAC key, named by its id in every token it signs: the keys
// that sign admission tokens, and (each use under a domain of its own) the verified
// buyers' links, the orders' access links and the proof of work's challenges.
type AdmissionKey = keyring.Key

// DevAdmissionKeys are the admission keys used when none are configured: fine on a
// laptop, a forgery kit anywhere else (serve warns).
const DevAdmissionKeys = "dev:boxoffice_admission_development_only_key"

// minSecret is the shortest admission secret accepted: HMAC-SHA256's own block of
// strength, 32 bytes.
const minSecret = 32

// Payment providers (PAYMENT_PROVIDER).
const (
	ProviderTest   = "test"
	ProviderStripe = "stripe"
)

// DevWebhookSecret is the webhook secret used when none is configured.
const DevWebhookSecret = "whsec_boxoffice_development_only"

// Load reads the configuration through getenv. Every setting is read before any
// error is returned, so that one start names every bad setting at once.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:            or(getenv("ADDR"), ":8080"),
		MetricsAddr:     getenv("METRICS_ADDR"),
		DatabaseURL:     getenv("DATABASE_URL"),
		RedisURL:        getenv("REDIS_URL"),
		RedisPrefix:     or(getenv("REDIS_PREFIX"), "boxoffice:"),
		WebhookSecret:   or(getenv("PAYMENT_WEBHOOK_SECRET"), DevWebhookSecret),
		WebhookURL:      getenv("PAYMENT_WEBHOOK_URL"),
		PaymentDelivery: getenv("PAYMENT_DELIVERY"),
		PaymentProvider: or(getenv("PAYMENT_PROVIDER"), ProviderTest),
		StripeSecretKey: getenv("STRIPE_SECRET_KEY"),
		StripeAPIURL:    getenv("STRIPE_API_URL"),
		LogFormat:       or(getenv("LOG_FORMAT"), "text"),
	}
	r := &reader{getenv: getenv}
	r.sizesAndTimes(&c)
	r.perAddress(&c)
	r.trust(&c)
	r.addresses(&c)
	r.payments(&c)
	r.errs = append(r.errs, loadMail(&c, getenv)...)
	r.errs = append(r.errs, loadProof(&c, getenv)...)
	r.errs = append(r.errs, loadMoney(&c, getenv)...)
	r.errs = append(r.errs, loadServer(&c, r.num, r.dur)...)
	r.errs = append(r.errs, loadDatabase(&c, getenv, r.dur)...)
	r.errs = append(r.errs, loadEnv(&c, getenv)...) // last: it judges the settings above
	return c, errors.Join(r.errs...)
}

// reader reads settings through getenv and notes what it refuses, so that Load
// goes on reading after a bad setting.
type reader struct {
	getenv func(string) string
	errs   []error
}

func (r *reader) failf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf(format, args...))
}

// num reads a positive whole number; def when unset.
func (r *reader) num(name string, def int) int {
	return readPositive(r, name, def, strconv.Atoi, "want a positive whole number")
}

// dur reads a positive duration; def when unset.
func (r *reader) dur(name string, def time.Duration) time.Duration {
	return readPositive(r, name, def, time.ParseDuration, "want a duration such as 10m or 500ms")
}

// off reports whether the setting name is "off": 0, no limit.
func (r *reader) off(name string) bool { return r.getenv(name) == "off" }

func readPositive[T int | time.Duration](r *reader, name string, def T, parse func(string) (T, error), want string) T {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil || x <= 0 {
		r.failf("%s=%q: %s", name, v, want)
	}
	return x
}

// sizesAndTimes reads the pool's size, the holds', the rates', the workers' and the
// money's numbers and intervals, and checks the money's against their bounds.
func (r *reader) sizesAndTimes(c *Config) {
	c.DBMaxConns = int32(r.num("DB_MAX_CONNS", 16))
	c.MaxPerBuyer = r.num("MAX_SEATS_PER_BUYER", 10)
	c.HoldTTL = r.dur("HOLD_TTL", 10*time.Minute)
	c.TidyInterval = r.dur("TIDY_INTERVAL", 2*time.Second)
	c.PaymentLate = r.dur("PAYMENT_LATE_DELAY", 3*time.Second)
	c.ShutdownTimeout = r.dur("SHUTDOWN_TIMEOUT", 10*time.Second)
	c.RateLimit = r.num("RATE_LIMIT", 10)
	c.RateBurst = r.num("RATE_BURST", 20)
	c.JobWorkers = r.num("JOB_WORKERS", 4)
	c.EmailWorkers = r.num("EMAIL_WORKERS", 16)
	c.ReconcileInterval = r.dur("RECONCILE_INTERVAL", time.Minute)
	c.StaffIdleTimeout = r.dur("STAFF_IDLE_TIMEOUT", 30*time.Minute)
	c.StaffLifetime = r.dur("STAFF_SESSION_LIFETIME", 12*time.Hour)
	c.StaffLoginHashes = r.num("STAFF_LOGIN_HASHES", 1)
	c.StaffLoginWait = r.dur("STAFF_LOGIN_WAIT", 5*time.Second)
	c.ReconcileAfter = r.dur("RECONCILE_AFTER", 3*time.Minute)
	c.IdempotencyTTL = r.dur("IDEMPOTENCY_TTL", 24*time.Hour)
	c.RefundKeyWindow = r.dur("REFUND_KEY_WINDOW", time.Hour)
	if c.RefundKeyWindow > MaxRefundKeyWindow {
		r.failf("REFUND_KEY_WINDOW=%s: want %s or less, inside the provider's idempotency window", c.RefundKeyWindow, MaxRefundKeyWindow)
	}
	if !r.off("LATENCY_BOUND") {
		c.LatencyBound = r.dur("LATENCY_BOUND", DefaultLatencyBound)
	}
	if !r.off("EMAIL_WAIT") {
		c.EmailWait = r.dur("EMAIL_WAIT", 5*time.Minute)
	}
	if !r.off("EMAIL_SALE_RATE") {
		c.EmailSaleRate = r.num("EMAIL_SALE_RATE", 20)
	}
	if c.ReconcileAfter > 0 && c.ReconcileAfter < MinReconcileAfter {
		r.failf("RECONCILE_AFTER=%s: want %s or more, well behind a charge's own time limit", c.ReconcileAfter, MinReconcileAfter)
	}
	if c.IdempotencyTTL > 0 && c.IdempotencyTTL < MinIdempotencyTTL {
		r.failf("IDEMPOTENCY_TTL=%s: want %s or more", c.IdempotencyTTL, MinIdempotencyTTL)
	}
}

// perAddress reads the limits per client address (ADDRESS_*). It runs after
// MAX_SEATS_PER_BUYER is read: an address may hold at least one buyer's basket.
func (r *reader) perAddress(c *Config) {
	limit := func(name string, def int) int {
		if r.off(name) {
			return 0
		}
		return r.num(name, def)
	}
	c.PerAddress = PerAddress{
		SessionsPerHour: limit("ADDRESS_SESSIONS_PER_HOUR", DefaultAddressSessions),
		JoinsPerHour:    limit("ADDRESS_JOINS_PER_HOUR", DefaultAddressJoins),
		HoldsPerMinute:  limit("ADDRESS_HOLDS_PER_MINUTE", DefaultAddressHolds),
		CodesPerHour:    limit("ADDRESS_CODES_PER_HOUR", DefaultAddressCodes),
		SeatsHeld:       limit("ADDRESS_SEATS_HELD", DefaultAddressSeatsHeld),
	}
	if n := c.PerAddress.SeatsHeld; n > 0 && n < c.MaxPerBuyer {
		r.failf("ADDRESS_SEATS_HELD=%d: want at least MAX_SEATS_PER_BUYER (%d), or off", n, c.MaxPerBuyer)
	}
}

// trust reads what the server trusts: the admission keys, the proxies whose
// X-Forwarded-For it believes, and whether cookies need HTTPS.
func (r *reader) trust(c *Config) {
	keys, err := ParseAdmissionKeys(or(r.getenv("ADMISSION_KEYS"), DevAdmissionKeys))
	if err != nil {
		r.failf("ADMISSION_KEYS: %w", err)
	}
	c.AdmissionKeys = keys
	for _, s := range strings.Split(r.getenv("TRUSTED_PROXIES"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			r.failf("TRUSTED_PROXIES: %q is not a network such as 203.0.113.0/24", s)
			continue
		}
		c.TrustedProxies = append(c.TrustedProxies, n)
	}
	if v := r.getenv("COOKIE_SECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			r.failf("COOKIE_SECURE=%q: want true or false", v)
		}
		c.CookieSecure = b
	}
}

// addresses checks the services' URLs, the log format and the listeners' addresses.
func (r *reader) addresses(c *Config) {
	if c.DatabaseURL == "" {
		r.errs = append(r.errs, errors.New("DATABASE_URL is not set (make run sets it up)"))
	}
	if c.RedisURL == "" {
		r.errs = append(r.errs, errors.New("REDIS_URL is not set (make run sets it up)"))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		r.failf("LOG_FORMAT=%q: want json or text", c.LogFormat)
	}
	if v := r.getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			r.failf("LOG_LEVEL=%q: want debug, info, warn or error", v)
		}
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		r.failf("ADDR=%q: want host:port or :port", c.Addr)
	}
	if c.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			r.failf("METRICS_ADDR=%q: want host:port, such as 127.0.0.1:9091", c.MetricsAddr)
		} else if c.MetricsAddr == c.Addr && port != "0" { // port 0: each listener gets a free port of its own
			r.failf("METRICS_ADDR=%q: the same address as ADDR; metrics are never served on the public listener", c.MetricsAddr)
		}
	}
}

// payments checks the payment provider's settings and fills in the test provider's
// webhook address. It runs after ADDR is read: the address defaults to its port.
func (r *reader) payments(c *Config) {
	if c.WebhookURL == "" {
		_, port, _ := net.SplitHostPort(c.Addr)
		c.WebhookURL = "http://127.0.0.1:" + port + "/api/v1/payments/webhook"
	} else if u, err := url.Parse(c.WebhookURL); err != nil || u.Host == "" {
		r.failf("PAYMENT_WEBHOOK_URL=%q: want an absolute URL", c.WebhookURL)
	}
	switch c.PaymentProvider {
	case ProviderTest:
	case ProviderStripe:
		if c.StripeSecretKey == "" {
			r.errs = append(r.errs, errors.New("STRIPE_SECRET_KEY is not set, and PAYMENT_PROVIDER=stripe needs it"))
		}
		// The development secret is public: webhooks signed with it could be forged,
		// and Stripe's would all be refused.
		if r.getenv("PAYMENT_WEBHOOK_SECRET") == "" {
			r.errs = append(r.errs, errors.New("PAYMENT_WEBHOOK_SECRET is not set, and PAYMENT_PROVIDER=stripe needs it: the webhook endpoint's signing secret"))
		}
	default:
		r.failf("PAYMENT_PROVIDER=%q: want test or stripe", c.PaymentProvider)
	}
	if c.StripeAPIURL != "" {
		if u, err := url.Parse(c.StripeAPIURL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			r.failf("STRIPE_API_URL=%q: want an http(s) URL", c.StripeAPIURL)
		}
	}
}

// ParseAdmissionKeys reads "kid:secret[,kid:secret…]". Key ids are short names
// (letters, digits, - and _), each used once; secrets are at least 32 bytes. The
// error never repeats a secret.
func ParseAdmissionKeys(v string) ([]AdmissionKey, error) {
	var keys []AdmissionKey
	seen := map[string]bool{}
	for i, part := range strings.Split(v, ",") {
		id, secret, ok := strings.Cut(strings.TrimSpace(part), ":")
		switch {
		case !ok || !validKeyID(id):
			return nil, fmt.Errorf("key %d: want kid:secret, the kid 1 to 32 letters, digits, - or _", i+1)
		case seen[id]:
			return nil, fmt.Errorf("key %q appears twice", id)
		case len(secret) < minSecret:
			return nil, fmt.Errorf("key %q: the secret is %d bytes, want at least %d", id, len(secret), minSecret)
		}
		seen[id] = true
		keys = append(keys, AdmissionKey{ID: id, Secret: []byte(secret)})
	}
	return keys, nil
}

func validKeyID(id string) bool {
	if id == "" || len(id) > 32 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
