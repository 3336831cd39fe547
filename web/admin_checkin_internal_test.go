package web

import "testing"

// TestCSVSafe: cells a spreadsheet would run as formulas are defused; others pass.
func TestCSVSafe(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+SUM(A1)": "'+SUM(A1)", "-2": "'-2", "@cmd": "'@cmd", "\tx": "'\tx", "\rx": "'\rx",
		"ada@example.com": "ada@example.com", "North 2": "North 2", "": "",
	} {
		if got := csvSafe(in); got != want {
			t.Errorf("csvSafe(%q): got %q, want %q", in, got, want)
		}
	}
}
