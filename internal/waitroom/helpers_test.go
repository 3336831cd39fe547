package waitroom

import (
	"boxoffice/internal/dbtest"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// wait bounds every wait for something to happen.
const wait = 10 * time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var testKey = Key{ID: "k1", Secret: []byte("test secret, 32 bytes long......")}

// newRoom returns a Room with the test key, closed when the test ends.
func newRoom(t *testing.T, rdb redis.UniversalClient, prefix string, hooks Hooks, opt Options) *Room {
	t.Helper()
	// Tests run beside others on a loaded machine, where a Redis call now and then
	// takes longer than the production limit of 1 s; a test about the limit sets
	// its own.
	if opt.Timeout == 0 {
		opt.Timeout = 2 * time.Second
	}
	r := New(rdb, prefix, []Key{testKey}, hooks, quiet, opt)
	return r
}

// run starts r's admitter; the returned stop (also run when the test ends) cancels it
// and waits for Run to return.
func run(t *testing.T, r *Room) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(wait):
				t.Error("Run still running after its context ended")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// events is a Hooks.Events that lists evs.
func events(evs ...Event) func(context.Context) ([]Event, error) {
	return func(context.Context) ([]Event, error) { return evs, nil }
}

// movable is one event a test changes while the room runs (its onsale, as an organiser
// would move it): the room reads it through Hooks.Events (movable.events) at every
// refresh. Until set, the room has no events.
type movable struct{ p atomic.Pointer[Event] }

// set makes ev the event the room reads, and returns it.
func (m *movable) set(ev Event) Event {
	m.p.Store(&ev)
	return ev
}

func (m *movable) events(context.Context) ([]Event, error) {
	if ev := m.p.Load(); ev != nil {
		return []Event{*ev}, nil
	}
	return nil, nil
}

// eventually polls cond until it holds, failing the test after within.
func eventually(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	dbtest.Eventually(t, what, within, cond)
}

// redisNow is Redis's clock, which decides everything in the room.
func redisNow(t *testing.T, rdb redis.UniversalClient) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatalf("redis TIME: %v", err)
	}
	return now
}

// activeScript counts the admissions still running: the slots in use.
var activeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], now + 1, '+inf')`)

func active(t *testing.T, rdb redis.UniversalClient, prefix string, eventID int64) int {
	t.Helper()
	n, err := activeScript.Run(context.Background(), rdb, []string{eventKeys(prefix, eventID)[keyAdmitted]}).Int()
	if err != nil {
		t.Errorf("count active shoppers: %v", err)
	}
	return n
}

// admission is one visitor let in, as onAdmit told it.
type admission struct {
	room    string
	visitor string
	at      time.Time // Redis's clock
	direct  bool
}

// admissions records the admissions of one or more Rooms.
type admissions struct {
	mu   sync.Mutex
	list []admission
	then func(admission) // called for each, outside the lock
}

func (a *admissions) hook(room string) func(int64, []string, time.Time, bool) {
	return func(_ int64, visitors []string, at time.Time, direct bool) {
		var got []admission
		a.mu.Lock()
		for _, v := range visitors {
			ad := admission{room: room, visitor: v, at: at, direct: direct}
			a.list = append(a.list, ad)
			got = append(got, ad)
		}
		then := a.then
		a.mu.Unlock()
		if then != nil {
			for _, ad := range got {
				then(ad)
			}
		}
	}
}

func (a *admissions) all() []admission {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]admission(nil), a.list...)
}

func (a *admissions) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.list)
}

// between counts the admissions at times in [from, to).
func between(list []admission, from, to time.Time) int {
	n := 0
	for _, ad := range list {
		if !ad.at.Before(from) && ad.at.Before(to) {
			n++
		}
	}
	return n
}

// spearman is the rank correlation of arrival and admission order: rank[i] is the
// place in admission order (0-based) of the i-th arrival. 1 is FIFO, -1 reversed, near
// 0 a random permutation (standard deviation 1/sqrt(n-1)).
func spearman(rank []int) float64 {
	n := float64(len(rank))
	var d2 float64
	for i, r := range rank {
		d := float64(i - r)
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

func visitor(prefix string, i int) string { return fmt.Sprintf("%s-%04d", prefix, i) }

// privateRedis starts a private redis-server and a client of it.
func privateRedis(t *testing.T) (*dbtest.RedisServer, *redis.Client, string) {
	t.Helper()
	srv := dbtest.StartRedisServer(t, "")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return srv, rdb, srv.Port
}
