// Package staff keeps the box office's accounts: who may log in to the admin pages,
// with which role, and what each of them did (the audit log).
//
// Passwords are hashed with argon2id (alexedwards/argon2id over x/crypto), their
// length capped before hashing and the number of hashes at once bounded (hash.go), so
// a flood of logins costs bounded memory and CPU and waits its turn. Login attempts
// are counted in PostgreSQL before the password is hashed, per account and client and
// per address, so that a stranger's guesses slow the stranger and not the account's
// owner (login.go); an unknown email and a wrong password get the same answer after
// the same work.
//
// It imports the generated queries (internal/db) and clientnet, never booking or web:
// the other domain packages import it to write the audit log.
package staff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
)

// Role is what a member of staff may do.
type Role string

// The roles, from most to least powerful.
const (
	// Admin may do everything, including managing staff accounts and reading the
	// audit log.
	Admin Role = "admin"
	// BoxOffice sells, fixes orders, refunds and holds seats.
	BoxOffice Role = "box_office"
	// Door checks tickets in, and nothing else.
	Door Role = "door"
)

// Roles lists every role, most powerful first.
var Roles = []Role{Admin, BoxOffice, Door}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return r == Admin || r == BoxOffice || r == Door }

// Label is the role's name for people.
func (r Role) Label() string {
	switch r {
	case Admin:
		return "Admin"
	case BoxOffice:
		return "Box office"
	case Door:
		return "Door"
	}
	return string(r)
}

// May reports whether a member with role r may use a page open to allowed. An admin
// may use every page.
func (r Role) May(allowed ...Role) bool {
	if r == Admin {
		return true
	}
	for _, a := range allowed {
		if r == a {
			return true
		}
	}
	return false
}

// Member is a staff account as the admin pages see it.
type Member struct {
	ID        int64
	Email     string
	Name      string
	Role      Role
	AuthEpoch int32
	Disabled  bool
	CreatedAt time.Time
}

func member(r db.Staff) Member {
	return Member{ID: r.ID, Email: r.Email, Name: r.Name, Role: Role(r.Role), AuthEpoch: r.AuthEpoch,
		Disabled: r.DisabledAt != nil, CreatedAt: r.CreatedAt}
}

// Password limits. The maximum is checked before hashing: argon2id takes any length,
// and an unbounded one is free work for an attacker.
const (
	MinPassword = 12
	MaxPassword = 256
)

// Errors of the service. ErrBadLogin is the one answer to an unknown email, a wrong
// password and a disabled account alike; ErrThrottled (a ThrottledError) refuses an
// attempt before its password is looked at.
var (
	ErrBadLogin  = errors.New("staff: wrong email or password")
	ErrThrottled = errors.New("staff: too many failed logins")
	ErrNotFound  = errors.New("staff: no such account")
	ErrExists    = errors.New("staff: an account with this email exists")
	ErrInvalid   = errors.New("staff: invalid")
)

// InvalidError says which field is wrong and why; it wraps ErrInvalid.
type InvalidError struct{ Field, Reason string }

func (e *InvalidError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Service is the staff accounts and the audit log.
type Service struct {
	pool    *pgxpool.Pool
	q       *db.Queries
	policy  Policy
	delays  []float64
	hashing *hashSlots
	params  atomic.Pointer[argon2id.Params]
	// dummy is a hash of nothing, compared against when the email is unknown, so
	// that answer takes as long as a wrong password.
	dummy atomic.Pointer[string]
}

// New returns the service on pool under DefaultPolicy.
func New(pool *pgxpool.Pool) *Service { return NewWith(pool, DefaultPolicy()) }

// NewWith returns the service on pool under p.
func NewWith(pool *pgxpool.Pool, p Policy) *Service {
	s := &Service{pool: pool, q: db.New(pool), policy: p, delays: p.delays(),
		hashing: newHashSlots(p.Hashes, p.HashWait)}
	params := hashParams
	s.setParams(&params)
	return s
}

// NewMember is an account to create.
type NewMember struct {
	Email, Name, Password string
	Role                  Role
}

// CheckPassword says what is wrong with a new password, or nil.
func CheckPassword(p string) error {
	switch n := len(p); {
	case n < MinPassword:
		return &InvalidError{"password", fmt.Sprintf("must be at least %d characters", MinPassword)}
	case n > MaxPassword:
		return &InvalidError{"password", fmt.Sprintf("must be at most %d bytes", MaxPassword)}
	}
	return nil
}

func (m *NewMember) check() error {
	m.Email = strings.ToLower(strings.TrimSpace(m.Email))
	m.Name = strings.TrimSpace(m.Name)
	if a, err := mail.ParseAddress(m.Email); err != nil || a.Address != m.Email || len(m.Email) > 254 {
		return &InvalidError{"email", "must be an email address"}
	}
	if m.Name == "" || len(m.Name) > 200 {
		return &InvalidError{"name", "must be 1 to 200 characters"}
	}
	if !m.Role.Valid() {
		return &InvalidError{"role", "must be admin, box_office or door"}
	}
	return CheckPassword(m.Password)
}

// Add creates an account.
func (s *Service) Add(ctx context.Context, m NewMember) (Member, error) {
	if err := m.check(); err != nil {
		return Member{}, err
	}
	h, err := s.hash(ctx, m.Password, false)
	if err != nil {
		return Member{}, err
	}
	id, err := s.q.StaffCreate(ctx, db.StaffCreateParams{Email: m.Email, Name: m.Name, Role: db.StaffRole(m.Role), PasswordHash: h})
	if dberr.IsUniqueViolation(err) {
		return Member{}, ErrExists
	} else if err != nil {
		return Member{}, dberr.Translate(err)
	}
	return s.Get(ctx, id)
}

// Get returns an account by id.
func (s *Service) Get(ctx context.Context, id int64) (Member, error) {
	r, err := s.q.StaffByID(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Member{}, ErrNotFound
	} else if err != nil {
		return Member{}, dberr.Translate(err)
	}
	return member(r), nil
}

// List returns every account, enabled first.
func (s *Service) List(ctx context.Context) ([]Member, error) {
	rows, err := s.q.StaffList(ctx)
	if err != nil {
		return nil, dberr.Translate(err)
	}
	out := make([]Member, len(rows))
	for i, r := range rows {
		out[i] = member(r)
	}
	return out, nil
}

// Count is the number of accounts.
func (s *Service) Count(ctx context.Context) (int64, error) {
	n, err := s.q.StaffCount(ctx)
	return n, dberr.Translate(err)
}

// SetRole changes an account's role; it takes effect on the member's next request.
func (s *Service) SetRole(ctx context.Context, id int64, role Role) (before, after Member, err error) {
	if !role.Valid() {
		return before, after, &InvalidError{"role", "must be admin, box_office or door"}
	}
	if before, err = s.Get(ctx, id); err != nil {
		return before, after, err
	}
	r, err := s.q.StaffSetRole(ctx, db.StaffSetRoleParams{ID: id, Role: db.StaffRole(role)})
	if err != nil {
		return before, after, dberr.Translate(err)
	}
	return before, member(r), nil
}

// SetDisabled disables or enables an account. Disabling ends its sessions at once.
func (s *Service) SetDisabled(ctx context.Context, id int64, disabled bool) (before, after Member, err error) {
	if before, err = s.Get(ctx, id); err != nil {
		return before, after, err
	}
	r, err := s.q.StaffSetDisabled(ctx, db.StaffSetDisabledParams{ID: id, Disabled: disabled})
	if err != nil {
		return before, after, dberr.Translate(err)
	}
	return before, member(r), nil
}

// SetPassword sets a new password, ends the account's other sessions and forgets the
// devices and addresses it logged in from.
func (s *Service) SetPassword(ctx context.Context, id int64, password string) (Member, error) {
	if err := CheckPassword(password); err != nil {
		return Member{}, err
	}
	h, err := s.hash(ctx, password, false)
	if err != nil {
		return Member{}, err
	}
	r, err := s.q.StaffSetPassword(ctx, db.StaffSetPasswordParams{ID: id, PasswordHash: h})
	if errors.Is(err, pgx.ErrNoRows) {
		return Member{}, ErrNotFound
	} else if err != nil {
		return Member{}, dberr.Translate(err)
	}
	return member(r), nil
}

// Entry is one line of the audit log.
type Entry struct {
	ID        int64
	At        time.Time
	StaffID   int64 // 0: the system or the command line
	StaffName string
	Action    string // "order.refund", "staff.role", …
	Subject   string // what it was done to: "order 42", "staff 3"
	Before    string // JSON, or ""
	After     string
	Address   string
}

// Audit records a staff action. before and after are encoded as JSON (nil: none).
// It takes the querier of the transaction that did the action when there is one,
// so that the action and its record commit together.
func Audit(ctx context.Context, q db.DBTX, staffID int64, action, subject string, before, after any, address string) error {
	enc := func(v any) ([]byte, error) {
		if v == nil {
			return nil, nil
		}
		return json.Marshal(v)
	}
	b, err := enc(before)
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	a, err := enc(after)
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	var who *int64
	if staffID != 0 {
		who = &staffID
	}
	return dberr.Translate(db.New(q).AuditAdd(ctx, db.AuditAddParams{
		StaffID: who, Action: action, Subject: subject, Before: b, After: a, Address: address}))
}

// Audit records a staff action outside any transaction of its own.
func (s *Service) Audit(ctx context.Context, staffID int64, action, subject string, before, after any, address string) error {
	return Audit(ctx, s.pool, staffID, action, subject, before, after, address)
}

// AuditLog returns up to limit entries, newest first, older than beforeID when it is
// not 0.
func (s *Service) AuditLog(ctx context.Context, beforeID int64, limit int32) ([]Entry, error) {
	var cursor *int64
	if beforeID > 0 {
		cursor = &beforeID
	}
	rows, err := s.q.AuditList(ctx, db.AuditListParams{BeforeID: cursor, Max: limit})
	if err != nil {
		return nil, dberr.Translate(err)
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		e := Entry{ID: r.ID, At: r.At, StaffName: r.StaffName, Action: r.Action, Subject: r.Subject,
			Before: string(r.Before), After: string(r.After), Address: r.Address}
		if r.StaffID != nil {
			e.StaffID = *r.StaffID
		}
		out[i] = e
	}
	return out, nil
}
