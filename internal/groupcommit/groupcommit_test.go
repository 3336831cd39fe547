package groupcommit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestWriter: a call alone runs at once, in a batch of its own; the calls that
// arrive while a batch is in flight go together in the next, in their order, each
// given its own result; Max splits them; an error answers every call of its batch;
// a call whose context ends stops waiting.
func TestWriter(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	var batches [][]int
	w := &Writer[int, int]{Max: 3, Run: func(ctx context.Context, in []int) ([]int, error) {
		mu.Lock()
		batches = append(batches, slices.Clone(in))
		held := len(batches) == 1
		mu.Unlock()
		if held {
			<-release
		}
		if in[0] < 0 {
			return nil, errors.New("refused")
		}
		out := make([]int, len(in))
		for i, v := range in {
			out[i] = v * 10
		}
		return out, nil
	}}
	ctx := t.Context()
	got := make(chan [2]int, 10)
	errs := make(chan error, 10)
	do := func(v int) {
		go func() {
			out, err := w.Do(ctx, v)
			if err != nil {
				errs <- err
				return
			}
			got <- [2]int{v, out}
		}()
	}
	do(1)
	for w.Stats().Batches < 1 {
		time.Sleep(time.Millisecond)
	}
	for v := 2; v <= 5; v++ {
		do(v)
		for w.Stats().Waiting < v-1 {
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	for range 5 {
		r := <-got
		if r[1] != r[0]*10 {
			t.Errorf("call %d got %d, want %d", r[0], r[1], r[0]*10)
		}
	}
	if got := w.Stats(); got != (Stats{Calls: 5, Batches: 3}) {
		t.Errorf("stats %+v, want 5 calls in 3 batches, none waiting", got)
	}
	mu.Lock()
	want := [][]int{{1}, {2, 3, 4}, {5}}
	if !slices.EqualFunc(batches, want, slices.Equal) {
		t.Errorf("batches %v, want %v", batches, want)
	}
	mu.Unlock()

	if _, err := w.Do(ctx, -1); err == nil || err.Error() != "refused" {
		t.Errorf("a refused batch: got %v", err)
	}
	select {
	case err := <-errs:
		t.Errorf("unexpected error: %v", err)
	default:
	}

	stuck := &Writer[int, int]{Run: func(ctx context.Context, in []int) ([]int, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}, Timeout: time.Hour}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := stuck.Do(short, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("a call whose context ended: got %v, want %v", err, context.Canceled)
	}
}
