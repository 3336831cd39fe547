package money_test

import (
	"errors"
	"testing"

	"boxoffice/internal/money"
)

func shop(t *testing.T, locale string) money.Shop {
	t.Helper()
	s, err := money.New(locale)
	if err != nil {
		t.Fatalf("New(%q): %v", locale, err)
	}
	return s
}

func TestParse(t *testing.T) {
	t.Parallel()
	en, de, fr := money.Shop{}, shop(t, "de-DE"), shop(t, "fr")
	for _, c := range []struct {
		shop money.Shop
		in   string
		want int
	}{
		{en, "40,50", 4050},
		{en, "40.50", 4050},
		{en, "40", 4000},
		{en, "€40.50", 4050},
		{en, "€ 40.50", 4050},
		{en, "40,50 €", 4050},
		{en, "EUR 12", 1200},
		{en, " 40.5 ", 4050},
		{en, "0", 0},
		{en, "0.05", 5},
		{en, "1,234", 123400},
		{en, "1,234.50", 123450},
		{en, "1.234,50", 123450},
		{en, "1,234,567.89", 123456789},
		{en, "1 234,50", 123450},
		{en, "007", 700},
		{de, "40,50", 4050},
		{de, "40.50", 4050},
		{de, "1.234", 123400},
		{de, "1.234,50 €", 123450},
		{de, "1.234.567", 123456700},
		{fr, "1\u202f234,50\u00a0€", 123450},
		{fr, "12,5", 1250},
	} {
		got, err := c.shop.Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: Parse(%q) = %d, %v; want %d", c.shop.Locale(), c.in, got, err, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	en, de := money.Shop{}, shop(t, "de")
	for _, c := range []struct {
		shop money.Shop
		in   string
		want error
	}{
		{en, "40,5,0", money.ErrNotAmount},
		{en, "", money.ErrNotAmount},
		{en, "€", money.ErrNotAmount},
		{en, "forty", money.ErrNotAmount},
		{en, "$40", money.ErrNotAmount},
		{en, "40.", money.ErrNotAmount},
		{en, ".50", money.ErrNotAmount},
		{en, "1,2345", money.ErrDecimals},
		{en, "12,34,567", money.ErrNotAmount},
		{en, "1,234.567,8", money.ErrNotAmount},
		{en, "1e3", money.ErrNotAmount},
		{en, "-5", money.ErrNegative},
		{en, "−5", money.ErrNegative},
		{en, "€-5", money.ErrNegative},
		{en, "40.505", money.ErrDecimals},
		{en, "40.5050", money.ErrDecimals},
		{de, "1,234", money.ErrDecimals},
		{en, "9999999999999", money.ErrTooLarge},
	} {
		got, err := c.shop.Parse(c.in)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Parse(%q) = %d, %v; want %v", c.shop.Locale(), c.in, got, err, c.want)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	en, de, nl := money.Shop{}, shop(t, "de"), shop(t, "nl")
	for _, c := range []struct {
		shop        money.Shop
		minor       int
		want, input string
	}{
		{en, 0, "€0.00", "0.00"},
		{en, 5, "€0.05", "0.05"},
		{en, 4050, "€40.50", "40.50"},
		{en, 123450, "€1,234.50", "1234.50"},
		{en, 123456789, "€1,234,567.89", "1234567.89"},
		{en, -150, "-€1.50", "-1.50"},
		{en, 100000000, "€1,000,000.00", "1000000.00"},
		{de, 123450, "1.234,50\u00a0€", "1234,50"},
		{nl, 4050, "€\u00a040,50", "40,50"},
	} {
		if got := c.shop.Format(c.minor); got != c.want {
			t.Errorf("%s: Format(%d) = %q, want %q", c.shop.Locale(), c.minor, got, c.want)
		}
		if got := c.shop.Input(c.minor); got != c.input {
			t.Errorf("%s: Input(%d) = %q, want %q", c.shop.Locale(), c.minor, got, c.input)
		}
		if c.minor >= 0 {
			for _, text := range []string{c.want, c.input} {
				if back, err := c.shop.Parse(text); err != nil || back != c.minor {
					t.Errorf("%s: Parse(%q) = %d, %v; want %d back", c.shop.Locale(), text, back, err, c.minor)
				}
			}
		}
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	de := shop(t, "de")
	for _, c := range []struct {
		shop  money.Shop
		minor int
		want  string
	}{
		{money.Shop{}, 4500, "€45"}, {money.Shop{}, 4550, "€45.50"}, {money.Shop{}, 123400, "€1,234"},
		{de, 4500, "45 €"}, {de, 4505, "45,05 €"},
	} {
		if got := c.shop.Short(c.minor); got != c.want {
			t.Errorf("%s: Short(%d) = %q, want %q", c.shop.Locale(), c.minor, got, c.want)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	if _, err := money.New("xx"); err == nil {
		t.Error("New(\"xx\"): no error, want one naming the locales")
	}
	if s := shop(t, "de_AT"); s.Locale() != "de" || s.Currency().Code != "EUR" {
		t.Errorf("New(de_AT) = %s %s, want de EUR", s.Locale(), s.Currency().Code)
	}
}
