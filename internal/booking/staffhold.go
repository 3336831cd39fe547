package booking

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/staff"
)

// Kinds of staff hold: seats kept off sale by the box office.
const (
	HoldHouse = "house" // house seats, kept for the production
	HoldPress = "press" // press and guests
	HoldKill  = "kill"  // never sold: a bad view, a camera position
)

// StaffHoldKinds lists the kinds, in the order the admin pages offer them.
var StaffHoldKinds = []string{HoldHouse, HoldPress, HoldKill}

// untilReleased is the release time of a staff hold that lasts until it is released by
// hand. A time rather than NULL or 'infinity': every statement reads a seat's hold by
// hold_expires_at > now(), and pgx cannot scan 'infinity' into a time.Time.
var untilReleased = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// MaxStaffHoldSeats bounds one staff hold. Not a rule of the house: a bound on one
// request's work.
const MaxStaffHoldSeats = 500

// MaxReason bounds a staff hold's reason, in bytes.
const MaxReason = 500

// Errors of staff holds.
var (
	// ErrReleaseInPast: the release time asked for has passed by the database clock.
	ErrReleaseInPast = errors.New("the release time has passed")
	// ErrInvalidStaffHold: a kind that is not one of StaffHoldKinds, no reason or too
	// long a one, no seats or too many; the error says which.
	ErrInvalidStaffHold = errors.New("invalid staff hold")
)

// StaffHoldRequest asks to keep seats off sale.
type StaffHoldRequest struct {
	EventID int64
	SeatIDs []int64
	Kind    string // one of StaffHoldKinds
	Reason  string
	// ReleaseAt is when the seats go back on sale by themselves; zero: only by hand.
	ReleaseAt time.Time
	StaffID   int64
	Address   string // the member's address, for the audit log
}

// StaffHold is a staff hold in force.
type StaffHold struct {
	ID        HoldID
	Kind      string
	Reason    string
	StaffName string
	CreatedAt time.Time
	// ReleaseAt is when it lapses by itself; zero if it lasts until released by hand.
	ReleaseAt time.Time
	Seats     []Seat
}

// staffBuyer is the buyer of a member's staff holds: no session's buyer (random
// base32) looks like it, so no online buyer can check out or release them.
func staffBuyer(staffID int64) string { return "staff:" + strconv.FormatInt(staffID, 10) }

func (r StaffHoldRequest) check() error {
	switch {
	case !slices.Contains(StaffHoldKinds, r.Kind):
		return invalid(ErrInvalidStaffHold, "kind %q is not house, press or kill", r.Kind)
	case r.Reason == "" || len(r.Reason) > MaxReason:
		return invalid(ErrInvalidStaffHold, "the reason must be 1 to %d characters", MaxReason)
	case len(r.SeatIDs) == 0 || len(r.SeatIDs) > MaxStaffHoldSeats:
		return invalid(ErrInvalidStaffHold, "choose 1 to %d seats", MaxStaffHoldSeats)
	case r.StaffID == 0:
		return errors.New("staff hold without a member of staff")
	}
	return nil
}

// HoldForStaff keeps seats off sale for a member of staff, all or nothing: if any seat
// is taken nothing is held and the error (*SeatsUnavailableError) names the taken
// seats. The seats are claimed by the same conditional statement as a buyer's hold;
// the hold lapses at ReleaseAt by the database clock, like a buyer's, and until then
// no buyer can hold, check out or buy them. Neither the sales window nor the
// per-buyer limit applies. The action is audited in its own transaction.
func (s *Desk) HoldForStaff(ctx context.Context, req StaffHoldRequest) (StaffHold, error) {
	if err := req.check(); err != nil {
		return StaffHold{}, err
	}
	ids := slices.Clone(req.SeatIDs)
	slices.Sort(ids)
	if len(slices.Compact(ids)) != len(req.SeatIDs) {
		return StaffHold{}, invalid(ErrInvalidStaffHold, "a seat is named twice")
	}
	expires := untilReleased
	if !req.ReleaseAt.IsZero() {
		expires = req.ReleaseAt
	}
	var h StaffHold
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		row, err := q.StaffHoldCreate(ctx, db.StaffHoldCreateParams{
			EventID: req.EventID, Buyer: staffBuyer(req.StaffID), SeatCount: int32(len(ids)), ExpiresAt: expires,
			Kind: req.Kind, Reason: req.Reason, StaffID: req.StaffID,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrReleaseInPast
		} else if isForeignKeyViolation(err) {
			return ErrEventNotFound
		} else if err != nil {
			return err
		}
		seats, err := q.SeatHold(ctx, db.SeatHoldParams{EventID: req.EventID, SeatIds: ids, HoldID: &row.ID, ExpiresAt: &row.ExpiresAt})
		if err != nil {
			return err
		}
		if len(seats) < len(ids) {
			return s.shortfall(ctx, q, req.EventID, ids, seats)
		}
		h = StaffHold{ID: HoldID{Event: req.EventID, Seq: row.ID}, Kind: req.Kind, Reason: req.Reason, Seats: seatsOf(seats)}
		if !req.ReleaseAt.IsZero() {
			h.ReleaseAt = row.ExpiresAt
		}
		return staff.Audit(ctx, tx, req.StaffID, "hold.create", h.ID.String(), nil, auditHold(h), req.Address)
	})
	if err != nil {
		return StaffHold{}, err
	}
	s.announce(ctx, req.EventID, ids)
	return h, nil
}

// shortfall says why a claim of ids got only the seats claimed: seats that are not the
// event's, or seats someone else has.
func (s *store) shortfall(ctx context.Context, q *db.Queries, eventID int64, ids []int64, claimed []db.SeatHoldRow) error {
	exist, err := q.SeatsByIDs(ctx, db.SeatsByIDsParams{EventID: eventID, SeatIds: ids})
	if err != nil {
		return err
	}
	if len(exist) < len(ids) {
		var unknown []int64
		for _, id := range ids {
			if !slices.ContainsFunc(exist, func(r db.SeatsByIDsRow) bool { return r.ID == id }) {
				unknown = append(unknown, id)
			}
		}
		// The staff hold's row was inserted in this transaction, so its event exists.
		return &UnknownSeatsError{SeatIDs: unknown}
	}
	var taken []int64
	for _, id := range ids {
		if !slices.ContainsFunc(claimed, func(r db.SeatHoldRow) bool { return r.ID == id }) {
			taken = append(taken, id)
		}
	}
	return &SeatsUnavailableError{SeatIDs: taken}
}

// ReleaseStaffHold puts a staff hold's seats back on sale at once, by the conditional
// release every hold uses, and announces them. Releasing a hold that is released or
// lapsed already succeeds and changes nothing; a buyer's hold is not found.
func (s *Desk) ReleaseStaffHold(ctx context.Context, id HoldID, staffID int64, address string) error {
	var freed []int64
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		freed = nil
		h, err := q.StaffHoldLock(ctx, db.StaffHoldLockParams{EventID: id.Event, ID: id.Seq})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrHoldNotFound
		} else if err != nil {
			return err
		}
		if !h.Live {
			return nil
		}
		if freed, err = s.releaseLocked(ctx, q, id, false); err != nil { // staff holds are seats only
			return err
		}
		before := map[string]any{"kind": h.Kind, "reason": h.Reason, "seatIds": freed}
		if h.ExpiresAt.Before(untilReleased) {
			before["releaseAt"] = h.ExpiresAt
		}
		return staff.Audit(ctx, tx, staffID, "hold.release", id.String(), before, map[string]any{"released": true}, address)
	})
	if err != nil {
		return err
	}
	s.announce(ctx, id.Event, freed)
	return nil
}

// StaffHolds lists the event's staff holds in force, oldest first. A hold that lapsed
// is not among them, whether or not the tidy-up has run.
func (s *Desk) StaffHolds(ctx context.Context, eventID int64) ([]StaffHold, error) {
	rows, err := s.q.StaffHoldsOfEvent(ctx, eventID)
	if err != nil {
		return nil, translate(err)
	}
	var out []StaffHold
	for _, r := range rows {
		if n := len(out); n == 0 || out[n-1].ID.Seq != r.ID {
			h := StaffHold{ID: HoldID{Event: eventID, Seq: r.ID}, Kind: r.Kind, Reason: r.Reason,
				StaffName: r.StaffName, CreatedAt: r.CreatedAt}
			if r.ExpiresAt.Before(untilReleased) {
				h.ReleaseAt = r.ExpiresAt
			}
			out = append(out, h)
		}
		h := &out[len(out)-1]
		h.Seats = append(h.Seats, Seat{ID: r.SeatID, Section: r.Section, Row: r.RowLabel, Number: int(r.Number), PriceCents: int(r.PriceCents)})
	}
	return out, nil
}

// auditHold is what the audit log records of a staff hold.
func auditHold(h StaffHold) map[string]any {
	a := map[string]any{"kind": h.Kind, "reason": h.Reason, "seatIds": seatIDsOf(h.Seats)}
	if !h.ReleaseAt.IsZero() {
		a["releaseAt"] = h.ReleaseAt
	}
	return a
}
