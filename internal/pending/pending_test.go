package pending

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestSet: Wait on a key waits for its work and not for another key's; the work under
// one key runs in the order given; Drain waits for everything, and returns at its
// context's end while work still runs.
func TestSet(t *testing.T) {
	var s Set[string]
	if err := s.Wait(t.Context(), "a"); err != nil {
		t.Fatalf("wait on a key with no work: %v", err)
	}
	release := make(chan struct{})
	var mu sync.Mutex
	var order []int
	s.Go("a", func() {
		<-release
		mu.Lock()
		order = append(order, 1)
		mu.Unlock()
	})
	s.Go("a", func() {
		mu.Lock()
		order = append(order, 2)
		mu.Unlock()
	})
	s.Go("b", func() {})
	if err := s.Wait(t.Context(), "b"); err != nil {
		t.Errorf("wait on b while a's work waits: %v", err)
	}
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := s.Wait(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait on a while its work waits: got %v, want %v", err, context.DeadlineExceeded)
	}
	if err := s.Drain(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("drain while work waits: got %v, want %v", err, context.DeadlineExceeded)
	}
	close(release)
	if err := s.Wait(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]int(nil), order...)
	mu.Unlock()
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("a's work ran in the order %v, want [1 2]", got)
	}
	if err := s.Drain(t.Context()); err != nil {
		t.Errorf("drain once done: %v", err)
	}
	s.mu.Lock()
	left := len(s.m)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("%d keys still marked once their work is done, want 0", left)
	}
}
