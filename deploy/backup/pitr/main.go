// Command pitr is the database side of the point-in-time restore drill
// (deploy/backup/pitr-drill.sh): it notes a target time in the middle of an onsale, and
// checks a database restored to that time.
//
//	pitr mark -db URL -event ID -out mark.json
//	pitr check -db RESTORED -source SOURCE -mark mark.json
//	pitr settle -db RESTORED -event ID [-wait 2m]
//
// mark reads the event's confirmed orders, then takes the target time from the
// database's clock: every order it read committed before that time, so a restore to
// it must hold all of them. check compares a restored database with the mark and with
// the source as it stands later: every marked order confirmed, no order confirmed
// after the target, and some orders of the source confirmed after it (else the
// restore would cut nothing and prove nothing); then the seat invariants. settle
// waits until the refunds under way at the target time are done (by a boxoffice
// serving the restored database, whose jobs finish them), then checks every
// invariant, of the seats and of the money.
//
// It reads the tables in SQL through internal/booking/bookingtest, as the tests do.
// The exit status is 1 when a check fails, 2 when it could not be made.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// errFailed marks a check that ran and found something wrong.
var errFailed = errors.New("check failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errFailed):
		fmt.Fprintf(os.Stderr, "pitr: %v\n", err)
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "pitr: %v\n", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout *os.File) error {
	if len(args) == 0 {
		return errors.New("usage: pitr mark|check|settle [flags]")
	}
	fs := flag.NewFlagSet("pitr "+args[0], flag.ContinueOnError)
	db := fs.String("db", "", "PostgreSQL URL of the database to read (required)")
	event := fs.Int64("event", 0, "the event's id (mark, settle)")
	out := fs.String("out", "", "mark: where to write the mark")
	source := fs.String("source", "", "check: the source database as it stands after the target")
	markPath := fs.String("mark", "", "check: the mark written by pitr mark")
	wait := fs.Duration("wait", 2*time.Minute, "settle: how long refunds under way may take")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *db == "" {
		return errors.New("-db is required")
	}
	pool, err := pgxpool.New(ctx, *db)
	if err != nil {
		return err
	}
	defer pool.Close()
	switch args[0] {
	case "mark":
		if *event == 0 || *out == "" {
			return errors.New("mark needs -event and -out")
		}
		return markTarget(ctx, pool, *event, *out, stdout)
	case "check":
		if *source == "" || *markPath == "" {
			return errors.New("check needs -source and -mark")
		}
		return checkRestore(ctx, pool, *source, *markPath, stdout)
	case "settle":
		if *event == 0 {
			return errors.New("settle needs -event")
		}
		return settle(ctx, pool, *event, *wait, stdout)
	}
	return fmt.Errorf("unknown subcommand %q: mark, check or settle", args[0])
}
