package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/config"
	"boxoffice/internal/staff"
)

// staffCmd manages staff accounts from the command line:
//
//	boxoffice staff add -email ann@example.com -name "Ann Lee" -role box_office
//
// reads the password from the first line of standard input (so it is in neither the
// shell's history nor the process list), and
//
//	boxoffice staff list
//
// lists the accounts.
func staffCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: boxoffice staff add -email E -name N -role admin|box_office|door (password on stdin) | boxoffice staff list")
	}
	url := getenv("DATABASE_URL")
	if url == "" {
		return errors.New("DATABASE_URL is not set")
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	svc := staff.New(pool)

	switch args[0] {
	case "add":
		fs := flag.NewFlagSet("staff add", flag.ContinueOnError)
		fs.SetOutput(stdout)
		email := fs.String("email", "", "the member's email: their login")
		name := fs.String("name", "", "the member's name, as the pages and the audit log show it")
		role := fs.String("role", "", "admin, box_office or door")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		password, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading the password from standard input: %w", err)
		}
		password = strings.TrimRight(password, "\r\n")
		m, err := svc.Add(ctx, staff.NewMember{Email: *email, Name: *name, Role: staff.Role(*role), Password: password})
		if err != nil {
			return err
		}
		if err := svc.Audit(ctx, 0, "staff.add", fmt.Sprintf("staff %d", m.ID), nil,
			map[string]any{"email": m.Email, "name": m.Name, "role": m.Role}, "command line"); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "staff %d added: %s (%s), role %s\n", m.ID, m.Name, m.Email, m.Role.Label())
		return nil
	case "list":
		members, err := svc.List(ctx)
		if err != nil {
			return err
		}
		for _, m := range members {
			state := ""
			if m.Disabled {
				state = " (disabled)"
			}
			fmt.Fprintf(stdout, "%d\t%s\t%s\t%s%s\n", m.ID, m.Email, m.Name, m.Role.Label(), state)
		}
		return nil
	}
	return fmt.Errorf("unknown staff command %q: want add or list", args[0])
}

// demoAdmin is the account `make run` creates on an empty staff table.
const (
	demoAdminEmail    = "admin@example.com"
	demoAdminPassword = "boxoffice-demo-admin"
)

// seedAdmin creates the demo admin when there is no staff account at all, and says
// how to log in. DEMO_ADMIN_PASSWORD overrides the demo password.
func seedAdmin(ctx context.Context, pool *pgxpool.Pool, getenv func(string) string, stdout io.Writer) error {
	svc := staff.New(pool)
	n, err := svc.Count(ctx)
	if err != nil {
		return err
	}
	addr := getenv("ADDR")
	if addr == "" {
		addr = ":8080"
	}
	if strings.HasPrefix(addr, ":") {
		addr = "localhost" + addr
	}
	if n > 0 {
		fmt.Fprintf(stdout, "staff: %d account(s); log in at http://%s/admin (the demo admin is %s)\n", n, addr, demoAdminEmail)
		return nil
	}
	password := getenv("DEMO_ADMIN_PASSWORD")
	if password == "" {
		if env, _, _ := config.Environment(getenv); env == config.Production {
			return errors.New("DEMO_ADMIN_PASSWORD is not set, and production never gets the demo admin's public password: add staff with `boxoffice staff add`, or set one")
		}
		password = demoAdminPassword
	}
	if _, err := svc.Add(ctx, staff.NewMember{Email: demoAdminEmail, Name: "Demo Admin", Role: staff.Admin, Password: password}); err != nil {
		return fmt.Errorf("demo admin: %w", err)
	}
	fmt.Fprintf(stdout, "staff: demo admin created; log in at http://%s/admin as %s with password %q\n", addr, demoAdminEmail, password)
	return nil
}
