// Package money writes and reads the shop's amounts. Amounts are integers in the
// currency's minor unit (cents) everywhere in boxoffice; this package is the one place
// that turns them into text for people and reads what people type back, in the shop's
// currency and the way its locale writes numbers.
//
// It imports only the standard library.
package money

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Currency is what the shop sells in: its ISO 4217 code, its symbol and how many
// digits its minor unit has.
type Currency struct {
	Code   string
	Symbol string
	Digits int
}

// EUR is the euro, the currency the payment providers charge in.
var EUR = Currency{Code: "EUR", Symbol: "€", Digits: 2}

// style is how a locale writes an amount: its decimal mark, its thousands separator,
// and whether the symbol comes after the number (with a space) or before it.
type style struct {
	decimal, group string
	after          bool
	spaced         bool // a space between a leading symbol and the number ("€ 12,50")
}

// styles are the locales the shop can be set to, by language. The zero Shop writes
// the English way.
var styles = map[string]style{
	"en": {decimal: ".", group: ","},
	"de": {decimal: ",", group: ".", after: true},
	"es": {decimal: ",", group: ".", after: true},
	"it": {decimal: ",", group: ".", after: true},
	"fr": {decimal: ",", group: "\u202f", after: true},
	"nl": {decimal: ",", group: ".", spaced: true},
	"ga": {decimal: ".", group: ","},
}

// Shop is the shop's currency and locale. The zero value is euros written the English
// way (€1,234.50); New gives another locale.
type Shop struct {
	cur    Currency
	style  style
	locale string
}

// Locales are the locales New accepts, by language subtag.
func Locales() []string { return []string{"de", "en", "es", "fr", "ga", "it", "nl"} }

// New is the shop selling in euros, writing amounts as locale does ("en", "de",
// "de-AT", "fr_FR": the language decides).
func New(locale string) (Shop, error) {
	lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(locale)), "-")
	lang, _, _ = strings.Cut(lang, "_")
	st, ok := styles[lang]
	if !ok {
		return Shop{}, fmt.Errorf("locale %q: boxoffice writes amounts for %s", locale, strings.Join(Locales(), ", "))
	}
	return Shop{cur: EUR, style: st, locale: lang}, nil
}

func (s Shop) currency() Currency {
	if s.cur.Code == "" {
		return EUR
	}
	return s.cur
}

func (s Shop) st() style {
	if s.style.decimal == "" {
		return styles["en"]
	}
	return s.style
}

// Currency is the shop's currency.
func (s Shop) Currency() Currency { return s.currency() }

// Locale is the shop's locale's language ("en" for the zero Shop).
func (s Shop) Locale() string {
	if s.locale == "" {
		return "en"
	}
	return s.locale
}

// Format writes an amount in minor units as people read it: €1,234.50 in English,
// 1.234,50 € in German.
func (s Shop) Format(minor int) string {
	st, cur := s.st(), s.currency()
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	n := s.number(minor, st.group)
	switch {
	case st.after:
		return sign + n + "\u00a0" + cur.Symbol
	case st.spaced:
		return sign + cur.Symbol + "\u00a0" + n
	}
	return sign + cur.Symbol + n
}

// Short is Format for price lists, where a whole amount goes without its minor
// digits: €45, but €45.50.
func (s Shop) Short(minor int) string {
	unit := pow10(s.currency().Digits)
	if minor%unit != 0 || unit == 1 {
		return s.Format(minor)
	}
	f := s.Format(minor)
	zeros := s.st().decimal + strings.Repeat("0", s.currency().Digits)
	return strings.Replace(f, zeros, "", 1)
}

// Input writes an amount for a form field, to be read back by Parse: no symbol and
// no thousands separator ("1234.50", "1234,50").
func (s Shop) Input(minor int) string {
	if minor < 0 {
		return "-" + s.number(-minor, "")
	}
	return s.number(minor, "")
}

// number writes a non-negative amount with the locale's decimal mark and group
// between thousands.
func (s Shop) number(minor int, group string) string {
	d := s.currency().Digits
	unit := pow10(d)
	whole := strconv.Itoa(minor / unit)
	if group != "" {
		for i := len(whole) - 3; i > 0; i -= 3 {
			whole = whole[:i] + group + whole[i:]
		}
	}
	if d == 0 {
		return whole
	}
	frac := strconv.Itoa(minor % unit)
	return whole + s.st().decimal + strings.Repeat("0", d-len(frac)) + frac
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// Errors of Parse, each wrapped in an error that quotes what was typed.
var (
	ErrNotAmount = errors.New("not an amount")
	ErrNegative  = errors.New("negative")
	ErrDecimals  = errors.New("too many decimals")
	ErrTooLarge  = errors.New("too large")
)

// maxWholeDigits bounds the whole part of what Parse reads: 10¹² euros in cents stays
// far inside an int64.
const maxWholeDigits = 12

// Parse reads an amount as the shop's staff type it, in minor units: "40,50",
// "40.50", "40", "€40.50", "40,50 €", "1.234,50", "1,234.50". A mark followed by one
// or two digits is the decimal mark; followed by three it is the locale's thousands
// separator when the locale writes thousands with it ("1,234" is 1234 euros in
// English and too many decimals in German). Negative amounts, other currencies,
// misplaced separators ("40,5,0") and more decimals than the currency has are errors
// that say what was wrong.
func (s Shop) Parse(text string) (int, error) {
	t := s.stripCurrency(strings.TrimSpace(text))
	if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "−") {
		return 0, fmt.Errorf("%q is %w: an amount is 0 or more", text, ErrNegative)
	}
	whole, frac, err := s.split(t)
	if err != nil {
		return 0, fmt.Errorf("%q is %w: write it like %s", text, err, s.Input(4050))
	}
	cur := s.currency()
	if len(frac) > cur.Digits {
		return 0, fmt.Errorf("%q has %w: %s amounts have at most %d", text, ErrDecimals, cur.Code, cur.Digits)
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > maxWholeDigits {
		return 0, fmt.Errorf("%q is %w", text, ErrTooLarge)
	}
	n := 0
	for _, r := range whole + frac + strings.Repeat("0", cur.Digits-len(frac)) {
		n = n*10 + int(r-'0')
	}
	return n, nil
}

// stripCurrency takes the shop's symbol or code off either end of t, and the spaces
// beside it.
func (s Shop) stripCurrency(t string) string {
	cur := s.currency()
	for _, c := range []string{cur.Symbol, cur.Code, strings.ToLower(cur.Code)} {
		if r, ok := strings.CutPrefix(t, c); ok {
			return trimSpaces(r)
		}
		if r, ok := strings.CutSuffix(t, c); ok {
			return trimSpaces(r)
		}
	}
	return t
}

func trimSpaces(t string) string { return strings.Trim(t, " \t\u00a0\u202f") }

// isSpaceGroup reports whether r separates thousands whatever the locale: a space
// (plain, no-break or narrow) or an apostrophe.
func isSpaceGroup(r rune) bool { return r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\'' }

// split cuts t into its whole digits (separators checked and removed) and its
// fraction's digits.
func (s Shop) split(t string) (whole, frac string, err error) {
	if t == "" {
		return "", "", ErrNotAmount
	}
	for _, r := range t {
		if !(r >= '0' && r <= '9') && r != '.' && r != ',' && !isSpaceGroup(r) {
			return "", "", ErrNotAmount
		}
	}
	dec := s.decimalMark(t)
	if dec != "" {
		i := strings.LastIndex(t, dec)
		t, frac = t[:i], t[i+1:]
		if frac == "" || strings.ContainsAny(frac, ".,' \u00a0\u202f") {
			return "", "", ErrNotAmount
		}
	}
	whole, err = ungroup(t)
	return whole, frac, err
}

// decimalMark is which of '.' and ',' is t's decimal mark, "" for none.
func (s Shop) decimalMark(t string) string {
	dots, commas := strings.Count(t, "."), strings.Count(t, ",")
	switch {
	case dots > 0 && commas > 0:
		if strings.LastIndex(t, ".") > strings.LastIndex(t, ",") {
			return "."
		}
		return ","
	case dots+commas == 0:
		return ""
	}
	mark := "."
	if commas > 0 {
		mark = ","
	}
	if dots+commas > 1 {
		return "" // the same mark more than once separates thousands
	}
	after := t[strings.LastIndex(t, mark)+1:]
	if len(after) == 3 && mark == s.st().group {
		return ""
	}
	return mark
}

// ungroup checks that the separators in a whole number, all one kind, stand between
// groups of three digits ("1.234.567", "1 234") and returns its digits.
func ungroup(t string) (string, error) {
	var digits strings.Builder
	var sep rune
	groups := []int{0}
	for _, r := range t {
		if r >= '0' && r <= '9' {
			digits.WriteRune(r)
			groups[len(groups)-1]++
			continue
		}
		if sep != 0 && r != sep {
			return "", ErrNotAmount
		}
		sep = r
		groups = append(groups, 0)
	}
	for i, n := range groups {
		if n == 0 || (i > 0 && n != 3) || (i == 0 && len(groups) > 1 && n > 3) {
			return "", ErrNotAmount
		}
	}
	return digits.String(), nil
}
