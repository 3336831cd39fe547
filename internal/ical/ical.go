// Package ical writes an event as an iCalendar file (RFC 5545), for a buyer's
// calendar: one VEVENT in a VCALENDAR, lines ending in CRLF and folded at 75 octets,
// texts escaped, times in UTC.
package ical

import (
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Event is one calendar entry.
type Event struct {
	// UID names the entry for good: a calendar that imports the file again updates
	// the entry rather than adding a second one.
	UID string
	// Stamp is when this copy of the entry was made (DTSTAMP).
	Stamp time.Time
	// Start is when the event starts; it is written in UTC.
	Start       time.Time
	Summary     string
	Location    string
	Description string
	// URL is a link to more about the entry: the order page.
	URL string
}

// ContentType is what the file is served as.
const ContentType = "text/calendar; charset=utf-8"

// Write writes e as a calendar of one event.
func Write(w io.Writer, e Event) error {
	var b strings.Builder
	line := func(name, value string) {
		b.WriteString(Fold(name + ":" + value))
		b.WriteString("\r\n")
	}
	line("BEGIN", "VCALENDAR")
	line("VERSION", "2.0")
	line("PRODID", "-//boxoffice//tickets//EN")
	line("CALSCALE", "GREGORIAN")
	line("METHOD", "PUBLISH")
	line("BEGIN", "VEVENT")
	line("UID", Escape(e.UID))
	line("DTSTAMP", utc(e.Stamp))
	line("DTSTART", utc(e.Start))
	line("SUMMARY", Escape(e.Summary))
	if e.Location != "" {
		line("LOCATION", Escape(e.Location))
	}
	if e.Description != "" {
		line("DESCRIPTION", Escape(e.Description))
	}
	if e.URL != "" {
		line("URL", strings.NewReplacer("\r", "", "\n", "").Replace(e.URL)) // a URI: not TEXT, not escaped
	}
	line("END", "VEVENT")
	line("END", "VCALENDAR")
	_, err := io.WriteString(w, b.String())
	return err
}

// utc is a DATE-TIME in UTC: 20260314T193000Z.
func utc(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// Escape writes s as a TEXT value (RFC 5545 3.3.11): backslashes, semicolons and
// commas escaped, each line break as \n. Other control characters, which TEXT may
// not carry, are dropped.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', ';', ',':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				continue // CRLF is one break
			}
			b.WriteString(`\n`)
		case '\n':
			b.WriteString(`\n`)
		default:
			if c < 0x20 || c == 0x7f {
				continue
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// maxLine is the longest a content line may be, in octets, without its CRLF.
const maxLine = 75

// Fold folds a content line longer than 75 octets (RFC 5545 3.1): the rest goes on
// lines that begin with a space, each 75 octets at most with it, and never between
// the bytes of one UTF-8 character. The breaks are CRLF.
func Fold(line string) string {
	if len(line) <= maxLine {
		return line
	}
	var b strings.Builder
	limit := maxLine
	for len(line) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		b.WriteString(line[:cut])
		b.WriteString("\r\n ")
		line = line[cut:]
		limit = maxLine - 1 // the space counts
	}
	b.WriteString(line)
	return b.String()
}
