// Command boxoffice serves the ticket shop and its JSON API, migrates the database, and
// loads the demo event.
//
//	boxoffice serve     migrate, then serve on ADDR (default :8080)
//	boxoffice migrate   apply pending migrations
//	boxoffice seed      create the demo venue and event unless they exist, and a
//	                    demo admin when there is no staff account
//	boxoffice seed-stadium [-slug s -seats n -onsale-in d …]
//	                    create a big event with its onsale ahead (make onsale)
//	boxoffice staff     add or list staff accounts (boxoffice staff help)
//
// It is the product's one command: it builds the program through the composition root
// (internal/app) and imports none of the lab's code (internal/benchkit).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // venues' time zones load on a machine without a zoneinfo database
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "boxoffice:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "serve":
		return serve(ctx, getenv, stdout)
	case "migrate":
		return migrate(ctx, getenv, stdout)
	case "seed":
		return seed(ctx, getenv, stdout)
	case "seed-stadium":
		return seedStadium(ctx, args[1:], getenv, stdout)
	case "staff":
		return staffCmd(ctx, args[1:], getenv, stdin, stdout)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, "usage: boxoffice [serve|migrate|seed|seed-stadium|staff]")
		return nil
	}
	return fmt.Errorf("unknown command %q: want serve, migrate, seed, seed-stadium or staff", cmd)
}
