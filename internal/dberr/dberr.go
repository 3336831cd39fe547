// Package dberr tells a database that is down, restarting or out of connections from
// every other error, so that callers answer 503 with Retry-After instead of 500.
//
// It imports only pgconn, so that every package that talks to PostgreSQL may use it.
package dberr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable means the database could not be reached or gave up for a moment; the
// same request may succeed shortly.
var ErrUnavailable = errors.New("database unavailable")

// Translate maps what pgx returns when the database is down, restarting or out of
// connections to ErrUnavailable, so callers answer 503 rather than 500. Domain errors
// and anything else pass through.
func Translate(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutting down, starting up
			pgErr.Code == "53300",                        // too many connections
			pgErr.Code == "40P01", pgErr.Code == "40001", // deadlock, serialization (after retries)
			pgErr.Code == "57014": // statement timeout
			return fmt.Errorf("%w: %s", ErrUnavailable, pgErr.Code)
		}
		return err
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		pgconn.Timeout(err), pgconn.SafeToRetry(err),
		strings.Contains(err.Error(), "conn closed"),
		strings.Contains(err.Error(), "closed pool"):
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}

// IsUniqueViolation reports whether err is PostgreSQL refusing a duplicate key.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
