package config

import "testing"

func TestLoadMoney(t *testing.T) {
	t.Parallel()
	var c Config
	if errs := loadMoney(&c, func(string) string { return "" }); len(errs) != 0 || c.Money.Locale() != "en" || c.Money.Format(4050) != "€40.50" {
		t.Errorf("unset: %v, locale %s, %s; want en and €40.50", errs, c.Money.Locale(), c.Money.Format(4050))
	}
	if errs := loadMoney(&c, func(string) string { return "de-DE" }); len(errs) != 0 || c.Money.Input(4050) != "40,50" {
		t.Errorf("de-DE: %v, %s; want 40,50", errs, c.Money.Input(4050))
	}
	if errs := loadMoney(&c, func(string) string { return "klingon" }); len(errs) != 1 {
		t.Errorf("klingon: %d errors, want 1", len(errs))
	}
}
