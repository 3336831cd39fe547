package web

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTTLCache: callers asking at once for a missing value share one load; the value
// is kept for the ttl, then loaded again; a failed load is not kept; a caller that
// gives up returns at once while the load goes on for the others.
func TestTTLCache(t *testing.T) {
	t.Parallel()
	c := newTTLCache[int64, string](time.Minute)
	var clock atomic.Int64 // seconds past start, moved by the test alone
	start := time.Now()
	c.now = func() time.Time { return start.Add(time.Duration(clock.Load()) * time.Second) }
	var loads atomic.Int64
	release := make(chan struct{})
	slow := func(context.Context) (string, error) {
		loads.Add(1)
		<-release
		return "v", nil
	}

	var wg sync.WaitGroup
	got := make([]string, 20)
	for i := range got {
		wg.Go(func() {
			v, err := c.get(t.Context(), 1, slow)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	gaveUp, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { _, err := c.get(gaveUp, 1, slow); done <- err }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a caller that gave up: got %v, want context.Canceled", err)
	}
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != "v" {
			t.Errorf("caller %d: got %q, want v", i, v)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("loads for 21 callers at once: got %d, want 1", n)
	}

	if v, _ := c.get(t.Context(), 1, func(context.Context) (string, error) { return "new", nil }); v != "v" {
		t.Errorf("within the ttl: got %q, want the kept v", v)
	}
	clock.Store(61)
	if v, _ := c.get(t.Context(), 1, func(context.Context) (string, error) { return "new", nil }); v != "new" {
		t.Errorf("past the ttl: got %q, want new", v)
	}

	failing := func(context.Context) (string, error) { return "", errors.New("down") }
	if _, err := c.get(t.Context(), 2, failing); err == nil {
		t.Error("a failed load: got no error")
	}
	if v, err := c.get(t.Context(), 2, func(context.Context) (string, error) { return "up", nil }); err != nil || v != "up" {
		t.Errorf("after a failed load: got %q, %v; want it loaded again", v, err)
	}
}
