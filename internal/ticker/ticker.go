// Package ticker runs work at a fixed interval until its context ends: the loop
// behind the background chores (the holds' tidy-up, the sessions' clean-up, the
// pruning of failed logins) and the lab's samplers. It imports only the standard
// library, so that every package, the bench kit included, may use it.
package ticker

import (
	"context"
	"time"
)

// Every calls f at every tick of a d ticker (after d, 2d, …) until ctx ends: a call
// that overruns is followed at once by the next, so the rate holds. f runs on the
// caller's goroutine, never two at once.
func Every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
