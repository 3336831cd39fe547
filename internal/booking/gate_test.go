package booking

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbgate"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// places records, for each named statement, the places in the queue for a connection
// (dbgate) of the calls that ran it.
type places struct {
	mu     sync.Mutex
	byName map[string]map[string]bool
}

func (p *places) note(ctx context.Context, sql string) {
	m := queryName.FindStringSubmatch(sql) // mapcache_test.go
	if m == nil {
		return
	}
	place := "usual"
	switch {
	case dbgate.IsFirst(ctx):
		place = "first"
	case dbgate.IsLater(ctx):
		place = "later"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byName[m[1]] == nil {
		p.byName[m[1]] = map[string]bool{}
	}
	p.byName[m[1]][place] = true
}

// of is the places the statement ran at, sorted, and forgets them.
func (p *places) of(name string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := slices.Sorted(maps.Keys(p.byName[name]))
	delete(p.byName, name)
	return got
}

func (p *places) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	p.note(ctx, d.SQL)
	return ctx
}
func (p *places) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (p *places) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (p *places) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	p.note(ctx, d.SQL)
}
func (p *places) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestHoldsAskFirstForAConnection: every kind of hold runs its statements marked
// First for the pool's gate (the exact holds' batches too), a checkout unmarked, and
// a payment's confirmation marked Later. The gate's order itself is dbgate's test.
func TestHoldsAskFirstForAConnection(t *testing.T) {
	pc, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &places{byName: map[string]map[string]bool{}}
	pc.ConnConfig.Tracer = p
	pool, err := pgxpool.NewWithConfig(t.Context(), pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	f := fixtureOn(t, pool, demo.DemoSpec(time.Now()), Config{})
	event, tier, svc := f.event, f.tier, f.svc
	seats := f.ids(t, `SELECT id FROM seats WHERE event_id = $1 ORDER BY id LIMIT 2`, event)
	ctx := t.Context()
	want := func(name string, place ...string) {
		t.Helper()
		if got := p.of(name); !slices.Equal(got, place) {
			t.Errorf("%s ran at %v in the queue for a connection, want %v", name, got, place)
		}
	}

	exact, err := svc.Buyer.Hold(ctx, HoldRequest{EventID: event, Buyer: "a", SeatIDs: seats[:1]})
	if err != nil {
		t.Fatal(err)
	}
	want("SeatsHoldExact", "first")
	if _, err := svc.Buyer.Hold(ctx, HoldRequest{EventID: event, Buyer: "b", Quantity: 2}); err != nil {
		t.Fatal(err)
	}
	want("HoldCreate", "first")
	if _, err := svc.Buyer.Hold(ctx, HoldRequest{EventID: event, Buyer: "c", GATierID: tier, Quantity: 2}); err != nil {
		t.Fatal(err)
	}
	want("HoldCreate", "first")

	// Exact holds arriving together run as a batch, on the batch workers' own context.
	// Their seats are among those still free: best available took seats wherever the
	// front rows' centre is.
	free := f.ids(t, `SELECT id FROM seats WHERE event_id = $1 AND held_by IS NULL ORDER BY id OFFSET 10 LIMIT 40`, event)
	var wg sync.WaitGroup
	for i, buyer := range []string{"d", "e", "f", "g"} {
		s := free[10*i : 10*i+2]
		wg.Go(func() {
			if _, err := svc.Buyer.Hold(ctx, HoldRequest{EventID: event, Buyer: buyer, SeatIDs: s}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := append(p.of("SeatsHoldExact"), p.of("SeatsHoldExactBatch")...)
	if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return s != "first" }) {
		t.Errorf("exact holds together ran at %v, want first only", got)
	}

	o, err := svc.Buyer.Checkout(ctx, exact.ID, "a", "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	want("OrderCreate", "usual")
	out, err := svc.Buyer.ApplyPayment(ctx, "test", paid(o, "evt_gate"))
	if err != nil || out != OutcomeConfirmed {
		t.Fatalf("payment: %v, %v", out, err)
	}
	want("OrderLock", "later")
	want("TicketsIssueForSeats", "later")

	// A sale at the box office's window goes first throughout, the confirmation's
	// statements too: someone is standing there.
	member := newStaff(t, pool, "box_office")
	window := f.ids(t, `SELECT id FROM seats WHERE event_id = $1 ORDER BY id OFFSET 60 LIMIT 2`, event)
	names := []string{"OrderCreate", "SeatSell", "TicketsIssueForSeats"}
	for _, name := range names {
		p.of(name) // forget the online sale's
	}
	if _, _, err := svc.Desk.SellAtBoxOffice(ctx, f.sale(member, "gate-token-0123456789", window...)); err != nil {
		t.Fatalf("box office sale: %v", err)
	}
	for _, name := range names {
		want(name, "first")
	}
}
