package dbtest_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/dbtest"
)

func TestProxyDownUp(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.URL(t)
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := dbtest.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	proxied := dbtest.ProxiedURL(t, dbURL, p)

	connect := func() (*pgx.Conn, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		return pgx.Connect(ctx, proxied)
	}
	selectOne := func(conn *pgx.Conn) error {
		var one int
		return conn.QueryRow(t.Context(), "SELECT 1").Scan(&one)
	}

	conn, err := connect()
	if err != nil {
		t.Fatalf("connect through proxy: %v", err)
	}
	defer conn.Close(context.Background())
	if got := conn.Config().Port; strconv.Itoa(int(got)) != portOf(t, p.Addr()) {
		t.Fatalf("connected on port %d, want the proxy's %s", got, p.Addr())
	}
	if err := selectOne(conn); err != nil {
		t.Fatalf("query through proxy: %v", err)
	}

	p.Down()
	if err := selectOne(conn); err == nil {
		t.Errorf("query on an open connection after Down: got no error, want one")
	}
	if c, err := connect(); err == nil {
		c.Close(context.Background())
		t.Errorf("connect after Down: got no error, want one")
	}

	p.Up()
	again, err := connect()
	if err != nil {
		t.Fatalf("connect after Up: %v", err)
	}
	defer again.Close(context.Background())
	if err := selectOne(again); err != nil {
		t.Errorf("query after Up: %v", err)
	}
}

func TestProxiedURL(t *testing.T) {
	t.Parallel()
	p := dbtest.NewProxy(t, "127.0.0.1:1")
	port := portOf(t, p.Addr())
	tests := []struct {
		in, want string
	}{
		{
			"postgres://u@127.0.0.1:55432/db?sslmode=disable",
			"postgres://u@127.0.0.1:" + port + "/db?sslmode=disable",
		},
		{
			"postgresql://u:pw@db.example:5432/db?host=/run/pg&sslmode=disable",
			"postgresql://u:pw@127.0.0.1:" + port + "/db?sslmode=disable",
		},
		{
			"host=/run/pg dbname=db",
			"host=/run/pg dbname=db host=127.0.0.1 port=" + port,
		},
	}
	for _, tt := range tests {
		if got := dbtest.ProxiedURL(t, tt.in, p); got != tt.want {
			t.Errorf("ProxiedURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
