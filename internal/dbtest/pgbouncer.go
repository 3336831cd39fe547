package dbtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// StartPgBouncer starts a private PgBouncer in transaction mode in front of the
// database dbURL names, a child of the test, and returns the same URL through it. It
// reuses server connections last-in first-out (PgBouncer's default), at most poolSize
// of them. Without pgbouncer the test fails: `.ci/services.sh tools` (make test)
// installs Debian's package. PgBouncer refuses to run as root: as root it runs as the
// postgres user.
func StartPgBouncer(t testing.TB, dbURL string, poolSize int) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
		if _, err := os.Stat(bin); err != nil {
			t.Fatal("dbtest: pgbouncer is not installed (make test installs Debian's pgbouncer)")
		}
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("dbtest: database url: %v", err)
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	port := FreePort(t)
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 200
server_reset_query =
ignore_startup_parameters = extra_float_digits
logfile = %s
`, u.Hostname(), u.Port(), port, filepath.Join(dir, "users.txt"), poolSize, filepath.Join(dir, "pgbouncer.log"))
	users := fmt.Sprintf("%q \"\"\n", u.User.Username())
	for name, text := range map[string]string{"pgbouncer.ini": ini, "users.txt": users} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = postgresUser(t, dir)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbtest: start pgbouncer: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	addr := net.JoinHostPort("127.0.0.1", port)
	Eventually(t, "pgbouncer listening on "+addr, setupTimeout, func() bool {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("dbtest: pgbouncer exited: %s", log)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	through := *u
	through.Host = addr
	return through.String()
}

// postgresUser is the postgres user's credential, with dir made theirs.
func postgresUser(t testing.TB, dir string) *syscall.Credential {
	t.Helper()
	pu, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal("dbtest: pgbouncer refuses to run as root, and there is no postgres user to run it as")
	}
	uid, _ := strconv.Atoi(pu.Uid)
	gid, _ := strconv.Atoi(pu.Gid)
	err = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}
