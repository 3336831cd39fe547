// Package zone is the time zones venues are in and how a moment is written in one.
// Times are stored in UTC; every date a buyer or staff member sees or types is in the
// event's venue's zone, with the zone named: When, Clock, Short and Stamp write a
// moment for people, ISO for files, Form and ParseForm for datetime-local fields.
// One place writes times, so every page, email, ticket and export says them alike.
//
// A zone's abbreviation names it when it is letters that name one offset among the
// zones offered (CET, GMT, EST); a numeric one (+03) or one that several offsets share
// (IST is India's, Ireland's and Israel's) is followed by the IANA name.
//
// It imports the standard library only.
package zone

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed names.txt
var namesText string

// names are the IANA zones the venue form offers: those of the IANA tables zone.tab
// and zone1970.tab (one or more per country), and UTC.
var names = sync.OnceValue(func() []string { return strings.Fields(namesText) })

// Names lists the zones the venue form offers, sorted.
func Names() []string { return slices.Clone(names()) }

// ErrUnknown: the name is no IANA time zone this program knows.
var ErrUnknown = errors.New("unknown time zone")

// maxName bounds a zone's name: the longest IANA name is about 30 characters.
const maxName = 64

var cache sync.Map // name → *time.Location

// Load returns the IANA zone of that name, loaded once. "" and "Local" name no zone
// (the machine's own would differ from one server to the next): ErrUnknown.
func Load(name string) (*time.Location, error) {
	if l, ok := cache.Load(name); ok {
		return l.(*time.Location), nil
	}
	if name == "" || name == "Local" || len(name) > maxName {
		return nil, ErrUnknown
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, ErrUnknown
	}
	cache.Store(name, loc)
	return loc, nil
}

// Of is the zone of that name, or UTC when it names none: a stored name is checked by
// Load before it is stored, so UTC only ever stands in for a zone the tz database
// has since dropped.
func Of(name string) *time.Location {
	if loc, err := Load(name); err == nil {
		return loc
	}
	return time.UTC
}

// or is loc, or UTC for none: a zero event has no zone.
func or(loc *time.Location) *time.Location {
	if loc == nil {
		return time.UTC
	}
	return loc
}

// When writes a moment as the event pages do: "Tue 5 Jan 2027, 19:30 CET".
func When(t time.Time, loc *time.Location) string {
	t = t.In(or(loc))
	return t.Format("Mon 2 Jan 2006, 15:04") + " " + Abbrev(t)
}

// Clock writes the time of day of a moment: "19:30 CET".
func Clock(t time.Time, loc *time.Location) string {
	t = t.In(or(loc))
	return t.Format("15:04") + " " + Abbrev(t)
}

// ClockSeconds writes the time of day of a moment to the second: "19:30:05 CET".
func ClockSeconds(t time.Time, loc *time.Location) string {
	t = t.In(or(loc))
	return t.Format(time.TimeOnly) + " " + Abbrev(t)
}

// Short writes a moment for the staff's tables: "5 Jan 2027, 19:30 CET".
func Short(t time.Time, loc *time.Location) string {
	t = t.In(or(loc))
	return t.Format("2 Jan 2006, 15:04") + " " + Abbrev(t)
}

// Day writes the date of a moment: "Tue 5 Jan 2027".
func Day(t time.Time, loc *time.Location) string {
	return t.In(or(loc)).Format("Mon 2 Jan 2006")
}

// Stamp writes a moment to the second, as the audit log does: "2027-01-05 19:30:05 CET".
func Stamp(t time.Time, loc *time.Location) string {
	t = t.In(or(loc))
	return t.Format(time.DateTime) + " " + Abbrev(t)
}

// ISO writes a moment for files (CSV): RFC 3339 with the zone's offset,
// "2027-01-05T19:30:00+01:00".
func ISO(t time.Time, loc *time.Location) string {
	return t.In(or(loc)).Format(time.RFC3339)
}

// Abbrev names the zone of t as people read it: its abbreviation ("CET") when that
// says which zone it is, else with the IANA name too ("+03 (Europe/Istanbul)",
// "IST (Asia/Kolkata)").
func Abbrev(t time.Time) string {
	abbr, off := t.Zone()
	name := t.Location().String()
	if abbr == name || !ambiguous(abbr, off) {
		return abbr
	}
	return abbr + " (" + name + ")"
}

// ambiguous reports whether people could take the abbreviation for another zone: it
// is numeric, or the zones offered use it for other offsets than off too.
func ambiguous(abbr string, off int) bool {
	if abbr == "" || strings.ContainsAny(abbr[:1], "+-0123456789") {
		return true
	}
	offs := abbrevOffsets()[abbr]
	return len(offs) == 0 || len(offs) > 1 || offs[0] != off
}

// abbrevOffsets maps each abbreviation the offered zones use, in winter and in summer
// of both hemispheres, to the offsets it stands for.
var abbrevOffsets = sync.OnceValue(func() map[string][]int {
	out := map[string][]int{}
	year := time.Now().Year()
	for _, n := range names() {
		loc, err := Load(n)
		if err != nil {
			continue
		}
		for _, m := range []time.Month{time.January, time.July} {
			abbr, off := time.Date(year, m, 15, 12, 0, 0, 0, loc).Zone()
			if !slices.Contains(out[abbr], off) {
				out[abbr] = append(out[abbr], off)
			}
		}
	}
	return out
})

// formLayout is how a datetime-local field writes a time.
const formLayout = "2006-01-02T15:04"

// Form writes a moment as a datetime-local field shows it, on the wall clocks of loc.
func Form(t time.Time, loc *time.Location) string {
	return t.In(or(loc)).Format(formLayout)
}

// GapError: the wall-clock time typed does not exist in the zone, because the clocks
// skip it (they go forward at that hour).
type GapError struct {
	Wall string // as typed, "2027-03-28 02:30"
	Zone string // the IANA name
}

func (e *GapError) Error() string {
	return fmt.Sprintf("%s does not exist in %s: the clocks go forward at that hour; choose a time before or after it", e.Wall, e.Zone)
}

// ErrFormTime: the value is not a date and time such as 2026-12-31T20:00.
var ErrFormTime = errors.New("not a date and time such as 2026-12-31T20:00")

// ParseForm reads a datetime-local value ("2006-01-02T15:04", seconds optional) as a
// wall-clock time in loc. A time the clocks skip is a *GapError. A time the clocks pass
// twice (when they go back) is the first of the two, and twice says so.
func ParseForm(v string, loc *time.Location) (t time.Time, twice bool, err error) {
	loc = or(loc)
	wall, err := time.ParseInLocation(formLayout, v, time.UTC)
	if err != nil {
		if wall, err = time.ParseInLocation(formLayout+":05", v, time.UTC); err != nil {
			return time.Time{}, false, ErrFormTime
		}
	}
	var found []time.Time
	for _, off := range offsetsAround(wall, loc) {
		u := wall.Add(-time.Duration(off) * time.Second)
		l := u.In(loc)
		if l.Format(time.DateTime) == wall.Format(time.DateTime) && !slices.ContainsFunc(found, u.Equal) {
			found = append(found, u)
		}
	}
	if len(found) == 0 {
		return time.Time{}, false, &GapError{Wall: wall.Format("2006-01-02 15:04"), Zone: loc.String()}
	}
	slices.SortFunc(found, time.Time.Compare)
	return found[0].In(loc), len(found) > 1, nil
}

// offsetsAround are the UTC offsets loc has within two days of the wall-clock time
// read as UTC: any instant that shows that time on loc's clocks has one of them.
func offsetsAround(wall time.Time, loc *time.Location) []int {
	var offs []int
	for d := -48 * time.Hour; d <= 48*time.Hour; d += 6 * time.Hour {
		if _, off := wall.Add(d).In(loc).Zone(); !slices.Contains(offs, off) {
			offs = append(offs, off)
		}
	}
	return offs
}
