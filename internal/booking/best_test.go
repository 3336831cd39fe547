package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// bestHold asks for the best n seats.
func (f fixture) bestHold(t *testing.T, buyer string, n int, section string, together bool) (Hold, error) {
	t.Helper()
	return f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyer, Quantity: n, Section: section, Together: together})
}

// checkTogether fails t unless the seats are n seats of one row with consecutive numbers.
func checkTogether(t *testing.T, seats []Seat, n int) {
	t.Helper()
	if len(seats) != n {
		t.Fatalf("got %d seats, want %d", len(seats), n)
	}
	s := slices.Clone(seats)
	slices.SortFunc(s, func(a, b Seat) int { return a.Number - b.Number })
	for i := range s {
		if s[i].Section != s[0].Section || s[i].Row != s[0].Row || s[i].Number != s[0].Number+i {
			t.Errorf("got seats %+v, want %d side by side in one row", s, n)
			return
		}
	}
}

func sortedNumbers(seats []Seat) []int {
	var n []int
	for _, s := range seats {
		n = append(n, s.Number)
	}
	slices.Sort(n)
	return n
}

// TestBestAvailableSoldOut: fewer free seats than asked is ErrSoldOut; free seats that
// are all singles are ErrSoldOut together, and scattered seats otherwise.
func TestBestAvailableSoldOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Tiny", 5, 3000), oneRow("Comb", 8, 3000)}), DefaultConfig())
	tiny := f.rowSeats(t, "Tiny", "A")
	f.hold(t, "x", tiny[:3]...)
	for _, together := range []bool{true, false} {
		if _, err := f.bestHold(t, "a", 3, "Tiny", together); !errors.Is(err, ErrSoldOut) {
			t.Errorf("3 of 2 free, together %v: got %v, want ErrSoldOut", together, err)
		}
	}

	comb := f.rowSeats(t, "Comb", "A")
	f.hold(t, "y", comb[1], comb[3], comb[5], comb[7]) // free: 1, 3, 5, 7
	if _, err := f.bestHold(t, "a", 2, "Comb", true); !errors.Is(err, ErrSoldOut) {
		t.Errorf("2 together among singles: got %v, want ErrSoldOut", err)
	}
	h, err := f.bestHold(t, "a", 2, "Comb", false)
	if err != nil {
		t.Fatalf("2 scattered among singles: %v", err)
	}
	for _, s := range h.Seats {
		if s.Section != "Comb" || s.Number%2 != 1 {
			t.Errorf("2 scattered: got %s seat %d, want odd seats of Comb", s.Section, s.Number)
		}
	}
	if got := sortedNumbers(h.Seats); len(got) != 2 || got[0] == got[1] {
		t.Errorf("2 scattered: got numbers %v, want two different seats", got)
	}
}

// TestBestAvailableLapsed: seats whose hold lapsed are free to best available before
// the tidy-up has cleared them.
func TestBestAvailableLapsed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Row", 6, 3000)}), DefaultConfig())
	seats := f.rowSeats(t, "Row", "A")
	old := f.hold(t, "x", seats...)
	if _, err := f.bestHold(t, "a", 2, "", false); !errors.Is(err, ErrSoldOut) {
		t.Fatalf("all seats held: got %v, want ErrSoldOut", err)
	}
	f.lapse(t, old.ID)
	h, err := f.bestHold(t, "a", 6, "", true)
	if err != nil {
		t.Fatalf("6 lapsed seats: %v", err)
	}
	if got := sortedIDs(h.Seats); !slices.Equal(got, seats) {
		t.Errorf("got seats %v, want %v", got, seats)
	}
}

// TestBestAvailableBeyondFirstRows: when the first rows best available looks at have
// only single free seats, it must look further back for a row that seats the party
// together, not answer sold out.
func TestBestAvailableBeyondFirstRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{
		{Name: "Wide", Rows: 11, SeatsPerRow: 40, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 4000}}},
	}), DefaultConfig())
	// Rows A to J: every other seat held, 200 single free seats in all. Row K: free.
	for r, row := range []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"} {
		seats := f.rowSeats(t, "Wide", row)
		for half := range 2 {
			var odd []int64
			for i := 1 + 20*half; i < 20+20*half; i += 2 {
				odd = append(odd, seats[i])
			}
			f.hold(t, fmt.Sprintf("x%d-%d", r, half), odd...)
		}
	}
	h, err := f.bestHold(t, "a", 4, "", true)
	if err != nil {
		t.Fatalf("4 together with row K free: got %v, want row K", err)
	}
	checkTogether(t, h.Seats, 4)
	if h.Seats[0].Row != "K" {
		t.Errorf("got row %s, want K", h.Seats[0].Row)
	}
}

// TestBestAvailableConcurrent: 100 buyers ask at once for the 4 best seats of a section
// of exactly 400. They step past each other's rows instead of queueing; none may be
// told sold out while seats remain, none may get a seat twice, and in the end the
// section is exactly sold out. ErrContended says "ask again", and a buyer who gets it
// does: every buyer must end up with 4 seats. How often it came is logged.
//
// With map=true the seats are chosen from a seat map read before the rush, which every
// hold makes more out of date: the claims must still give no seat twice.
func TestBestAvailableConcurrent(t *testing.T) {
	t.Parallel()
	for _, fromMap := range []bool{false, true} {
		t.Run(fmt.Sprintf("map=%v", fromMap), func(t *testing.T) {
			t.Parallel()
			testBestAvailableConcurrent(t, fromMap)
		})
	}
}

func testBestAvailableConcurrent(t *testing.T, fromMap bool) {
	f := newFixture(t, smallSpec([]demo.Section{
		{Name: "Main", Rows: 10, SeatsPerRow: 40, Prices: []demo.RowPrice{{FromRow: 0, Tier: "A", PriceCents: 8000}, {FromRow: 5, Tier: "B", PriceCents: 5000}}},
		oneRow("Other", 40, 1000),
	}), DefaultConfig())
	if fromMap {
		f.loadMap(t)
	}
	const buyers, n, maxAttempts = 100, 4, 50
	holds := make([]Hold, buyers)
	var soldOut, contended, contendedBuyers atomic.Int64
	var errs errorCounter
	atOnce(buyers, func(i int) {
		for attempt := 1; ; attempt++ {
			h, err := f.bestHold(t, buyerName("b", i), n, "Main", false)
			switch {
			case err == nil:
				holds[i] = h
				return
			case errors.Is(err, ErrContended) && attempt < maxAttempts:
				if contended.Add(1); attempt == 1 {
					contendedBuyers.Add(1)
				}
				continue
			case errors.Is(err, ErrSoldOut):
				soldOut.Add(1)
			default:
				errs.add(fmt.Errorf("buyer %d, attempt %d: %w", i, attempt, err))
			}
			return
		}
	})
	t.Logf("ErrContended: %d buyers of %d on their first attempt, %d times in all; %d holds chosen from the map, %d choices from it taken",
		contendedBuyers.Load(), buyers, contended.Load(), f.svc.store.bestFromMap.Load(), f.svc.store.bestMapMisses.Load())
	if fromMap && f.svc.store.bestFromMap.Load() == 0 {
		t.Errorf("no hold chosen from the map, want some")
	}
	errs.report(t, "concurrent best available")
	if got := soldOut.Load(); got != 0 {
		t.Errorf("got %d ErrSoldOut with 400 seats for 400 asked, want 0", got)
	}
	given := make([][]int64, buyers)
	for i, h := range holds {
		if len(h.Seats) != n {
			t.Errorf("buyer %d: got %d seats, want %d", i, len(h.Seats), n)
		}
		for _, s := range h.Seats {
			if s.Section != "Main" {
				t.Errorf("buyer %d: got a seat in %s, want Main", i, s.Section)
			}
		}
		given[i] = sortedIDs(h.Seats)
	}
	owner, twice := owners(given)
	for _, line := range twice {
		t.Error(line)
	}
	if got, want := f.count(t, `
		SELECT count(*) FROM seats s JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
		WHERE s.event_id = $1 AND s.section = 'Main'`, f.event), len(owner); got != want {
		t.Errorf("seats held in SQL: got %d, want %d", got, want)
	}
	if got := f.count(t, `
		SELECT count(*) FROM holds h
		WHERE h.event_id = $1
		  AND h.seat_count <> (SELECT count(*) FROM seats s WHERE s.event_id = h.event_id AND s.held_by = h.id)`, f.event); got != 0 {
		t.Errorf("got %d holds without exactly the seats they asked for, want 0", got)
	}
	if _, err := f.bestHold(t, "late", 1, "Main", false); !errors.Is(err, ErrSoldOut) {
		t.Errorf("one more seat in the full section: got %v, want ErrSoldOut", err)
	}
}

// owners maps every seat given to a buyer to that buyer, and describes every seat given
// to two.
func owners(given [][]int64) (owner map[int64]int, twice []string) {
	owner = map[int64]int{}
	for i, ids := range given {
		for _, id := range ids {
			if j, ok := owner[id]; ok {
				twice = append(twice, fmt.Sprintf("seat %d given to buyers %d and %d", id, j, i))
			}
			owner[id] = i
		}
	}
	return owner, twice
}

// TestBestAvailableConcurrentNegativeControl proves the overlap check above can fail: a
// best available that reads the 4 best free seats and then writes them unconditionally,
// as two statements, gives the same seats to buyers who ask at once.
func TestBestAvailableConcurrentNegativeControl(t *testing.T) {
	t.Parallel()
	const buyers = 100
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Main", 40, 5000)}), DefaultConfig())
	ctx := t.Context()
	given := make([][]int64, buyers)
	var errs errorCounter
	atOnce(buyers, func(i int) {
		rows, err := f.pool.Query(ctx, `
			SELECT id FROM seats WHERE event_id = $1 AND held_by IS NULL AND sold_at IS NULL
			ORDER BY price_cents, rank, id LIMIT 4`, f.event)
		if err != nil {
			errs.add(err)
			return
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				errs.add(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) < 4 {
			return
		}
		for _, id := range ids { // one statement a seat: no lock order to get wrong
			if _, err := f.pool.Exec(ctx, `
				UPDATE seats SET held_by = $3, hold_expires_at = now() + interval '10 minutes'
				WHERE event_id = $1 AND id = $2`, f.event, id, int64(i+1)); err != nil {
				errs.add(err)
				return
			}
		}
		given[i] = ids
	})
	errs.report(t, "read-then-write best available")
	if _, twice := owners(given); len(twice) == 0 {
		t.Errorf("read-then-write best available: got no seat given twice, want some")
	} else {
		t.Logf("read-then-write best available gave %d seats twice", len(twice))
	}
}

// TestBestAvailableWaitsWithoutAConnection: best-available searches of one event that
// wait for their turn do not hold the pool's connections meanwhile, so the event's
// other calls go on. Another session holds the event's best-available locks, one a
// turn; eight searches start. One a turn waits in the database (the rest wait in the
// process), and an exact hold goes through while they wait. When the locks go, all
// eight get their seats. (With the turn taken only in the database, every free
// connection of the pool waits on the lock and the exact hold waits for one: this
// test then fails.)
func TestBestAvailableWaitsWithoutAConnection(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, DefaultConfig())
	blocker, err := f.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Release()
	lock := `SELECT pg_advisory_lock(hashtextextended('best-available/' || $2::int, $1::bigint))`
	for turn := range bestTurns { // every turn of the event
		if _, err := blocker.Exec(t.Context(), lock, f.event, turn); err != nil {
			t.Fatal(err)
		}
	}
	locked := true
	unlock := func() {
		if locked {
			locked = false
			if _, err := blocker.Exec(context.Background(), `SELECT pg_advisory_unlock_all()`); err != nil {
				t.Error(err)
			}
		}
	}
	defer unlock()

	const searches = 8
	errs := make(chan error, searches)
	for i := range searches {
		go func() {
			_, err := f.bestHold(t, buyerName("best", i), 2, "", false)
			errs <- err
		}()
	}
	waiting := func() int {
		var n int
		if err := blocker.QueryRow(t.Context(),
			`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A search for each turn comes to wait in the database (on a loaded machine the
	// second may come some time after the first); the others must not.
	eventually(t, fmt.Sprintf("a search waiting for the lock for each of the %d turns", bestTurns), 10*time.Second,
		func() bool { return waiting() >= bestTurns })
	time.Sleep(200 * time.Millisecond) // time for the others to pile up, were they to

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var seat int64 // the dearest seat: far from what best available gives first
	if err := blocker.QueryRow(t.Context(), `SELECT id FROM seats WHERE event_id = $1 ORDER BY price_cents DESC, id LIMIT 1`,
		f.event).Scan(&seat); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "exact", SeatIDs: []int64{seat}}); err != nil {
		t.Errorf("an exact hold while best-available searches wait: %v, want it held", err)
	}
	if n := waiting(); n != bestTurns {
		t.Errorf("searches waiting in the database: got %d, want %d, one a turn (the others wait without a connection)", n, bestTurns)
	}
	unlock()
	for range searches {
		if err := <-errs; err != nil {
			t.Errorf("a best-available search once the lock went: %v", err)
		}
	}
}

// TestHoldConflictCounted: every refusal the API answers 409 for want of seats counts
// as a hold conflict, busy too (the onsale simulator compares the count with its own
// 409s); other failures do not.
func TestHoldConflictCounted(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&SeatsUnavailableError{SeatIDs: []int64{1}}, true},
		{fmt.Errorf("hold: %w", ErrSoldOut), true},
		{ErrContended, true},
		{ErrEventNotFound, false},
		{&LimitError{Limit: 8}, false},
		{errors.New("connection lost"), false},
	} {
		if got := isConflict(tt.err); got != tt.want {
			t.Errorf("isConflict(%v): got %v, want %v", tt.err, got, tt.want)
		}
	}
}

// takeTurns takes every best-available turn of the event and answers their ends.
func (f fixture) takeTurns(t *testing.T) []func() {
	t.Helper()
	var dones []func()
	for range bestTurns {
		_, done, err := f.svc.store.bestTurn(t.Context(), HoldRequest{EventID: f.event, Buyer: "turns", Quantity: 1})
		if err != nil {
			t.Fatal(err)
		}
		dones = append(dones, done)
	}
	return dones
}

// TestBestAvailableSoldOutShared: at a sell-out the best-available holds waiting for a
// turn take the answer of a search that began after they arrived and found nothing for
// a party no harder than theirs, rather than each searching again; a hold that arrives
// after that search began searches itself, and finds the seats freed since.
func TestBestAvailableSoldOutShared(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Row", 4, 3000)}), DefaultConfig())
	seats := f.rowSeats(t, "Row", "A")
	old := f.hold(t, "x", seats...)

	// Every turn taken, so that the holds all come to wait; then one given back, so
	// that they search one at a time.
	dones := f.takeTurns(t)
	defer func() {
		for _, done := range dones[1:] {
			done()
		}
	}()
	const waiters = 6
	errs := make(chan error, waiters)
	for i := range waiters {
		go func() {
			_, err := f.bestHold(t, buyerName("w", i), 2, "", false)
			errs <- err
		}()
	}
	eventually(t, fmt.Sprintf("%d holds waiting for a turn", waiters), 10*time.Second,
		func() bool { return f.svc.store.bestWaiting.Load() >= waiters })
	dones[0]()
	for range waiters {
		if err := <-errs; !errors.Is(err, ErrSoldOut) {
			t.Errorf("a hold of 2 with every seat held: %v, want ErrSoldOut", err)
		}
	}
	if got := f.svc.store.soldOutShared.Load(); got != waiters-1 {
		t.Errorf("holds answered by another's search: %d, want %d (one searched)", got, waiters-1)
	}

	f.lapse(t, old.ID)
	h, err := f.bestHold(t, "late", 2, "", false)
	if err != nil {
		t.Fatalf("a hold arriving after the search, with the seats freed since: %v, want 2 seats", err)
	}
	if len(h.Seats) != 2 || f.svc.store.soldOutShared.Load() != waiters-1 {
		t.Errorf("late hold: %d seats, shared %d; want 2 seats, shared still %d", len(h.Seats), f.svc.store.soldOutShared.Load(), waiters-1)
	}
}

// TestBestAvailableLeftShared: a search that seats its party and saw every free seat
// answers the holds that waited since before it began for a party larger than the
// seats it left: here 3 of a row's 4 seats are free, the first waiter takes 2, and the
// other holds of 2 are told sold out without a search of their own. Before, the
// second waiter searched too, and only its "nothing" answered the rest (waiters-2
// shared, the control). A hold of 1 arriving after takes the seat left.
func TestBestAvailableLeftShared(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Row", 4, 3000)}), DefaultConfig())
	seats := f.rowSeats(t, "Row", "A")
	f.hold(t, "x", seats[0])

	dones := f.takeTurns(t)
	defer func() {
		for _, done := range dones[1:] {
			done()
		}
	}()
	const waiters = 6
	type answer struct {
		h   Hold
		err error
	}
	answers := make(chan answer, waiters)
	for i := range waiters {
		go func() {
			h, err := f.bestHold(t, buyerName("w", i), 2, "", false)
			answers <- answer{h, err}
		}()
	}
	eventually(t, fmt.Sprintf("%d holds waiting for a turn", waiters), 10*time.Second,
		func() bool { return f.svc.store.bestWaiting.Load() >= waiters })
	dones[0]()
	held := 0
	for range waiters {
		switch a := <-answers; {
		case a.err == nil && len(a.h.Seats) == 2:
			held++
		case !errors.Is(a.err, ErrSoldOut):
			t.Errorf("a hold of 2 with 3 seats free: %d seats, %v; want 2 seats or ErrSoldOut", len(a.h.Seats), a.err)
		}
	}
	if held != 1 {
		t.Errorf("holds of 2 that got seats: %d, want 1", held)
	}
	if got := f.svc.store.soldOutShared.Load(); got != waiters-1 {
		t.Errorf("holds answered by another's search: %d, want %d (one searched and seated its party)", got, waiters-1)
	}
	h, err := f.bestHold(t, "late", 1, "", false)
	if err != nil || len(h.Seats) != 1 {
		t.Errorf("a hold of 1 arriving after, one seat left: %d seats, %v; want the seat", len(h.Seats), err)
	}
}

// TestSoldOutAnswersWaiters: a verdict answers the best-available holds it covers
// while they wait for a turn, at once, not when a turn comes to them: here every turn
// stays taken, and a search begun after the holds arrived finds nothing for a party
// of 2. The holds of 2 and 3 are answered sold out; the hold of 1, which that search
// does not answer, keeps waiting, and a hold of 2 that arrives after the search began
// waits too. Negative control: answering only at the turn (TestBestAvailableSoldOutShared's
// way before) leaves them all waiting, every turn being taken.
func TestSoldOutAnswersWaiters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Row", 4, 3000)}), DefaultConfig())
	f.hold(t, "x", f.rowSeats(t, "Row", "A")...)
	dones := f.takeTurns(t)
	released := false
	release := func() {
		if !released {
			released = true
			for _, done := range dones {
				done()
			}
		}
	}
	defer release()

	type answer struct {
		n   int
		err error
	}
	answers := make(chan answer, 4)
	wait := func(n int, buyer string) {
		go func() {
			_, err := f.bestHold(t, buyer, n, "", false)
			answers <- answer{n, err}
		}()
	}
	for i, n := range []int{2, 3, 1} {
		wait(n, buyerName("w", i))
	}
	eventually(t, "3 holds waiting for a turn", 10*time.Second, func() bool { return f.svc.store.bestWaiting.Load() >= 3 })
	f.svc.store.soldOut.note(HoldRequest{EventID: f.event, Quantity: 2}, time.Now()) // as a search begun now that found nothing
	for range 2 {
		select {
		case a := <-answers:
			if a.n == 1 || !errors.Is(a.err, ErrSoldOut) {
				t.Errorf("hold of %d while every turn is taken: %v, want only the holds of 2 and 3 answered sold out", a.n, a.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the holds the verdict covers still wait for a turn")
		}
	}
	wait(2, "late")
	eventually(t, "the hold of 1 and the late hold waiting", 10*time.Second, func() bool { return f.svc.store.bestWaiting.Load() >= 2 })
	select {
	case a := <-answers:
		t.Errorf("hold of %d answered (%v) with every turn taken, want it waiting", a.n, a.err)
	case <-time.After(200 * time.Millisecond):
	}
	if got := f.svc.store.soldOutShared.Load(); got != 2 {
		t.Errorf("holds answered by the verdict: %d, want 2", got)
	}
	release()
	for range 2 { // the hold of 1 and the late hold take their turns, and find every seat held
		if a := <-answers; !errors.Is(a.err, ErrSoldOut) {
			t.Errorf("hold of %d after the turns came back: %v, want ErrSoldOut", a.n, a.err)
		}
	}
}

// TestSoldOutVerdicts: which holds a search that found nothing answers.
func TestSoldOutVerdicts(t *testing.T) {
	t.Parallel()
	var v soldOutVerdicts
	t0 := time.Now()
	before, after := t0.Add(-time.Millisecond), t0.Add(time.Millisecond)
	v.note(HoldRequest{EventID: 1, Quantity: 2}, t0)                               // the house: fewer than 2 free
	v.note(HoldRequest{EventID: 2, Quantity: 3, Section: "A", Together: true}, t0) // section A: no 3 together
	for _, c := range []struct {
		req     HoldRequest
		arrived time.Time
		want    bool
	}{
		{HoldRequest{EventID: 1, Quantity: 2}, before, true},
		{HoldRequest{EventID: 1, Quantity: 2}, after, false}, // arrived after the search began
		{HoldRequest{EventID: 1, Quantity: 2}, t0, false},
		{HoldRequest{EventID: 1, Quantity: 5}, before, true},
		{HoldRequest{EventID: 1, Quantity: 5, Together: true}, before, true},
		{HoldRequest{EventID: 1, Quantity: 2, Section: "B"}, before, true},
		{HoldRequest{EventID: 1, Quantity: 1}, before, false}, // a smaller party
		{HoldRequest{EventID: 3, Quantity: 2}, before, false}, // another event
		{HoldRequest{EventID: 2, Quantity: 3, Section: "A", Together: true}, before, true},
		{HoldRequest{EventID: 2, Quantity: 4, Section: "A", Together: true}, before, true},
		{HoldRequest{EventID: 2, Quantity: 3, Section: "A"}, before, false},   // scattered may fit
		{HoldRequest{EventID: 2, Quantity: 3, Together: true}, before, false}, // the house may
		{HoldRequest{EventID: 2, Quantity: 3, Section: "B", Together: true}, before, false},
		{HoldRequest{EventID: 2, Quantity: 2, Section: "A", Together: true}, before, false},
	} {
		if got := v.covers(c.req, c.arrived); got != c.want {
			t.Errorf("%+v arrived %v after the search: covered %v, want %v", c.req, c.arrived.Sub(t0), got, c.want)
		}
	}
	for i := range 3 * soldOutMax {
		v.note(HoldRequest{EventID: 4, Quantity: 1, Section: fmt.Sprint(i)}, t0)
	}
	if n := len(v.at); n > soldOutMax {
		t.Errorf("verdicts kept: %d, want at most %d", n, soldOutMax)
	}
}
