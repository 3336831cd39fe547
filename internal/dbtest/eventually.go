package dbtest

import (
	"runtime"
	"testing"
	"time"
)

// Eventually polls cond every 5 ms until it holds, failing the test, named by what,
// after within: for what another goroutine, PostgreSQL or Redis will make true soon.
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after %v", what, within)
		}
		runtime.Gosched()
		<-time.After(5 * time.Millisecond)
	}
}
