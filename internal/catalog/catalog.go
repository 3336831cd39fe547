// Package catalog creates and changes venues, their layouts, and events with their
// inventory: the staff's side of what is for sale. Each operation validates its input,
// runs in one transaction and records its audit entry in that transaction, so that a
// venue, an event and its seats either all exist, with their record, or none does.
//
// A venue's layout is kept apart from any event's seats: an event copies the layout's
// seats, price tiers and standing areas when it is created and owns them from then on.
// Later edits of the layout change only the events made after them.
//
// It imports the generated queries (internal/db), the audit log (internal/staff) and
// the time zones (internal/zone), never booking, web or views: what it makes, booking
// sells through the same tables.
package catalog

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Errors of the catalog; InvalidError says what was wrong with the input.
var (
	ErrVenueNotFound = errors.New("venue not found")
	ErrEventNotFound = errors.New("event not found")
)

// Service runs the catalog's operations on one pool.
type Service struct {
	pool *pgxpool.Pool
}

// New returns the catalog on pool.
func New(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// Actor is who does an operation, for the audit log: a staff member and their address,
// or the zero Actor for the program itself (the demo loader).
type Actor struct {
	StaffID int64
	Address string
}

// venueSubject and eventSubject name a venue and an event in the audit log.
func venueSubject(id int64) string { return fmt.Sprintf("venue:%d", id) }
func eventSubject(id int64) string { return fmt.Sprintf("event:%d", id) }
