// Package benchkit is the measurement kit the lab's two commands share (cmd/bench,
// the benchmarks, and cmd/onsale, the onsale simulator): the commands' subcommands
// and signal handling, a database of a run's own, the real program served on
// loopback, statistics (one percentile rule), report formatting and CPU sampling.
//
// It is the lab's one door into the program: the program is built here by its
// composition root (internal/app, web), never copied, and the lab's commands import
// no package of boxoffice but this one (and internal/apptest in their tests). The
// product never imports it.
package benchkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
)

// Env is what a subcommand gets of its process: the standard streams and the
// environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Command is one subcommand: `<program> <Name> [flags] [arguments]`.
type Command struct {
	Name    string
	Summary string // one line, for the program's help
	// Run runs it; flag.ErrHelp (from a -h) ends the program without an error.
	Run func(ctx context.Context, args []string, env Env) error
}

// ExitError ends the program with an exit status other than 1.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Main runs the subcommand os.Args names until it returns or SIGINT or SIGTERM
// cancels it, and exits: 0 when it succeeded, an ExitError's code, or 1 on any other
// error. doc heads the program's help (`<program> help`).
func Main(program, doc string, commands ...Command) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	err := Dispatch(ctx, program, doc, commands, os.Args[1:], env)
	stop()
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
	var exit *ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.Code)
	}
	os.Exit(1)
}

// Dispatch runs the subcommand args[0] names with the rest of args. `help`, alone or
// with a subcommand's name, prints the program's help or the subcommand's flags.
func Dispatch(ctx context.Context, program, doc string, commands []Command, args []string, env Env) error {
	if len(args) == 0 {
		usage(env.Stderr, program, doc, commands)
		return &ExitError{Code: 2, Err: errors.New("no command named")}
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		if len(rest) == 0 {
			usage(env.Stdout, program, doc, commands)
			return nil
		}
		name, rest = rest[0], []string{"-h"}
	}
	for _, c := range commands {
		if c.Name == name {
			return c.Run(ctx, rest, env)
		}
	}
	usage(env.Stderr, program, doc, commands)
	return &ExitError{Code: 2, Err: fmt.Errorf("no command %q", name)}
}

func usage(w io.Writer, program, doc string, commands []Command) {
	fmt.Fprintf(w, "%s\n\nUsage:\n\n\t%s <command> [flags] [arguments]\n\nCommands:\n\n", strings.TrimSpace(doc), program)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "\t%s\t%s\n", c.Name, c.Summary)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\n`%s help <command>` lists a command's flags.\n", program)
}

// FlagSet is a subcommand's flag set: named `<program> <command>`, writing its
// errors and help to env.Stderr, returning errors rather than exiting.
func FlagSet(program, command string, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet(program+" "+command, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}
