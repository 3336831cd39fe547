package zone

import (
	"errors"
	"testing"
	"time"
	_ "time/tzdata" // the same zones on a machine without zoneinfo
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := Load(name)
	if err != nil {
		t.Fatalf("Load(%q): %v", name, err)
	}
	return loc
}

// TestWhenAcrossDST: the same wall-clock writing either side of Berlin's clock
// changes, the abbreviation following the offset; numeric and shared abbreviations
// bring the IANA name.
func TestWhenAcrossDST(t *testing.T) {
	t.Parallel()
	berlin, london := mustLoad(t, "Europe/Berlin"), mustLoad(t, "Europe/London")
	for _, tc := range []struct {
		at   time.Time
		loc  *time.Location
		want string
	}{
		{time.Date(2027, 1, 5, 18, 30, 0, 0, time.UTC), berlin, "Tue 5 Jan 2027, 19:30 CET"},
		{time.Date(2027, 3, 28, 0, 59, 0, 0, time.UTC), berlin, "Sun 28 Mar 2027, 01:59 CET"},
		{time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC), berlin, "Sun 28 Mar 2027, 03:00 CEST"},
		{time.Date(2027, 10, 31, 0, 30, 0, 0, time.UTC), berlin, "Sun 31 Oct 2027, 02:30 CEST"},
		{time.Date(2027, 10, 31, 1, 30, 0, 0, time.UTC), berlin, "Sun 31 Oct 2027, 02:30 CET"},
		{time.Date(2027, 3, 28, 0, 59, 0, 0, time.UTC), london, "Sun 28 Mar 2027, 00:59 GMT"},
		{time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC), london, "Sun 28 Mar 2027, 02:00 BST"},
		{time.Date(2027, 1, 5, 4, 0, 0, 0, time.UTC), nil, "Tue 5 Jan 2027, 04:00 UTC"},
		{time.Date(2027, 1, 5, 4, 0, 0, 0, time.UTC), time.UTC, "Tue 5 Jan 2027, 04:00 UTC"},
		{time.Date(2027, 1, 5, 16, 30, 0, 0, time.UTC), mustLoad(t, "Europe/Istanbul"), "Tue 5 Jan 2027, 19:30 +03 (Europe/Istanbul)"},
		{time.Date(2027, 1, 5, 14, 0, 0, 0, time.UTC), mustLoad(t, "Asia/Kolkata"), "Tue 5 Jan 2027, 19:30 IST (Asia/Kolkata)"},
		{time.Date(2027, 7, 5, 18, 30, 0, 0, time.UTC), mustLoad(t, "Europe/Dublin"), "Mon 5 Jul 2027, 19:30 IST (Europe/Dublin)"},
		{time.Date(2027, 1, 6, 0, 30, 0, 0, time.UTC), mustLoad(t, "America/New_York"), "Tue 5 Jan 2027, 19:30 EST"},
		{time.Date(2027, 1, 6, 1, 30, 0, 0, time.UTC), mustLoad(t, "America/Chicago"), "Tue 5 Jan 2027, 19:30 CST (America/Chicago)"},
	} {
		if got := When(tc.at, tc.loc); got != tc.want {
			t.Errorf("When(%v, %v): got %q, want %q", tc.at, tc.loc, got, tc.want)
		}
	}
	at := time.Date(2027, 10, 31, 0, 30, 0, 0, time.UTC)
	for name, got := range map[string]string{
		"Clock": Clock(at, berlin), "ClockSeconds": ClockSeconds(at.Add(time.Hour+5*time.Second), berlin),
		"Short": Short(at, berlin), "Day": Day(at, berlin),
		"Stamp": Stamp(at.Add(5*time.Second), berlin), "ISO": ISO(at, berlin), "Form": Form(at, berlin),
	} {
		want := map[string]string{
			"Clock": "02:30 CEST", "ClockSeconds": "02:30:05 CET", "Short": "31 Oct 2027, 02:30 CEST", "Day": "Sun 31 Oct 2027",
			"Stamp": "2027-10-31 02:30:05 CEST", "ISO": "2027-10-31T02:30:00+02:00", "Form": "2027-10-31T02:30",
		}[name]
		if got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// TestParseFormAcrossDST: typed wall-clock times in Berlin on the nights the clocks
// change: the skipped hour is refused, the doubled hour is its first pass, and either
// side reads as typed.
func TestParseFormAcrossDST(t *testing.T) {
	t.Parallel()
	berlin := mustLoad(t, "Europe/Berlin")
	for _, tc := range []struct {
		in    string
		want  time.Time // UTC; zero: refused as a gap
		twice bool
	}{
		{"2027-03-28T01:59", time.Date(2027, 3, 28, 0, 59, 0, 0, time.UTC), false},
		{"2027-03-28T02:00", time.Time{}, false},
		{"2027-03-28T02:30", time.Time{}, false},
		{"2027-03-28T02:59:59", time.Time{}, false},
		{"2027-03-28T03:00", time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC), false},
		{"2027-10-31T01:59", time.Date(2027, 10, 30, 23, 59, 0, 0, time.UTC), false},
		{"2027-10-31T02:00", time.Date(2027, 10, 31, 0, 0, 0, 0, time.UTC), true},
		{"2027-10-31T02:30", time.Date(2027, 10, 31, 0, 30, 0, 0, time.UTC), true},
		{"2027-10-31T03:00", time.Date(2027, 10, 31, 2, 0, 0, 0, time.UTC), false},
		{"2027-01-05T19:30", time.Date(2027, 1, 5, 18, 30, 0, 0, time.UTC), false},
		{"2027-01-05T19:30:15", time.Date(2027, 1, 5, 18, 30, 15, 0, time.UTC), false},
	} {
		got, twice, err := ParseForm(tc.in, berlin)
		if tc.want.IsZero() {
			var gap *GapError
			if !errors.As(err, &gap) || gap.Zone != "Europe/Berlin" {
				t.Errorf("ParseForm(%q): got %v, %v, want a gap in Europe/Berlin", tc.in, got, err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) || twice != tc.twice {
			t.Errorf("ParseForm(%q): got %v twice=%v err=%v, want %v twice=%v", tc.in, got.UTC(), twice, err, tc.want, tc.twice)
		}
		if len(tc.in) == len(formLayout) {
			if back := Form(got, berlin); back != tc.in {
				t.Errorf("Form(ParseForm(%q)): got %q, want it as typed", tc.in, back)
			}
		}
	}
	for _, bad := range []string{"", "tomorrow", "2027-13-01T10:00", "2027-01-05 19:30", "2027-01-05T25:00"} {
		if _, _, err := ParseForm(bad, berlin); !errors.Is(err, ErrFormTime) {
			t.Errorf("ParseForm(%q): got %v, want ErrFormTime", bad, err)
		}
	}
}

// TestParseFormEveryQuarterHour: through a week around each of a year's clock changes
// in zones north and south, every typed quarter hour reads back as typed or is a gap
// that no instant shows, checked against the instants themselves.
func TestParseFormEveryQuarterHour(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "UTC"} {
		loc := mustLoad(t, name)
		shown := map[string]int{} // wall clock → instants that show it
		from := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
		for u := from; u.Before(from.AddDate(1, 0, 0)); u = u.Add(15 * time.Minute) {
			shown[Form(u, loc)]++
		}
		for wall := from; wall.Before(from.AddDate(1, 0, 0)); wall = wall.Add(15 * time.Minute) {
			v := wall.Format(formLayout)
			if wall.Month() == 1 && wall.Day() < 3 || wall.Month() == 12 && wall.Day() > 29 {
				continue // the year's edges: instants outside the loop show them
			}
			got, twice, err := ParseForm(v, loc)
			switch n := shown[v]; {
			case n == 0:
				var gap *GapError
				if !errors.As(err, &gap) {
					t.Errorf("%s %s: got %v, %v, want a gap", name, v, got, err)
				}
			case err != nil || Form(got, loc) != v || twice != (n > 1):
				t.Errorf("%s %s: got %v twice=%v err=%v, want it back as typed, twice=%v", name, v, got, twice, err, n > 1)
			case twice && Form(got.Add(-time.Hour), loc) == v || twice && Form(got.Add(-30*time.Minute), loc) == v:
				t.Errorf("%s %s: got %v, want the first instant that shows it", name, v, got)
			}
		}
	}
}

// TestEveryNameLoads: every zone the form offers loads from the tz database built
// into the program, and names the zone it was asked for.
func TestEveryNameLoads(t *testing.T) {
	t.Parallel()
	all := Names()
	if len(all) < 300 {
		t.Fatalf("got %d names, want the IANA tables' 400 or so", len(all))
	}
	for _, n := range all {
		if loc, err := Load(n); err != nil || loc.String() != n {
			t.Errorf("Load(%q): got %v, %v", n, loc, err)
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "Local", "Europe/Nowhere", "../etc/passwd", "/etc/localtime", "Europe/Berlin "} {
		if loc, err := Load(bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("Load(%q): got %v, %v, want ErrUnknown", bad, loc, err)
		}
	}
	if got := Of("Europe/Nowhere"); got != time.UTC {
		t.Errorf("Of(unknown): got %v, want UTC", got)
	}
}
