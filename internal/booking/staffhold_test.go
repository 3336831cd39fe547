package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/demo"
)

// announced records what the service announces to live maps, as the live publisher
// would hear it.
type announced struct {
	mu    sync.Mutex
	seats []int64
}

func (a *announced) SeatsChanged(_ context.Context, _ int64, seatIDs []int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seats = append(a.seats, seatIDs...)
}

// take returns what was announced since the last take.
func (a *announced) take() []int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.seats
	a.seats = nil
	slices.Sort(out)
	return out
}

// listening is f with a service that announces to a recorder.
func (f fixture) listening() (fixture, *announced) {
	rec := &announced{}
	f.svc = New(f.pool, f.svc.store.cfg, rec, nil, f.svc.store.log)
	return f, rec
}

// newStaff creates a member of staff of role and returns the id.
func newStaff(t *testing.T, pool *pgxpool.Pool, role string) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(t.Context(), `INSERT INTO staff (email, name, role, password_hash)
		VALUES ('m' || (SELECT count(*) FROM staff) || '@example.com', 'Member', $1, 'x') RETURNING id`, role).Scan(&id)
	if err != nil {
		t.Fatalf("create staff: %v", err)
	}
	return id
}

func (f fixture) staffHold(t *testing.T, staffID int64, kind string, release time.Time, seats ...int64) StaffHold {
	t.Helper()
	h, err := f.svc.Desk.HoldForStaff(t.Context(), StaffHoldRequest{
		EventID: f.event, SeatIDs: seats, Kind: kind, Reason: "for the " + kind, ReleaseAt: release, StaffID: staffID, Address: "192.0.2.1",
	})
	if err != nil {
		t.Fatalf("staff hold %v: %v", seats, err)
	}
	return h
}

// seatStatus is the seat's state on the map, read fresh.
func (f fixture) seatStatus(t *testing.T, seatID int64) string {
	t.Helper()
	m, err := f.svc.Maps.SeatMapSeats(t.Context(), f.event, []int64{seatID})
	if err != nil || len(m.Seats) != 1 {
		t.Fatalf("seat %d on the map: %v (%d seats)", seatID, err, len(m.Seats))
	}
	return m.Seats[0].Status
}

// TestStaffHoldRefusedToBuyers: seats a member of staff holds cannot be held by an
// online buyer, exactly or as best available, and the staff hold cannot be checked out
// or released by one; the map shows them held. The per-buyer limit and the sales window
// do not apply to staff.
func TestStaffHoldRefusedToBuyers(t *testing.T) {
	t.Parallel()
	spec := smallSpec([]demo.Section{oneRow("Stalls", 14, 3000)})
	spec.OnsaleAt = time.Now().Add(time.Hour) // not on sale yet: staff hold all the same
	f := newFixture(t, spec, Config{MaxPerBuyer: 10})
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")

	// Twelve seats, more than a buyer may have, before the onsale.
	h := f.staffHold(t, member, HoldHouse, time.Time{}, seats[:12]...)
	if len(h.Seats) != 12 || h.ReleaseAt != (time.Time{}) {
		t.Fatalf("staff hold: %d seats, release %v; want 12, none", len(h.Seats), h.ReleaseAt)
	}
	if _, err := f.pool.Exec(t.Context(), `UPDATE events SET onsale_at = now() - interval '1 minute' WHERE id = $1`, f.event); err != nil {
		t.Fatal(err)
	}

	_, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "buyer-a", SeatIDs: seats[3:4]})
	var taken *SeatsUnavailableError
	if !errors.As(err, &taken) || !slices.Equal(taken.SeatIDs, seats[3:4]) {
		t.Errorf("buyer holds a house seat: %v, want seats_unavailable naming it", err)
	}
	_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "buyer-a", SeatIDs: []int64{seats[11], seats[12]}})
	if !errors.As(err, &taken) || !slices.Equal(taken.SeatIDs, seats[11:12]) {
		t.Errorf("buyer holds a house seat and a free one: %v, want seats_unavailable naming the house seat", err)
	}
	best, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "buyer-b", Quantity: 2})
	if err != nil || !slices.Equal(sortedIDs(best.Seats), seats[12:14]) {
		t.Errorf("best available 2: %v, %v; want the two seats not held by staff %v", sortedIDs(best.Seats), err, seats[12:14])
	}
	if _, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "buyer-c", Quantity: 1}); !errors.Is(err, ErrSoldOut) && !errors.Is(err, ErrContended) {
		t.Errorf("best available with only house seats left: %v, want sold out", err)
	}
	for _, buyer := range []string{"buyer-a", staffBuyer(member) + "x", ""} {
		if _, err := f.svc.Buyer.Checkout(t.Context(), h.ID, buyer, "a@example.com"); !errors.Is(err, ErrHoldNotFound) {
			t.Errorf("buyer %q checks the staff hold out: %v, want hold not found", buyer, err)
		}
		if err := f.svc.Buyer.Release(t.Context(), h.ID, buyer); !errors.Is(err, ErrHoldNotFound) {
			t.Errorf("buyer %q releases the staff hold: %v, want hold not found", buyer, err)
		}
	}
	if st := f.seatStatus(t, seats[0]); st != SeatHeld {
		t.Errorf("house seat on the map: %s, want held", st)
	}
	if n := f.count(t, `SELECT count(*) FROM seats WHERE event_id = $1 AND held_by = $2`, f.event, h.ID.Seq); n != 12 {
		t.Errorf("seats of the staff hold after the buyers' attempts: %d, want 12", n)
	}
	if n := f.count(t, `SELECT count(*) FROM audit_log WHERE staff_id = $1 AND action = 'hold.create' AND after->>'kind' = 'house'`, member); n != 1 {
		t.Errorf("audit entries of the hold: %d, want 1", n)
	}
}

// TestStaffHoldReleasedOnTime: a staff hold with a release time lapses by the database
// clock like a buyer's: once the time has passed a buyer may hold its seats at once,
// before any tidy-up, and the tidy-up announces the rest as free. A release time
// already past is refused and holds nothing.
func TestStaffHoldReleasedOnTime(t *testing.T) {
	t.Parallel()
	f, rec := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 2000)}), Config{}).listening()
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")

	_, err := f.svc.Desk.HoldForStaff(t.Context(), StaffHoldRequest{EventID: f.event, SeatIDs: seats[:1], Kind: HoldPress,
		Reason: "late", ReleaseAt: time.Now().Add(-time.Minute), StaffID: member})
	if !errors.Is(err, ErrReleaseInPast) {
		t.Errorf("release time in the past: %v, want ErrReleaseInPast", err)
	}
	if n := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1`, f.event); n != 0 {
		t.Errorf("holds after a refused staff hold: %d, want 0", n)
	}

	release := time.Now().Add(time.Hour)
	h := f.staffHold(t, member, HoldPress, release, seats[:3]...)
	if d := h.ReleaseAt.Sub(release); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("release time %v, want %v", h.ReleaseAt, release)
	}
	if got := rec.take(); !slices.Equal(got, seats[:3]) {
		t.Errorf("announced on hold: %v, want %v", got, seats[:3])
	}
	if _, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "buyer", SeatIDs: seats[:1]}); err == nil {
		t.Fatal("a buyer held a press seat before its release time")
	}

	f.lapse(t, h.ID) // the release time has come

	bh := f.hold(t, "buyer", seats[0]) // lazily free: no tidy-up has run
	rec.take()
	holds, err := f.svc.Desk.StaffHolds(t.Context(), f.event)
	if err != nil || len(holds) != 0 {
		t.Errorf("staff holds after the release time: %d, %v; want none", len(holds), err)
	}
	res, err := f.svc.Worker.Tidy(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Seats[f.event]; !slices.Equal(got, seats[1:3]) {
		t.Errorf("tidy-up freed %v, want %v", got, seats[1:3])
	}
	if got := rec.take(); !slices.Equal(got, seats[1:3]) {
		t.Errorf("announced by the tidy-up: %v, want %v", got, seats[1:3])
	}
	for _, id := range seats[1:3] {
		if st := f.seatStatus(t, id); st != SeatAvailable {
			t.Errorf("seat %d after the release time: %s, want available", id, st)
		}
	}
	// The lapsed staff hold cannot be released by hand any more, nor take back the
	// buyer's seat.
	if err := f.svc.Desk.ReleaseStaffHold(t.Context(), h.ID, member, ""); err != nil {
		t.Errorf("release a lapsed staff hold: %v", err)
	}
	if got, err := f.svc.Buyer.GetHold(t.Context(), bh.ID, "buyer"); err != nil || len(got.Seats) != 1 {
		t.Errorf("the buyer's hold after releasing the lapsed staff hold: %v, %v", got.Seats, err)
	}
}

// TestStaffHoldReleaseByHand: a release frees the seats at once, tells the live map,
// and is audited with what the hold was; a second release changes nothing, and a
// buyer's hold cannot be released as a staff hold.
func TestStaffHoldReleaseByHand(t *testing.T) {
	t.Parallel()
	f, rec := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 2000)}), Config{}).listening()
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "admin")
	h := f.staffHold(t, member, HoldKill, time.Time{}, seats[2], seats[3])
	bh := f.hold(t, "buyer", seats[0])
	rec.take()

	if err := f.svc.Desk.ReleaseStaffHold(t.Context(), bh.ID, member, ""); !errors.Is(err, ErrHoldNotFound) {
		t.Errorf("release a buyer's hold as staff: %v, want hold not found", err)
	}
	if err := f.svc.Desk.ReleaseStaffHold(t.Context(), h.ID, member, "192.0.2.9"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if got := rec.take(); !slices.Equal(got, seats[2:4]) {
		t.Errorf("announced on release: %v, want %v", got, seats[2:4])
	}
	for _, id := range seats[2:4] {
		if st := f.seatStatus(t, id); st != SeatAvailable {
			t.Errorf("seat %d after release: %s, want available", id, st)
		}
	}
	if err := f.svc.Desk.ReleaseStaffHold(t.Context(), h.ID, member, ""); err != nil {
		t.Errorf("second release: %v", err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("announced on the second release: %v, want nothing", got)
	}
	if n := f.count(t, `SELECT count(*) FROM audit_log WHERE staff_id = $1 AND action = 'hold.release'
		AND subject = $2 AND before->>'kind' = 'kill' AND address = '192.0.2.9'`, member, h.ID.String()); n != 1 {
		t.Errorf("audit entries of the release: %d, want 1", n)
	}
	f.hold(t, "buyer-2", seats[2], seats[3])
	if _, err := f.svc.Desk.HoldForStaff(t.Context(), StaffHoldRequest{EventID: f.event, SeatIDs: []int64{seats[4], seats[0]},
		Kind: HoldHouse, Reason: "x", StaffID: member}); !isTaken(err, seats[0]) {
		t.Errorf("staff hold of a buyer's seat: %v, want seats_unavailable naming it", err)
	}
	if st := f.seatStatus(t, seats[4]); st != SeatAvailable {
		t.Errorf("the free seat of a refused staff hold: %s, want available (all or nothing)", st)
	}
}

func isTaken(err error, ids ...int64) bool {
	var taken *SeatsUnavailableError
	return errors.As(err, &taken) && slices.Equal(taken.SeatIDs, ids)
}

// TestStaffHoldBadInput: what a staff hold refuses before touching anything.
func TestStaffHoldBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 4, 2000)}), Config{})
	seats := f.rowSeats(t, "Stalls", "A")
	member := newStaff(t, f.pool, "box_office")
	ok := StaffHoldRequest{EventID: f.event, SeatIDs: seats[:1], Kind: HoldHouse, Reason: "r", StaffID: member}
	for name, change := range map[string]func(*StaffHoldRequest){
		"no kind":      func(r *StaffHoldRequest) { r.Kind = "" },
		"other kind":   func(r *StaffHoldRequest) { r.Kind = "buyer" },
		"no reason":    func(r *StaffHoldRequest) { r.Reason = "" },
		"long reason":  func(r *StaffHoldRequest) { r.Reason = string(make([]byte, MaxReason+1)) },
		"no seats":     func(r *StaffHoldRequest) { r.SeatIDs = nil },
		"a seat twice": func(r *StaffHoldRequest) { r.SeatIDs = []int64{seats[0], seats[0]} },
	} {
		r := ok
		change(&r)
		if _, err := f.svc.Desk.HoldForStaff(t.Context(), r); !errors.Is(err, ErrInvalidStaffHold) {
			t.Errorf("%s: %v, want ErrInvalidStaffHold", name, err)
		}
	}
	r := ok
	r.SeatIDs = []int64{seats[1], 1 << 40}
	var unknown *UnknownSeatsError
	if _, err := f.svc.Desk.HoldForStaff(t.Context(), r); !errors.As(err, &unknown) || fmt.Sprint(unknown.SeatIDs) != fmt.Sprint([]int64{1 << 40}) {
		t.Errorf("an unknown seat: %v, want unknown seats naming it", err)
	}
	r = ok
	r.EventID = 1 << 40
	if _, err := f.svc.Desk.HoldForStaff(t.Context(), r); !errors.Is(err, ErrEventNotFound) {
		t.Errorf("an unknown event: %v, want event not found", err)
	}
	if n := f.count(t, `SELECT count(*) FROM holds`); n != 0 {
		t.Errorf("holds after bad input: %d, want 0", n)
	}
}
