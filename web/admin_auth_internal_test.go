package web

import (
	"testing"
	"time"
)

// TestWaitWords: waits in words, rounded up.
func TestWaitWords(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		time.Second: "1 second", 1500 * time.Millisecond: "2 seconds", 90 * time.Second: "90 seconds",
		91 * time.Second: "2 minutes", 5 * time.Minute: "5 minutes", time.Hour + time.Second: "61 minutes",
	} {
		if got := waitWords(d); got != want {
			t.Errorf("waitWords(%v) = %q, want %q", d, got, want)
		}
	}
}
