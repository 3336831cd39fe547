package checkin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// fixture is two small events on a fresh database, and the booking service to sell
// their tickets.
type fixture struct {
	pool         *pgxpool.Pool
	door         *Service
	booking      *booking.Services
	event, other int64
	otherName    string
	seq          int
	seatsByEvent map[int64][]int64
}

func spec(slug, name string) demo.EventSpec {
	now := time.Now()
	return demo.EventSpec{Slug: slug, Name: name, Venue: "Hall", City: "Berlin",
		StartsAt: now.Add(24 * time.Hour), OnsaleAt: now.Add(-time.Hour),
		Sections: []demo.Section{{Name: "Stalls", Rows: 1, SeatsPerRow: 10,
			Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 3000}}}}}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	pool := dbtest.Pool(t)
	f := &fixture{pool: pool, door: New(pool), otherName: "Other <b>Night</b>", seatsByEvent: map[int64][]int64{},
		booking: booking.New(pool, booking.DefaultConfig(), nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))}
	var err error
	if f.event, err = demo.Create(t.Context(), pool, spec("door", "Door Night")); err != nil {
		t.Fatal(err)
	}
	if f.other, err = demo.Create(t.Context(), pool, spec("other", f.otherName)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []int64{f.event, f.other} {
		rows, _ := pool.Query(t.Context(), `SELECT id FROM seats WHERE event_id = $1 ORDER BY id`, ev)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		f.seatsByEvent[ev] = ids
	}
	return f
}

// sell sells the next free seat of the event and returns its ticket's code and order.
func (f *fixture) sell(t testing.TB, eventID int64) (code string, orderID int64) {
	t.Helper()
	ctx := t.Context()
	f.seq++
	buyer := fmt.Sprintf("buyer-%d", f.seq)
	seat := f.seatsByEvent[eventID][0]
	f.seatsByEvent[eventID] = f.seatsByEvent[eventID][1:]
	h, err := f.booking.Buyer.Hold(ctx, booking.HoldRequest{EventID: eventID, Buyer: buyer, SeatIDs: []int64{seat}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.booking.Buyer.Checkout(ctx, h.ID, buyer, buyer+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ev := booking.PaymentEvent{ID: "evt_" + buyer, Kind: booking.KindPaymentSucceeded, PaymentID: "pi_" + buyer,
		OrderID: o.ID, EventID: eventID, AmountCents: int64(o.AmountCents)}
	if got, err := f.booking.Buyer.ApplyPayment(ctx, "test", ev); err != nil || got != booking.OutcomeConfirmed {
		t.Fatalf("pay: %q, %v", got, err)
	}
	if err := f.pool.QueryRow(ctx, `SELECT code FROM tickets WHERE order_id = $1`, o.ID).Scan(&code); err != nil {
		t.Fatal(err)
	}
	return code, o.ID
}

func (f *fixture) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// race runs scan n times at once, all started from one barrier, and counts the
// answers.
func race(n int, scan func(i int) (Result, error)) (map[Result]int, []error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	got := map[Result]int{}
	var errs []error
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := scan(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			got[r]++
		}()
	}
	close(start)
	wg.Wait()
	return got, errs
}

// TestCheckInRace: twenty scanners at four gates scan one ticket at once: exactly one
// hears "valid", the nineteen others "already used", naming that one's gate, and the
// database has the ticket in once and every scan logged.
func TestCheckInRace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, _ := f.sell(t, f.event)
	var gates sync.Map
	got, errs := race(20, func(i int) (Result, error) {
		a, err := f.door.CheckIn(context.Background(), Scan{EventID: f.event, Gate: fmt.Sprintf("G%d", i%4), Code: code})
		if a.Result == Used {
			gates.Store(a.Gate, true)
		}
		return a.Result, err
	})
	if len(errs) > 0 {
		t.Fatalf("scans failed: %v", errs)
	}
	if got[Valid] != 1 || got[Used] != 19 {
		t.Errorf("answers: got %v, want exactly 1 valid and 19 used", got)
	}
	var gate string
	if err := f.pool.QueryRow(t.Context(), `SELECT checked_in_gate FROM tickets WHERE code = $1`, code).Scan(&gate); err != nil {
		t.Fatal(err)
	}
	gates.Range(func(k, _ any) bool {
		if k.(string) != gate {
			t.Errorf("a used answer names gate %q, want the first scan's %q", k, gate)
		}
		return true
	})
	if n := f.count(t, `SELECT count(*) FROM checkins WHERE event_id = $1 AND code = $2`, f.event, code); n != 20 {
		t.Errorf("scans logged: got %d, want 20", n)
	}
	if n := f.count(t, `SELECT count(*) FROM checkins WHERE event_id = $1 AND result = 'valid'`, f.event); n != 1 {
		t.Errorf("valid scans logged: got %d, want 1", n)
	}
	if n := f.count(t, `SELECT count(*) FROM audit_log WHERE action = 'ticket.checkin'`); n != 1 {
		t.Errorf("check-ins in the audit log: got %d, want 1", n)
	}
}

// TestCheckInRaceControl runs the same harness against a check-in that reads the
// ticket and then writes it without the condition (every scanner reads before any
// writes, as a busy door would interleave them): several hear "valid", so the race
// test above can catch a check-in without its condition.
func TestCheckInRaceControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, _ := f.sell(t, f.event)
	var read sync.WaitGroup
	read.Add(20)
	got, errs := race(20, func(i int) (Result, error) {
		var in *time.Time
		err := f.pool.QueryRow(context.Background(), `SELECT checked_in_at FROM tickets WHERE code = $1`, code).Scan(&in)
		read.Done()
		read.Wait() // everyone has read before anyone writes
		if err != nil {
			return "", err
		}
		if in != nil {
			return Used, nil
		}
		_, err = f.pool.Exec(context.Background(), `UPDATE tickets SET checked_in_at = now(), checked_in_gate = $2 WHERE code = $1`, code, fmt.Sprintf("G%d", i))
		return Valid, err
	})
	if len(errs) > 0 {
		t.Fatalf("scans failed: %v", errs)
	}
	if got[Valid] <= 1 {
		t.Errorf("the read-then-write check-in: got %d valid, want several (the harness must catch it)", got[Valid])
	}
}

// TestCheckInAnswers: each answer of the door, in words a person acts on: valid (with
// the seat), already used (when and at which gate), void, another event's (named),
// unknown. A code typed in capitals or with spaces is the same code.
func TestCheckInAnswers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	code, _ := f.sell(t, f.event)
	voidCode, voidOrder := f.sell(t, f.event)
	otherCode, _ := f.sell(t, f.other)
	if _, err := f.booking.Desk.StaffRefund(ctx, booking.StaffRefundRequest{OrderID: voidOrder, Whole: true, Kind: booking.KindVoid}); err != nil {
		t.Fatal(err)
	}

	a, err := f.door.CheckIn(ctx, Scan{EventID: f.event, Gate: "North", Code: "  " + strings.ToUpper(code) + " "})
	if err != nil || a.Result != Valid || a.Place != "Stalls, row A, seat 1" || a.At.IsZero() {
		t.Errorf("first scan: got %+v, %v, want valid for Stalls, row A, seat 1", a, err)
	}
	first := a.At
	a, err = f.door.CheckIn(ctx, Scan{EventID: f.event, Gate: "South", Code: code})
	if err != nil || a.Result != Used || a.Gate != "North" || !a.At.Equal(first) {
		t.Errorf("second scan: got %+v, %v, want used at North at %v", a, err, first)
	}
	a, err = f.door.CheckIn(ctx, Scan{EventID: f.event, Gate: "North", Code: voidCode})
	if err != nil || a.Result != Void {
		t.Errorf("voided ticket: got %+v, %v, want void", a, err)
	}
	a, err = f.door.CheckIn(ctx, Scan{EventID: f.event, Gate: "North", Code: otherCode})
	if err != nil || a.Result != WrongEvent || a.EventName != f.otherName {
		t.Errorf("other event's ticket: got %+v, %v, want wrong_event naming %q", a, err, f.otherName)
	}
	a, err = f.door.CheckIn(ctx, Scan{EventID: f.event, Gate: "North", Code: "0123456789abcdef0123456789abcdef"})
	if err != nil || a.Result != Unknown {
		t.Errorf("unknown code: got %+v, %v, want unknown", a, err)
	}
	if n := f.count(t, `SELECT count(*) FROM tickets WHERE code = $1 AND checked_in_at IS NOT NULL`, otherCode); n != 0 {
		t.Errorf("the other event's ticket was checked in here")
	}
	if n := f.count(t, `SELECT count(*) FROM checkins WHERE event_id = $1`, f.event); n != 5 {
		t.Errorf("scans logged: got %d, want 5", n)
	}
	c, err := f.door.Counts(ctx, f.event)
	if err != nil || c != (Counts{CheckedIn: 1, Valid: 1}) {
		t.Errorf("counts: got %+v, %v, want 1 of 1 in", c, err)
	}
}

// TestCheckInBadInput: an empty or overlong code or gate, or an event that does not
// exist, is refused with its reason and neither checks in nor logs anything.
func TestCheckInBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, _ := f.sell(t, f.event)
	for _, sc := range []Scan{
		{EventID: f.event, Gate: "North", Code: " "},
		{EventID: f.event, Gate: "", Code: code},
		{EventID: f.event, Gate: strings.Repeat("g", MaxGate+1), Code: code},
		{EventID: f.event, Gate: "North", Code: strings.Repeat("a", MaxCode+1)},
		{EventID: f.event, Gate: "North", Code: code + "\x00"},
	} {
		if _, err := f.door.CheckIn(t.Context(), sc); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q at %q: got %v, want ErrInvalid", sc.Code, sc.Gate, err)
		}
	}
	if _, err := f.door.CheckIn(t.Context(), Scan{EventID: 999999, Gate: "North", Code: code}); !errors.Is(err, ErrEventNotFound) {
		t.Errorf("unknown event: got %v, want ErrEventNotFound", err)
	}
	if n := f.count(t, `SELECT count(*) FROM checkins`); n != 0 {
		t.Errorf("refused scans logged: got %d, want 0", n)
	}
	if n := f.count(t, `SELECT count(*) FROM tickets WHERE checked_in_at IS NOT NULL`); n != 0 {
		t.Errorf("refused scans checked in %d tickets, want 0", n)
	}
}
