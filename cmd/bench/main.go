// Command holdbench measures seat holds through boxoffice's JSON API against the
// database's own ceiling, taken with pgbench in the same run: absolute numbers drift
// between runs on shared machines, ratios taken side by side do not.
//
// It creates the database boxoffice_bench (dropping any left over), migrates it, serves
// the real boxoffice handler in-process on 127.0.0.1, and measures in turn:
//
//	api      exact one-seat holds through POST /api/v1/events/{id}/holds
//	pgbench  the same conditional UPDATE, run by pgbench
//	best     best available 4 on a fresh event, then with the cheapest 20,000 held
//	confirm  pay + the webhook's confirmation through the API, against pgbench
//	arrive   the crowd's arrivals (a new session and a waiting-room join) through
//	         the API, against a minimal net/http server doing the same join
//
// DATABASE_URL names the admin database (the bench database is created next to it),
// REDIS_URL the Redis; `make bench` sets both up. pgbench must be on PATH.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "holdbench:", err)
		os.Exit(1)
	}
}
