package web

import "testing"

// TestETagMatches: If-None-Match compares weakly, takes lists and "*".
func TestETagMatches(t *testing.T) {
	t.Parallel()
	const etag = `W/"abc"`
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{`W/"abc"`, true},
		{`"abc"`, true},
		{`"x", W/"abc"`, true},
		{`*`, true},
		{`"abcd"`, false},
		{``, false},
		{`W/"ab"`, false},
	} {
		if got := etagMatches(tc.header, etag); got != tc.want {
			t.Errorf("etagMatches(%q, %q): got %v, want %v", tc.header, etag, got, tc.want)
		}
	}
}
