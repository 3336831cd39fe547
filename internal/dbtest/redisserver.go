package dbtest

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RedisServer is a private, empty redis-server, a child of the test, for tests that
// stop it, hang it (SIGSTOP) or start it again on the same port: the shared Redis of
// REDIS_URL must never be disturbed. It ends with the test.
type RedisServer struct {
	Port string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedisServer starts redis-server on port (a free one when port is "") and waits
// until it is ready. Without redis-server the test fails: make test installs it.
func StartRedisServer(t testing.TB, port string) *RedisServer {
	t.Helper()
	return startRedisServer(t, port)
}

// startRedisServer starts redis-server on port with extra arguments after the usual.
func startRedisServer(t testing.TB, port string, extra ...string) *RedisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("dbtest: redis-server is not on PATH (make test installs Debian's redis-server)")
	}
	if port == "" {
		port = FreePort(t)
	}
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--daemonize", "no"}, extra...)
	cmd := exec.Command("redis-server", args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbtest: start redis-server: %v", err)
	}
	s := &RedisServer{Port: port, cmd: cmd, done: make(chan struct{})}
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
		_ = cmd.Process.Signal(syscall.SIGCONT) // a hung server must be able to die
		_ = cmd.Process.Kill()
		<-s.done
	})
	select {
	case <-ready:
	case <-s.done:
		t.Fatal("dbtest: redis-server exited, want it running")
	case <-time.After(setupTimeout):
		t.Fatal("dbtest: redis-server not ready")
	}
	return s
}

// Addr is where the server listens.
func (s *RedisServer) Addr() string { return "127.0.0.1:" + s.Port }

// Stop kills the server, as a crash would, and waits until it is gone.
func (s *RedisServer) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Hang stops the server's process (SIGSTOP): connections stay open and nothing answers.
func (s *RedisServer) Hang() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a hung server go on (SIGCONT).
func (s *RedisServer) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// FreePort returns a TCP port nobody listens on just now.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
