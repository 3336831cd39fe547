package live

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

// TestHubGoroutinesReturn: once its watchers leave, an event's subscription ends after
// the linger (Unwatched called, no subscriber left in Redis) and the hub is back to its
// flusher alone; Close takes the goroutines back to where they were before the hub.
// Not parallel: it counts the process's goroutines.
func TestHubGoroutinesReturn(t *testing.T) {
	rdb, prefix := dbtest.Redis(t)
	base := runtime.NumGoroutine()
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{Linger: 20 * time.Millisecond})
	var ws []*Watcher
	for ev := int64(1); ev <= 3; ev++ {
		for range 10 {
			ws = append(ws, watch(t, h, ev, 0))
		}
	}
	for range 3 {
		k.nextReset(t)
	}
	for _, w := range ws {
		w.Close()
	}
	for range 3 {
		select {
		case <-k.gone:
		case <-time.After(wait):
			t.Fatal("got no Unwatched call, want one per event")
		}
	}
	for ev := int64(1); ev <= 3; ev++ {
		eventually(t, fmt.Sprintf("no subscriber left for event %d", ev), func() bool { return subscribers(t, rdb, prefix, ev) == 0 })
	}
	eventually(t, "goroutines back to the hub's flusher", func() bool { return runtime.NumGoroutine() <= base+1 })

	// Watchers that are never closed end with the hub.
	for range 10 {
		watch(t, h, 4, 0)
	}
	k.nextReset(t)
	h.Close()
	eventually(t, "goroutines back to before the hub", func() bool { return runtime.NumGoroutine() <= base })
}

// TestHubComesBackAfterLinger: a watcher arriving after the subscription was dropped
// gets a new one, which starts with a Reset hook call.
func TestHubComesBackAfterLinger(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{Linger: time.Millisecond})
	w := watch(t, h, 1, 0)
	k.nextReset(t)
	w.Close()
	<-k.gone
	publish(t, rdb, prefix, 1, 5) // nobody listens
	w = watch(t, h, 1, 1)
	if r := k.nextReset(t); r.version != 1 {
		t.Errorf("got Reset hook at version %d, want 1", r.version)
	}
	publish(t, rdb, prefix, 1, 6)
	if got := until(t, w, 2); !slices.Equal(got, []int64{6}) {
		t.Errorf("got seats %v, want [6]", got)
	}
}

// TestHubSurvivesRedisRestart: a private Redis is killed and started again, empty, on
// the same port. The hub notices the new subscription, resets its watchers and the
// Reset hook, and the feed resumes without anyone asking.
func TestHubSurvivesRedisRestart(t *testing.T) {
	t.Parallel()
	srv := dbtest.StartRedisServer(t, "")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	prefix := "test:"

	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{})
	w := watch(t, h, 1, 0)
	k.nextReset(t)
	publish(t, rdb, prefix, 1, 1)
	publish(t, rdb, prefix, 1, 2)
	until(t, w, 2)

	srv.Stop()
	srv = dbtest.StartRedisServer(t, srv.Port)
	if r := k.nextReset(t); r.version != 0 {
		t.Errorf("after the restart got Reset hook at version %d, want 0 (an empty Redis)", r.version)
	}
	if b := next(t, w); !b.Reset {
		t.Errorf("after the restart got %+v, want a Reset", b)
	}
	var v int64
	eventually(t, "publishing to the restarted Redis", func() bool {
		ids := `[3]`
		n, err := publishScript.Run(t.Context(), rdb, []string{versionKey(prefix, 1)}, seatsChannel(prefix, 1), ids).Int64()
		v = n
		return err == nil
	})
	if got := until(t, w, v); !slices.Equal(got, []int64{3}) {
		t.Errorf("after the restart got seats %v, want [3]", got)
	}
	srv.Stop()
}
