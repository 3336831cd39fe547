package config

import (
	"fmt"

	"boxoffice/internal/money"
)

// loadMoney reads how the shop writes and reads amounts (SHOP_LOCALE, default en:
// €1,234.50; de: 1.234,50 €). The currency is the euro, the one the payment
// providers charge in.
func loadMoney(c *Config, getenv func(string) string) []error {
	v := getenv("SHOP_LOCALE")
	if v == "" {
		return nil
	}
	s, err := money.New(v)
	if err != nil {
		return []error{fmt.Errorf("SHOP_LOCALE: %w", err)}
	}
	c.Money = s
	return nil
}
