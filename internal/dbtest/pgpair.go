package dbtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresPair is a private PostgreSQL primary and a streaming replica of it, made by
// pg_basebackup -R, for tests of what reads the replica: the shared PostgreSQL of
// DATABASE_URL is no primary to replicate from. Both end with the test.
type PostgresPair struct {
	// PrimaryURL and ReplicaURL name the database postgres on each, as the superuser.
	PrimaryURL, ReplicaURL string

	bin, dir string
	cred     *syscall.Credential // the postgres user's, when the test runs as root
}

// StartPostgresPair makes and starts the pair (a few seconds: initdb, a base backup,
// two starts). Without PostgreSQL's programs the test fails: make test installs them.
func StartPostgresPair(t testing.TB) *PostgresPair {
	t.Helper()
	p := &PostgresPair{bin: pgBin(t)}
	var err error
	if p.dir, err = os.MkdirTemp("", "pgpair-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(p.dir) })
	if os.Geteuid() == 0 {
		p.cred = postgresUser(t, p.dir)
	}
	primary, replica := filepath.Join(p.dir, "primary"), filepath.Join(p.dir, "replica")
	pport, rport := FreePort(t), FreePort(t)
	p.run(t, "initdb", "-D", primary, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	conf := "listen_addresses = '127.0.0.1'\nunix_socket_directories = ''\nwal_level = replica\nmax_wal_senders = 4\nfsync = off\n"
	p.appendTo(t, filepath.Join(primary, "postgresql.conf"), conf)
	p.appendTo(t, filepath.Join(primary, "pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n")
	p.start(t, primary, pport)
	p.run(t, "pg_basebackup", "-h", "127.0.0.1", "-p", pport, "-U", "postgres", "-D", replica, "-R", "-X", "stream", "--checkpoint=fast")
	p.start(t, replica, rport)
	p.PrimaryURL = "postgres://postgres@127.0.0.1:" + pport + "/postgres?sslmode=disable"
	p.ReplicaURL = "postgres://postgres@127.0.0.1:" + rport + "/postgres?sslmode=disable"
	return p
}

// Pools opens a pool on each, closed when the test ends.
func (p *PostgresPair) Pools(t testing.TB) (primary, replica *pgxpool.Pool) {
	t.Helper()
	open := func(url string) *pgxpool.Pool {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatalf("dbtest: open pool: %v", err)
		}
		t.Cleanup(pool.Close)
		return pool
	}
	return open(p.PrimaryURL), open(p.ReplicaURL)
}

// StopReplica stops the replica at once, as a crash would.
func (p *PostgresPair) StopReplica(t testing.TB) {
	t.Helper()
	p.run(t, "pg_ctl", "-D", filepath.Join(p.dir, "replica"), "-m", "immediate", "stop")
}

// start starts the cluster in dir on port, and stops it when the test ends.
func (p *PostgresPair) start(t testing.TB, dir, port string) {
	t.Helper()
	p.run(t, "pg_ctl", "-D", dir, "-l", dir+".log", "-w", "-t", "60", "-o", "-p "+port, "start")
	t.Cleanup(func() {
		cmd := p.cmd(context.Background(), "pg_ctl", "-D", dir, "-m", "immediate", "stop")
		_ = cmd.Run() // a cluster already stopped (StopReplica) has nothing to stop
	})
}

func (p *PostgresPair) appendTo(t testing.TB, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(text)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (p *PostgresPair) cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	return cmd
}

func (p *PostgresPair) run(t testing.TB, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), templateTimeout)
	defer cancel()
	if out, err := p.cmd(ctx, name, args...).CombinedOutput(); err != nil {
		t.Fatalf("dbtest: %s: %v\n%s", name, err, out)
	}
}

// pgBin is the folder of PostgreSQL's server programs: initdb's on PATH, or Debian's
// newest.
func pgBin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatal("dbtest: PostgreSQL's programs (initdb, pg_ctl, pg_basebackup) are not installed")
	}
	return dirs[len(dirs)-1]
}
