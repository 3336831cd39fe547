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
// 10 s. With the notice (the room's Notice, 1.5 s) the expected wait is 12.8 s (28 %
// long). Another, shown 2 s at the draw for 88 admissions at the full 44/s, learned of
// its turn 3.4 s later: 41 % short from any rate, 3 % long with the notice.
func TestReplay(t *testing.T) {
	t.Parallel()
	trace, report := replayFiles(t, "1,4.000,false,30.000,20.000,13,440,40.00,bought\n"+
		"2,5.000,false,,21.000,20,800,40.00,cut by the time limit\n"+
		"3,-30.000,true,4.400,1.000,2,88,44.00,bought\n",
		`{"admission":{"configuredPerSecond":44},"timeline":[{"t":0,"admissionLimit":44},{"t":15,"admissionLimit":35.2}]}`)
	var out strings.Builder
	if err := replayETA(trace, report, -1, &out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	for rule, want := range map[string]string{
		"as shown": "0.0 %", "present: min(measured, limit)": "0.0 %",
		"expected: halfway to the climb": "50.0 %", "configured": "50.0 %",
		"expected, and the notice": "50.0 %",
	} {
		re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(rule) + ` +(\d+\.\d %)`)
		m := re.FindStringSubmatch(out.String())
		if m == nil || m[1] != want {
			t.Errorf("%s: got %v, want %s within ±20 %%", rule, m, want)
		}
	}
	if !strings.HasPrefix(out.String(), "2 first ETAs (1 of the pre-queue)") {
		t.Errorf("want the two admitted buyers counted, got %q", strings.SplitN(out.String(), "\n", 2)[0])
	}
	// Which buyer each rule got right: the pre-queue's column.
	for rule, want := range map[string]string{"expected: halfway to the climb": "0.0 %", "expected, and the notice": "100.0 %"} {
		re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(rule) + ` +\d+\.\d % +(\d+\.\d %)`)
		if m := re.FindStringSubmatch(out.String()); m == nil || m[1] != want {
			t.Errorf("%s, the pre-queue: got %v, want %s within ±20 %%", rule, m, want)
		}
	}
}

// replayFiles writes a trace of rows (under the trace's header) and a report for
// replayETA, and answers their paths.
func replayFiles(t *testing.T, rows, report string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	tp, rp := filepath.Join(dir, "trace.csv"), filepath.Join(dir, "report.json")
	writeTestFile(t, tp, "buyer,joined,pre_queue,admitted,eta_at,eta_seconds,eta_places,eta_rate,outcome\n"+rows)
	writeTestFile(t, rp, report)
	return tp, rp
}

func writeTestFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayFront: a front-door run's buyer of the pre-queue, shown its wait half a
// second after the draw for 256 admissions at the full 128/s, was let in 4.5 s later:
// the cursor opened 2 s after the draw (the report's settle). From the rate and the
// notice alone the wait is 3.5 s (22 % short); with the 1.5 s left of the settle, 5 s
// (11 % long). Without the settle (-settle 0, the negative control) the front door's
// line is not replayed.
func TestReplayFront(t *testing.T) {
	t.Parallel()
	trace, report := replayFiles(t, "1,-30.000,true,5.000,0.500,4,256,0.00,bought\n",
		`{"admission":{"configuredPerSecond":128},"timeline":[{"t":-5,"admissionLimit":128}],"frontDoorSettleSeconds":2}`)
	share := func(out, rule string) string {
		m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(rule) + ` +(\d+\.\d %)`).FindStringSubmatch(out)
		if m == nil {
			return "none"
		}
		return m[1]
	}
	for _, settle := range []float64{-1, 0} {
		var out strings.Builder
		if err := replayETA(trace, report, settle, &out); err != nil {
			t.Fatal(err)
		}
		t.Log("\n" + out.String())
		want := map[string]string{"expected, and the notice": "0.0 %", "front door: expected, notice, opening": "100.0 %"}
		if settle == 0 {
			want["front door: expected, notice, opening"] = "none"
		}
		for rule, w := range want {
			if got := share(out.String(), rule); got != w {
				t.Errorf("settle %g, %s: got %s, want %s within ±20 %%", settle, rule, got, w)
			}
		}
	}
}
