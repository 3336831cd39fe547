package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReplay: one buyer, shown 13 s for 440 admissions while the room, measured at
// 40/s, was held to 35.2 of its 44/s after a cut, and admitted 10 s later. From the
// present limit the wait is 12.5 s (25 % long); from the expected rate (halfway to the
// climb's mean over the next minute, 38.9/s) 11.3 s (13 %); from the configured rate
// 10 s.
func TestReplay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	report := filepath.Join(dir, "report.json")
	write(t, trace, "buyer,joined,pre_queue,admitted,eta_at,eta_seconds,eta_places,eta_rate,outcome\n"+
		"1,4.000,false,30.000,20.000,13,440,40.00,bought\n"+
		"2,5.000,false,,21.000,20,800,40.00,cut by the time limit\n")
	write(t, report, `{"admission":{"configuredPerSecond":44},"timeline":[{"t":0,"admissionLimit":44},{"t":15,"admissionLimit":35.2}]}`)
	var out strings.Builder
	if err := run(trace, report, &out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	for rule, want := range map[string]string{
		"as shown": "0.0 %", "present: min(measured, limit)": "0.0 %",
		"expected: halfway to the climb": "100.0 %", "configured": "100.0 %",
	} {
		re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(rule) + ` +(\d+\.\d %)`)
		m := re.FindStringSubmatch(out.String())
		if m == nil || m[1] != want {
			t.Errorf("%s: got %v, want %s within ±20 %%", rule, m, want)
		}
	}
	if !strings.HasPrefix(out.String(), "1 first ETAs") {
		t.Errorf("want the one admitted buyer counted, got %q", strings.SplitN(out.String(), "\n", 2)[0])
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
