package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// fixture is one event on a fresh database and a service selling it.
type fixture struct {
	pool  *pgxpool.Pool
	svc   *Services
	event int64
	tier  int64 // the event's first GA tier, if it has one
	log   *warnings
}

// warnings records what the services log at warning level or above. A retried
// transaction is such a warning: the lock order of the queries is meant to rule out
// deadlocks, and a retry hides one from the caller, so every test that uses a fixture
// fails on any warning.
type warnings struct {
	n     atomic.Int64
	mu    sync.Mutex
	first []string
	allow []string // messages a test causes on purpose
	seen  []string // those of them logged, with their attributes
}

// expect lets a warning with this message pass: a test that makes it happen on purpose.
func (w *warnings) expect(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.allow = append(w.allow, msg)
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

// logged returns the lines logged so far with an expected message: the message, then
// each attribute as key=value.
func (w *warnings) logged(msg string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range w.seen {
		if l == msg || strings.HasPrefix(l, msg+" ") {
			out = append(out, l)
		}
	}
	return out
}

func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if slices.Contains(w.allow, r.Message) {
		w.seen = append(w.seen, line)
		return nil
	}
	if w.n.Add(1) <= 3 {
		w.first = append(w.first, line)
	}
	return nil
}

func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

// newFixture creates the event of spec on a fresh database. When the test ends, it
// checks every invariant of the event (bookingtest.Check) and that the services logged
// no warning.
func newFixture(t *testing.T, spec demo.EventSpec, cfg Config) fixture {
	t.Helper()
	return fixtureOn(t, dbtest.Pool(t), spec, cfg)
}

// fixtureOn is newFixture on a pool of the test's own (a tracer of its own).
func fixtureOn(t *testing.T, pool *pgxpool.Pool, spec demo.EventSpec, cfg Config) fixture {
	t.Helper()
	id, err := demo.Create(t.Context(), pool, spec)
	if err != nil {
		t.Fatalf("create event: %v", err)
	}
	log := &warnings{}
	t.Cleanup(func() {
		bookingtest.Check(t, pool, id)
		if n := log.n.Load(); n > 0 {
			log.mu.Lock()
			defer log.mu.Unlock()
			t.Errorf("services logged %d warnings, want none; first: %q", n, log.first)
		}
	})
	var tier int64
	if err := pool.QueryRow(t.Context(), `SELECT coalesce(min(id), 0) FROM ga_tiers WHERE event_id = $1`, id).Scan(&tier); err != nil {
		t.Fatalf("GA tier: %v", err)
	}
	return fixture{pool: pool, svc: New(pool, cfg, nil, nil, slog.New(log)), event: id, tier: tier, log: log}
}

// demoFixture is the demo event: 1,980 seats and a 400-place GA tier in 8 stripes.
func demoFixture(t *testing.T, cfg Config) fixture {
	t.Helper()
	return newFixture(t, demo.DemoSpec(time.Now()), cfg)
}

// smallSpec is an event of the given sections and GA tiers, on sale now.
func smallSpec(sections []demo.Section, ga ...demo.GATier) demo.EventSpec {
	now := time.Now()
	return demo.EventSpec{
		Slug: "small", Name: "Small", Venue: "Small Hall", City: "Berlin",
		StartsAt: now.Add(7 * 24 * time.Hour), OnsaleAt: now.Add(-time.Hour),
		Sections: sections, GA: ga,
	}
}

// oneRow is a section of one row of n seats at one price.
func oneRow(name string, n, price int) demo.Section {
	return demo.Section{Name: name, Rows: 1, SeatsPerRow: n, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: price}}}
}

// withService is f with another service on the same database, for other rules.
func (f fixture) withService(cfg Config) fixture {
	f.svc = New(f.pool, cfg, nil, nil, slog.New(f.log))
	return f
}

// rowSeats returns the ids of a row's seats in seat-number order.
func (f fixture) rowSeats(t *testing.T, section, row string) []int64 {
	t.Helper()
	ids := f.ids(t, `SELECT id FROM seats WHERE event_id = $1 AND section = $2 AND row_label = $3 ORDER BY number`,
		f.event, section, row)
	if len(ids) == 0 {
		t.Fatalf("no seats in %s row %s", section, row)
	}
	return ids
}

// ids runs a query returning ids (of seats, tickets, ...).
func (f fixture) ids(t *testing.T, query string, args ...any) []int64 {
	t.Helper()
	rows, err := f.pool.Query(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return ids
}

// holdGA asks for qty places of the event's GA tier. It is safe to call from any
// goroutine.
func (f fixture) holdGA(t *testing.T, buyer string, qty int) (Hold, error) {
	return f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyer, GATierID: f.tier, Quantity: qty})
}

// gaRemaining is what the tier's stripes have left, in total.
func (f fixture) gaRemaining(t *testing.T, tier int64) int {
	t.Helper()
	var n int
	err := f.pool.QueryRow(t.Context(),
		`SELECT coalesce(sum(remaining), 0)::int FROM ga_stripes WHERE event_id = $1 AND tier_id = $2`, f.event, tier).Scan(&n)
	if err != nil {
		t.Fatalf("GA remaining: %v", err)
	}
	return n
}

// hold holds exact seats and fails the test if it cannot.
func (f fixture) hold(t *testing.T, buyer string, seats ...int64) Hold {
	t.Helper()
	h, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyer, SeatIDs: seats})
	if err != nil {
		t.Fatalf("hold %v for %s: %v", seats, buyer, err)
	}
	return h
}

// checkout checks a hold out and fails the test if it cannot.
func (f fixture) checkout(t *testing.T, h Hold, buyer string) Order {
	t.Helper()
	o, err := f.svc.Buyer.Checkout(t.Context(), h.ID, buyer, buyer+"@example.com")
	if err != nil {
		t.Fatalf("checkout %s: %v", h.ID, err)
	}
	return o
}

// paid is the provider's success event for the order's full amount, of a payment
// (pi_ + the event id) that booking did not start, as a payment made elsewhere is.
func paid(o Order, eventID string) PaymentEvent {
	return PaymentEvent{
		ID: eventID, Kind: KindPaymentSucceeded, PaymentID: "pi_" + eventID,
		OrderID: o.ID, EventID: o.EventID, AmountCents: int64(o.AmountCents),
	}
}

// pay applies a success event for the order and fails the test on an error.
func (f fixture) pay(t *testing.T, o Order, eventID string) PaymentOutcome {
	t.Helper()
	out, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", paid(o, eventID))
	if err != nil {
		t.Fatalf("apply payment %s to order %d: %v", eventID, o.ID, err)
	}
	return out
}

// orderStatus reads an order's status and reason from the database.
func (f fixture) orderStatus(t *testing.T, orderID int64) (status, reason string) {
	t.Helper()
	err := f.pool.QueryRow(t.Context(), `SELECT status::text, status_reason FROM orders WHERE id = $1`, orderID).Scan(&status, &reason)
	if err != nil {
		t.Fatalf("order %d: %v", orderID, err)
	}
	return status, reason
}

// lapse makes a hold lapse now, as if its time had run out: the hold row and its seats
// both say so, which is what the clock would have done.
func (f fixture) lapse(t *testing.T, id HoldID) {
	t.Helper()
	ctx := t.Context()
	if _, err := f.pool.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second' WHERE event_id = $1 AND id = $2`, id.Event, id.Seq); err != nil {
		t.Fatalf("lapse hold %s: %v", id, err)
	}
	if _, err := f.pool.Exec(ctx, `UPDATE seats SET hold_expires_at = now() - interval '1 second' WHERE event_id = $1 AND held_by = $2`, id.Event, id.Seq); err != nil {
		t.Fatalf("lapse seats of hold %s: %v", id, err)
	}
}

// count runs a query returning one integer.
func (f fixture) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// atOnce runs fn(0) … fn(n-1) in n goroutines released together by one barrier, the
// close of a channel, and returns when all have finished.
func atOnce(n int, fn func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

// errorCounter collects unexpected errors from many goroutines and reports how many
// there were and the first few, rather than one line each.
type errorCounter struct {
	n     atomic.Int64
	mu    sync.Mutex
	first []error
}

func (e *errorCounter) add(err error) {
	if e.n.Add(1) <= 5 {
		e.mu.Lock()
		e.first = append(e.first, err)
		e.mu.Unlock()
	}
}

// report fails t if any error was collected.
func (e *errorCounter) report(t *testing.T, what string) {
	t.Helper()
	if n := e.n.Load(); n > 0 {
		t.Errorf("%s: got %d unexpected errors, want none; first: %v", what, n, errors.Join(e.first...))
	}
}

// sortedIDs returns the seats' ids in ascending order.
func sortedIDs(seats []Seat) []int64 {
	ids := make([]int64, len(seats))
	for i, s := range seats {
		ids[i] = s.ID
	}
	slices.Sort(ids)
	return ids
}

// wait pauses for d or until ctx ends. It only spreads moments out in timing tests; it
// never waits for something to happen.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// eventually polls cond until it holds, failing the test after within.
func eventually(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	dbtest.Eventually(t, what, within, cond)
}

// buyerName names buyer i of a group.
func buyerName(group string, i int) string { return fmt.Sprintf("%s-%04d", group, i) }
