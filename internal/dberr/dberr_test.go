package dberr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestTranslate(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "x"} }
	domain := errors.New("sold out")
	tests := []struct {
		name        string
		in          error
		unavailable bool // else the error must come back unchanged
	}{
		{"nil", nil, false},
		{"a domain error", domain, false},
		{"no rows", pgx.ErrNoRows, false},
		{"unique violation", pg("23505"), false},
		{"foreign key violation", pg("23503"), false},
		{"check violation", pg("23514"), false},
		{"bad input", pg("22P02"), false},
		{"missing table", pg("42P01"), false},
		{"a cancelled request is not an outage", context.Canceled, false},
		{"connection failure", pg("08006"), true},
		{"cannot connect", pg("08001"), true},
		{"admin shutdown", pg("57P01"), true},
		{"crash shutdown", pg("57P02"), true},
		{"starting up", pg("57P03"), true},
		{"too many connections", pg("53300"), true},
		{"deadlock after retries", pg("40P01"), true},
		{"serialization failure after retries", pg("40001"), true},
		{"statement timeout", pg("57014"), true},
		{"wrapped deadlock", fmt.Errorf("hold: %w", pg("40P01")), true},
		{"deadline", context.DeadlineExceeded, true},
		{"wrapped deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection reset", fmt.Errorf("read: %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), true},
		{"eof", io.EOF, true},
		{"unexpected eof", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"conn closed", errors.New("conn closed"), true},
		{"closed pool", errors.New("closed pool"), true},
		{"already unavailable", ErrUnavailable, true},
		{"already wrapped", fmt.Errorf("%w: 08006", ErrUnavailable), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Translate(tt.in)
			if tt.unavailable {
				if !errors.Is(got, ErrUnavailable) {
					t.Errorf("Translate(%v) = %v, want ErrUnavailable", tt.in, got)
				}
				return
			}
			if got != tt.in {
				t.Errorf("Translate(%v) = %v, want it unchanged", tt.in, got)
			}
		})
	}
}

// TestTranslateKeepsWrapped: an error that already says unavailable comes back as it
// was, not wrapped again.
func TestTranslateKeepsWrapped(t *testing.T) {
	t.Parallel()
	in := fmt.Errorf("%w: 57P01", ErrUnavailable)
	if got := Translate(in); got != in {
		t.Errorf("Translate(%v) = %v, want it unchanged", in, got)
	}
}

// TestTranslateKeepsCause: a translated database error still names its cause.
func TestTranslateKeepsCause(t *testing.T) {
	t.Parallel()
	got := Translate(&pgconn.PgError{Code: "53300", Message: "too many clients"})
	if want := "database unavailable: 53300"; got == nil || got.Error() != want {
		t.Errorf("got %v, want %q", got, want)
	}
	got = Translate(io.EOF)
	if !errors.Is(got, ErrUnavailable) || got.Error() != "database unavailable: EOF" {
		t.Errorf("got %v, want ErrUnavailable naming EOF", got)
	}
}
