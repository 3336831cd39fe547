// Command queuebench measures the waiting room on one instance: queue joins and position
// checks per second through the Room API (internal/waitroom) with 64 concurrent callers,
// next to redis-benchmark running the same Redis commands with 64 connections in the
// same run (absolute numbers drift between runs on shared machines; ratios taken side
// by side do not).
//
//	join       Room.Join of a new visitor              vs  redis-benchmark ZADD
//	status     Room.Status of a waiting visitor        vs  redis-benchmark ZRANK
//	                                                    and EVALSHA of the status script
//	go-redis   ZRANK through go-redis alone (the client's share of Status's cost)
//	raw join   EVALSHA of the join script (the server's share of Join's cost)
//
// The event's room has no slots, so every join queues and every check finds a waiter.
// Keys go under a prefix of the run's own and are deleted at the end. REDIS_URL names
// the Redis; `make bench-queue` sets it up. redis-benchmark must be on PATH.
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
		fmt.Fprintln(os.Stderr, "queuebench:", err)
		os.Exit(1)
	}
}
