package web_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgTrips records what the program's pool sends PostgreSQL: one entry a round trip,
// the names of its statements (sqlc's, or the first word of any other), a batch's
// together.
type pgTrips struct {
	mu    sync.Mutex
	trips []string
	batch map[*pgx.Conn]*strings.Builder
}

var sqlcName = regexp.MustCompile(`^-- name: (\w+)`)

func stmtName(sql string) string {
	if m := sqlcName.FindStringSubmatch(sql); m != nil {
		return m[1]
	}
	if f := strings.Fields(sql); len(f) > 0 {
		return strings.ToUpper(f[0])
	}
	return "?"
}

// take returns the round trips recorded since the last take.
func (p *pgTrips) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.trips
	p.trips = nil
	return out
}

func (p *pgTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trips = append(p.trips, stmtName(d.SQL))
	return ctx
}
func (p *pgTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (p *pgTrips) TraceBatchStart(ctx context.Context, c *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.batch == nil {
		p.batch = map[*pgx.Conn]*strings.Builder{}
	}
	p.batch[c] = &strings.Builder{}
	return ctx
}
func (p *pgTrips) TraceBatchQuery(_ context.Context, c *pgx.Conn, d pgx.TraceBatchQueryData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.batch[c]; b != nil {
		if b.Len() > 0 {
			b.WriteString("+")
		}
		b.WriteString(stmtName(d.SQL))
	}
}
func (p *pgTrips) TraceBatchEnd(_ context.Context, c *pgx.Conn, _ pgx.TraceBatchEndData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.batch[c]; b != nil {
		p.trips = append(p.trips, b.String())
		delete(p.batch, c)
	}
}

// TestAPIPricedHoldRoundTrips: GET /api/v1/holds/{id}, the hold with its quote, sends
// the program's pool one batch of two statements (the hold with what prices it, and
// its seats) once the program has the event's price configuration; a price changed in
// between costs one batch more, the configuration read again, and the answer is the
// quote of the changed price.
func TestAPIPricedHoldRoundTrips(t *testing.T) {
	t.Parallel()
	rec := &pgTrips{}
	app := newTestApp(t, func(o *appOptions) { o.PoolConfig = func(pc *pgxpool.Config) { pc.ConnConfig.Tracer = rec } })
	e := newPricedEvent(t, app.Pool, "priced-trips")
	c := app.newClient(t)
	h := c.hold(e.id, e.seats[:2]...)
	if st := c.setType(h.HoldID, e.seats[1], e.child); st != 200 {
		t.Fatalf("set a Child: got %d, want 200", st)
	}
	c.pricedHold(h.HoldID) // the program reads the configuration, if it has not yet

	basket := "HoldBasket+HoldBasketSeats"
	config := "PricingGet+FeeList+TicketTypeList+TicketTypePriceList"
	rec.take()
	got := c.pricedHold(h.HoldID)
	trips := rec.take()
	if !slices.Equal(trips, []string{basket}) {
		t.Errorf("a priced GET sent %q, want %q", trips, basket)
	}
	if want := e.adultAllIn + e.childAllIn + e.fee; got.Quote.TotalCents != want {
		t.Errorf("total: got %d, want %d", got.Quote.TotalCents, want)
	}

	if _, err := app.Pool.Exec(t.Context(), `UPDATE ticket_type_prices SET price_cents = price_cents + 100 WHERE event_id = $1 AND type_id = $2`, e.id, e.child); err != nil {
		t.Fatal(err)
	}
	rec.take()
	got = c.pricedHold(h.HoldID)
	trips = rec.take()
	if !slices.Equal(trips, []string{basket, config}) {
		t.Errorf("a priced GET after a price changed sent %q, want %q then %q", trips, basket, config)
	}
	if want := e.adultAllIn + e.childAllIn + 100 + e.fee; got.Quote.TotalCents != want {
		t.Errorf("total after the Child's price rose by 1.00: got %d, want %d", got.Quote.TotalCents, want)
	}
}
