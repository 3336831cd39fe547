// Package checkin checks tickets in at the door. A ticket checks in once, by one
// conditional statement (valid, of this event, not yet in), however many scanners race
// for it: the statement's row is the verdict, and when there is none one read says
// why. Every scan is logged, whatever it found, for the check-in export.
//
// It imports booking (how a seat is named), the generated queries (internal/db) and
// the audit log (internal/staff), never web or views.
package checkin

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
	"boxoffice/internal/staff"
)

// Result is what a scan found.
type Result string

// The answers of a scan.
const (
	Valid      Result = "valid"       // checked in now: let them in
	Used       Result = "used"        // checked in before (Answer says when and where)
	Void       Result = "void"        // refunded or voided
	WrongEvent Result = "wrong_event" // a ticket of another event (Answer names it)
	Unknown    Result = "unknown"     // no ticket has this code
)

// Limits of what a scan may carry. Codes are 32 hex digits; anything much longer is
// not a code, and a gate is a short name ("North 2").
const (
	MaxCode = 100
	MaxGate = 40
)

// Errors of a scan's input.
var (
	ErrInvalid       = errors.New("checkin: invalid scan")
	ErrEventNotFound = errors.New("checkin: event not found")
)

// InvalidError says which field of a scan is wrong and why; it wraps ErrInvalid.
type InvalidError struct{ Field, Reason string }

func (e *InvalidError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap makes every InvalidError an ErrInvalid.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Scan is one ticket code typed or scanned at a gate of an event.
type Scan struct {
	EventID int64
	Gate    string
	Code    string
	StaffID int64  // who scanned; 0 for none (tests)
	Address string // where from, for the audit log
}

// Answer is what the door tells the person scanning.
type Answer struct {
	Result Result
	Code   string
	// At is when the ticket checked in: now for Valid, before for Used.
	At time.Time
	// Gate is where a Used ticket checked in.
	Gate string
	// Place is what a Valid ticket admits to: "Stalls, row F, seat 12" or a GA tier.
	Place string
	// OrderID is the ticket's order (Valid).
	OrderID int64
	// EventName names the event a WrongEvent ticket is for.
	EventName string
}

// Service checks tickets in.
type Service struct {
	pool *pgxpool.Pool
	q    *db.Queries
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool) *Service { return &Service{pool: pool, q: db.New(pool)} }

// normalise trims a scanned or typed code and lower-cases it (codes are lower-case
// hex; a person may type capitals).
func normalise(sc Scan) (Scan, error) {
	sc.Code = strings.ToLower(strings.TrimSpace(sc.Code))
	sc.Gate = strings.TrimSpace(sc.Gate)
	switch {
	case sc.Code == "":
		return sc, &InvalidError{"code", "Type or scan a ticket code."}
	case len(sc.Code) > MaxCode || strings.IndexFunc(sc.Code, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return sc, &InvalidError{"code", "That is not a ticket code: codes are 32 letters and digits."}
	case sc.Gate == "":
		return sc, &InvalidError{"gate", "Choose the gate you are at."}
	}
	return sc, CheckGate(sc.Gate)
}

// CheckGate refuses a gate name no gate could have: too long, or with characters that
// cannot be printed.
func CheckGate(gate string) error {
	if len(gate) > MaxGate || strings.IndexFunc(gate, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return &InvalidError{"gate", "A gate's name is at most 40 characters that can be printed."}
	}
	return nil
}

// CheckIn checks the ticket of sc.Code in at sc.Gate of sc.EventID, once: the first
// scan of a valid ticket answers Valid, every later one Used with the first one's time
// and gate. The scan and its answer are logged in the same transaction.
func (s *Service) CheckIn(ctx context.Context, sc Scan) (Answer, error) {
	sc, err := normalise(sc)
	if err != nil {
		return Answer{}, err
	}
	var staffID *int64
	if sc.StaffID != 0 {
		staffID = &sc.StaffID
	}
	var ans answer
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		ans, err = check(ctx, q, sc, staffID)
		if err != nil {
			return err
		}
		if ans.Result == Valid {
			// The one scan that changes anything: the audit log has it too, with the
			// ticket before and after.
			err := staff.Audit(ctx, tx, sc.StaffID, "ticket.checkin", "ticket "+strconv.FormatInt(ans.ticketID, 10),
				map[string]any{"checked_in_at": nil}, map[string]any{"checked_in_at": ans.At, "gate": sc.Gate, "order": ans.OrderID},
				sc.Address)
			if err != nil {
				return err
			}
		}
		log := db.CheckinLogParams{EventID: sc.EventID, StaffID: staffID, Gate: sc.Gate, Code: sc.Code, Result: string(ans.Result)}
		if ans.ticketID != 0 {
			log.TicketID = &ans.ticketID
		}
		return q.CheckinLog(ctx, log)
	})
	return ans.Answer, dberr.Translate(err)
}

// answer is an Answer with the ticket it is about, for the log.
type answer struct {
	Answer
	ticketID int64
}

// check is the conditional check-in, and when it finds nothing, the one read that
// explains why.
func check(ctx context.Context, q *db.Queries, sc Scan, staffID *int64) (answer, error) {
	r, err := q.TicketCheckIn(ctx, db.TicketCheckInParams{Code: sc.Code, EventID: sc.EventID, Gate: sc.Gate, StaffID: staffID})
	if err == nil {
		place := r.GaTierName
		if r.Section != "" {
			place = booking.SeatName(r.Section, r.RowLabel, int(r.Number))
		}
		return answer{Answer{Result: Valid, Code: sc.Code, At: deref(r.CheckedInAt), Place: place, OrderID: r.OrderID}, r.ID}, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return answer{}, err
	}
	// Nothing checked in. A ticket of this event proves the event; otherwise make sure
	// the scan is not at an event that does not exist, before explaining.
	if _, err := q.EventGet(ctx, sc.EventID); errors.Is(err, pgx.ErrNoRows) {
		return answer{}, ErrEventNotFound
	} else if err != nil {
		return answer{}, err
	}
	t, err := q.TicketByCode(ctx, sc.Code)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return answer{Answer{Result: Unknown, Code: sc.Code}, 0}, nil
	case err != nil:
		return answer{}, err
	case t.EventID != sc.EventID:
		return answer{Answer{Result: WrongEvent, Code: sc.Code, EventName: t.EventName}, t.ID}, nil
	case t.VoidedAt != nil:
		return answer{Answer{Result: Void, Code: sc.Code}, t.ID}, nil
	case t.CheckedInAt != nil:
		a := answer{Answer{Result: Used, Code: sc.Code, At: *t.CheckedInAt}, t.ID}
		if t.CheckedInGate != nil {
			a.Gate = *t.CheckedInGate
		}
		return a, nil
	}
	// Valid, of this event and not in: the check-in must have raced with a change
	// that this read sees undone (a refund rolled back). Say so rather than guess.
	return answer{}, errors.New("checkin: ticket neither checked in nor refused")
}

// Counts says how many of an event's valid tickets are in.
type Counts struct{ CheckedIn, Valid int }

// Counts returns how many of the event's valid tickets are in.
func (s *Service) Counts(ctx context.Context, eventID int64) (Counts, error) {
	r, err := s.q.CheckinCounts(ctx, eventID)
	if err != nil {
		return Counts{}, dberr.Translate(err)
	}
	return Counts{CheckedIn: int(r.CheckedIn), Valid: int(r.Valid)}, nil
}

// LogEntry is one scan in the check-in export.
type LogEntry struct {
	ID        int64
	At        time.Time
	Gate      string
	Code      string
	Result    Result
	StaffName string
	TicketID  int64
	OrderID   int64
}

// exportPage is how many scans an export reads at a time.
const exportPage = 500

// ExportLog calls fn with each scan at the event, oldest first, a page of rows at a
// time; an error from fn stops it.
func (s *Service) ExportLog(ctx context.Context, eventID int64, fn func(LogEntry) error) error {
	var after int64
	for {
		rows, err := s.q.CheckinsExport(ctx, db.CheckinsExportParams{EventID: eventID, AfterID: after, MaxRows: exportPage})
		if err != nil {
			return dberr.Translate(err)
		}
		for _, r := range rows {
			e := LogEntry{ID: r.ID, At: r.At, Gate: r.Gate, Code: r.Code, Result: Result(r.Result), StaffName: r.StaffName, OrderID: r.OrderID}
			if r.TicketID != nil {
				e.TicketID = *r.TicketID
			}
			if err := fn(e); err != nil {
				return err
			}
			after = r.ID
		}
		if len(rows) < exportPage {
			return nil
		}
	}
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
