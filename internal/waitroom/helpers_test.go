package waitroom

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// wait bounds every wait for something to happen.
const wait = 10 * time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var testKey = Key{ID: "k1", Secret: []byte("test secret, 32 bytes long......")}

// newRoom returns a Room with the test key, closed when the test ends.
func newRoom(t *testing.T, rdb *redis.Client, prefix string, hooks Hooks, opt Options) *Room {
	t.Helper()
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

// eventually polls cond until it holds, failing the test after within.
func eventually(t *testing.T, what string, within time.Duration, cond func() bool) {
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

// redisNow is Redis's clock, which decides everything in the room.
func redisNow(t *testing.T, rdb *redis.Client) time.Time {
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

func active(t *testing.T, rdb *redis.Client, prefix string, eventID int64) int {
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

// redisServer is a private redis-server, child of the test, to stop, hang and restart.
type redisServer struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (s *redisServer) stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func (s *redisServer) hang()   { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }
func (s *redisServer) resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// startRedis starts an empty redis-server on port and waits until it says it is ready.
func startRedis(t *testing.T, port string) *redisServer {
	t.Helper()
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--daemonize", "no")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	s := &redisServer{cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				close(ready)
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-s.done
	})
	select {
	case <-ready:
	case <-s.done:
		t.Fatal("redis-server exited, want it running")
	case <-time.After(wait):
		t.Fatal("redis-server not ready")
	}
	return s
}

// freePort returns a TCP port nobody listens on just now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// privateRedis starts a private redis-server and a client of it.
func privateRedis(t *testing.T) (*redisServer, *redis.Client, string) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	port := freePort(t)
	srv := startRedis(t, port)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return srv, rdb, port
}
