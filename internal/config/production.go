package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// Environments (BOXOFFICE_ENV).
const (
	Development = "development"
	Production  = "production"
)

// StagingPayments is ALLOW_TEST_PAYMENTS's one value: a staging site in production
// mode that takes the test provider's cards on purpose.
const StagingPayments = "staging"

// Production reports whether the program runs in production mode (Env).
func (c Config) Production() bool { return c.Env == Production }

// DevSecrets names the settings left at their development values, which are public
// (they are in this source): in development serve warns of each, and production
// refuses to start with any.
func (c Config) DevSecrets() []string {
	var names []string
	if c.WebhookSecret == DevWebhookSecret {
		names = append(names, "PAYMENT_WEBHOOK_SECRET")
	}
	_, devKey, _ := strings.Cut(DevAdmissionKeys, ":")
	for _, k := range c.AdmissionKeys {
		if string(k.Secret) == devKey {
			names = append(names, "ADMISSION_KEYS")
			break
		}
	}
	return names
}

// devSecretHarm says what a development secret lets anyone do, by setting.
var devSecretHarm = map[string]string{
	"PAYMENT_WEBHOOK_SECRET": "anyone can sign a webhook that marks an order paid; set the provider's signing secret",
	"ADMISSION_KEYS":         "anyone can sign an admission past the waiting room, or a proof-of-work challenge; set keys of your own (kid:secret, 32 bytes or more)",
}

// loadEnv decides the environment and, in production, what it refuses. It runs after
// the other settings are read: it looks at BASE_URL, the secrets, the payment
// provider, COOKIE_SECURE and METRICS_ADDR.
//
// BOXOFFICE_ENV names the environment; unset, an https BASE_URL means production (a
// site on the internet), and BOXOFFICE_ENV=development overrides that. In production
// COOKIE_SECURE defaults to true and LOG_FORMAT to json.
func loadEnv(c *Config, getenv func(string) string) []error {
	var errs []error
	c.AllowTestPayments = getenv("ALLOW_TEST_PAYMENTS")
	if c.AllowTestPayments != "" && c.AllowTestPayments != StagingPayments {
		errs = append(errs, fmt.Errorf("ALLOW_TEST_PAYMENTS=%q: the one value is %s", c.AllowTestPayments, StagingPayments))
	}
	c.MetricsPublicReason = strings.TrimSpace(getenv("METRICS_PUBLIC_REASON"))
	var why string
	var err error
	if c.Env, why, err = Environment(getenv); err != nil {
		errs = append(errs, err)
	}
	if !c.Production() {
		return errs
	}
	if getenv("COOKIE_SECURE") == "" {
		c.CookieSecure = true
	}
	if getenv("LOG_FORMAT") == "" {
		c.LogFormat = "json"
	}
	if refused := c.productionRefusals(getenv("PAYMENT_PROVIDER") != ""); len(refused) > 0 {
		errs = append(errs, &ProductionError{Why: why, Refused: refused})
	}
	return errs
}

// Environment is the environment getenv names: BOXOFFICE_ENV, or else production
// for an https BASE_URL; why says what made it production. Commands that do not load
// the whole configuration (seed) ask it too. An unknown BOXOFFICE_ENV is an error,
// and production meanwhile: judged as strictly.
func Environment(getenv func(string) string) (env, why string, err error) {
	switch v := getenv("BOXOFFICE_ENV"); {
	case v == Production:
		return Production, "BOXOFFICE_ENV=production", nil
	case v == Development:
		return Development, "", nil
	case v == "" && strings.HasPrefix(strings.TrimSpace(getenv("BASE_URL")), "https://"):
		return Production, "BASE_URL is https; BOXOFFICE_ENV=development overrides", nil
	case v == "":
		return Development, "", nil
	}
	return Production, "BOXOFFICE_ENV=" + getenv("BOXOFFICE_ENV"), fmt.Errorf("BOXOFFICE_ENV=%q: want production or development", getenv("BOXOFFICE_ENV"))
}

// productionRefusals is every setting production refuses, each error naming its
// variable; providerStated says whether PAYMENT_PROVIDER was set rather than defaulted.
func (c Config) productionRefusals(providerStated bool) []error {
	var errs []error
	for _, name := range c.DevSecrets() {
		errs = append(errs, fmt.Errorf("%s is the development default, which is public: %s", name, devSecretHarm[name]))
	}
	switch {
	case !providerStated:
		errs = append(errs, errors.New("PAYMENT_PROVIDER is not set: production names who takes the money (stripe)"))
	case c.PaymentProvider == ProviderTest && c.AllowTestPayments != StagingPayments:
		errs = append(errs, fmt.Errorf("PAYMENT_PROVIDER=test: the test provider confirms orders paid with test cards; a staging site says ALLOW_TEST_PAYMENTS=%s", StagingPayments))
	}
	if !c.CookieSecure {
		errs = append(errs, errors.New("COOKIE_SECURE=false: production sends its session and CSRF cookies over HTTPS only (leave it unset)"))
	}
	if c.MetricsAddr != "" && !loopbackAddr(c.MetricsAddr) && c.MetricsPublicReason == "" {
		errs = append(errs, fmt.Errorf("METRICS_ADDR=%q listens beyond loopback, and the metrics tell whoever reads them how the sale goes: listen on 127.0.0.1, or say why not in METRICS_PUBLIC_REASON", c.MetricsAddr))
	}
	return errs
}

// ProductionError is production mode's refusal to start: every setting it refuses,
// one a line, each naming its variable.
type ProductionError struct {
	Why     string // what made it production
	Refused []error
}

func (e *ProductionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "production mode (%s) refuses to start with these settings:", e.Why)
	for _, err := range e.Refused {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap gives the refusals, one per setting.
func (e *ProductionError) Unwrap() []error { return e.Refused }

// loopbackAddr reports whether a host:port listens on loopback only; an empty host
// (":9091") listens on every interface.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopback(host)
}
