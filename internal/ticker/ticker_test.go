package ticker_test

import (
	"context"
	"testing"
	"time"

	"boxoffice/internal/ticker"
)

// TestEvery: f runs tick after tick, and Every returns once its context ends.
func TestEvery(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	calls := make(chan int, 1)
	returned := make(chan struct{})
	n := 0
	go func() {
		defer close(returned)
		ticker.Every(ctx, time.Millisecond, func() {
			n++
			select {
			case calls <- n:
			default:
			}
		})
	}()
	deadline := time.After(10 * time.Second)
	for seen := 0; seen < 3; {
		select {
		case c := <-calls:
			if c <= seen {
				t.Fatalf("call %d after call %d: want the count to rise", c, seen)
			}
			seen = c
		case <-deadline:
			t.Fatalf("got %d calls in 10 s, want 3", seen)
		}
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Every still running 10 s after its context ended")
	}
}
