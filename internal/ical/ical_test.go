package ical

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestEscape: the characters TEXT must escape, and line breaks of every kind.
func TestEscape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Hamlet", "Hamlet"},
		{"Stalls, row F; seat 12", `Stalls\, row F\; seat 12`},
		{`C:\tickets`, `C:\\tickets`},
		{`\,;`, `\\\,\;`},
		{"two\nlines", `two\nlines`},
		{"two\r\nlines", `two\nlines`},
		{"two\rlines", `two\nlines`},
		{"tab\tand bell\a", "taband bell"},
		{"Große Halle: Лебединое озеро", "Große Halle: Лебединое озеро"},
		{"", ""},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFold: every physical line is 75 octets at most, valid UTF-8 on its own, and
// unfolding (removing each CRLF and the space after it) gives the line back.
func TestFold(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"SUMMARY:short",
		"SUMMARY:" + strings.Repeat("a", 67), // exactly 75
		"SUMMARY:" + strings.Repeat("a", 68), // 76
		"DESCRIPTION:" + strings.Repeat("Лебединое озеро · ", 20),
		"LOCATION:" + strings.Repeat("€", 100),
	} {
		got := Fold(in)
		for i, l := range strings.Split(got, "\r\n") {
			if len(l) > 75 {
				t.Errorf("%.20q…: line %d is %d octets, want 75 at most", in, i, len(l))
			}
			if i > 0 && !strings.HasPrefix(l, " ") {
				t.Errorf("%.20q…: line %d does not begin with a space", in, i)
			}
			if !utf8.ValidString(l) {
				t.Errorf("%.20q…: line %d splits a character: %q", in, i, l)
			}
		}
		if back := strings.ReplaceAll(got, "\r\n ", ""); back != in {
			t.Errorf("unfolded: got %q, want %q", back, in)
		}
		if len(in) <= 75 && got != in {
			t.Errorf("a line of %d octets was folded: %q", len(in), got)
		}
	}
}

// TestWrite: a calendar of one event, CRLF throughout, with its properties escaped and
// its times in UTC.
func TestWrite(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CET", 3600)
	e := Event{
		UID: "order-42@tickets.example", Stamp: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Start:   time.Date(2026, 3, 14, 20, 30, 0, 0, berlin),
		Summary: "Hamlet, the play; with \\ friends", Location: "The Globe, London",
		Description: "Order 42\n2 tickets: " + strings.Repeat("Stalls, row F, seat 12; ", 6),
		URL:         "https://tickets.example/orders/42?t=abc_DEF-123",
	}
	var b bytes.Buffer
	if err := Write(&b, e); err != nil {
		t.Fatal(err)
	}
	raw := b.String()
	if !strings.HasSuffix(raw, "\r\n") || strings.Count(raw, "\n") != strings.Count(raw, "\r\n") {
		t.Fatalf("want every line to end in CRLF: %q", raw)
	}
	props := map[string]string{}
	var order []string
	for _, l := range strings.Split(strings.ReplaceAll(strings.TrimSuffix(raw, "\r\n"), "\r\n ", ""), "\r\n") {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("line without a name: %q", l)
		}
		if _, seen := props[name]; !seen {
			order = append(order, name)
		}
		props[name] = value
	}
	for name, want := range map[string]string{
		"VERSION": "2.0", "UID": "order-42@tickets.example", "DTSTAMP": "20260301T120000Z", "DTSTART": "20260314T193000Z",
		"SUMMARY": `Hamlet\, the play\; with \\ friends`, "LOCATION": `The Globe\, London`,
		"URL": "https://tickets.example/orders/42?t=abc_DEF-123",
	} {
		if props[name] != want {
			t.Errorf("%s: got %q, want %q", name, props[name], want)
		}
	}
	if !strings.HasPrefix(props["DESCRIPTION"], `Order 42\n2 tickets: Stalls\, row F\, seat 12\;`) {
		t.Errorf("DESCRIPTION: got %q", props["DESCRIPTION"])
	}
	if got := strings.Join(order, " "); !strings.HasPrefix(got, "BEGIN VERSION PRODID") || !strings.HasSuffix(got, "END") {
		t.Errorf("properties: got %s", got)
	}
	if !strings.HasPrefix(raw, "BEGIN:VCALENDAR\r\n") || !strings.Contains(raw, "BEGIN:VEVENT\r\n") ||
		!strings.HasSuffix(raw, "END:VEVENT\r\nEND:VCALENDAR\r\n") {
		t.Errorf("not one VEVENT in a VCALENDAR:\n%s", raw)
	}
}
