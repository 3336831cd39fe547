// Package pending runs work that follows an answer, after the answer has gone out,
// under a key: a later step on the same key waits for it (Wait), so that on this
// instance nothing reads or changes what the work writes before it has written it, and
// a stopping program waits for all of it (Drain) before it closes its connections.
package pending

import (
	"context"
	"sync"
)

// Set is the work under way, by key. The zero value is ready to use.
type Set[K comparable] struct {
	mu  sync.Mutex
	m   map[K]chan struct{} // closed when the key's latest work is done
	all sync.WaitGroup
}

// Go runs work in a goroutine under key k, after any work already under k: the work
// under one key runs in the order it was given.
func (s *Set[K]) Go(k K, work func()) {
	done := make(chan struct{})
	s.mu.Lock()
	if s.m == nil {
		s.m = map[K]chan struct{}{}
	}
	before := s.m[k]
	s.m[k] = done
	s.mu.Unlock()
	s.all.Add(1)
	go func() {
		defer s.all.Done()
		if before != nil {
			<-before
		}
		defer func() {
			s.mu.Lock()
			if s.m[k] == done {
				delete(s.m, k)
			}
			s.mu.Unlock()
			close(done)
		}()
		work()
	}()
}

// Wait waits until the work under k given so far is done, or ctx ends.
func (s *Set[K]) Wait(ctx context.Context, k K) error {
	s.mu.Lock()
	done := s.m[k]
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain waits until all the work given so far is done, or ctx ends.
func (s *Set[K]) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.all.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
