package booking

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// trips records what a pool sends while on: one entry per round trip, naming its
// statements (sqlc's query names; the rest by their first words), and how many
// statements they were, alone or in a batch.
type trips struct {
	mu    sync.Mutex
	on    bool
	sent  []string
	stmts int
}

// tracedPool is a pool of the test's own whose round trips tr records.
func tracedPool(t *testing.T) (*pgxpool.Pool, *trips) {
	t.Helper()
	pc, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := &trips{}
	pc.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(t.Context(), pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, tr
}

func stmtName(sql string) string {
	if m := queryName.FindStringSubmatch(sql); m != nil {
		return m[1]
	}
	f := strings.Fields(sql)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.Join(f, " ")
}

func (c *trips) add(entry string, stmts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on {
		c.sent = append(c.sent, entry)
		c.stmts += stmts
	}
}

func (c *trips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.add(stmtName(d.SQL), 1)
	return ctx
}
func (c *trips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *trips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	names := make([]string, len(d.Batch.QueuedQueries))
	for i, q := range d.Batch.QueuedQueries {
		names[i] = stmtName(q.SQL)
	}
	c.add("["+strings.Join(names, " + ")+"]", len(names))
	return ctx
}
func (c *trips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *trips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (c *trips) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	c.add("COPY "+d.TableName.Sanitize(), 1)
	return ctx
}
func (c *trips) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// during returns the round trips fn made.
func (c *trips) during(fn func()) []string {
	sent, _ := c.counted(fn)
	return sent
}

// count returns how many round trips fn made and how many statements they sent.
func (c *trips) count(fn func()) (trips, stmts int) {
	sent, stmts := c.counted(fn)
	return len(sent), stmts
}

// counted returns the round trips fn made and how many statements they sent.
func (c *trips) counted(fn func()) ([]string, int) {
	c.mu.Lock()
	c.on, c.sent, c.stmts = true, nil, 0
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	return c.sent, c.stmts
}

// tripsFixture is a money fixture (fees, a voucher, a provider, a job queue) on a pool
// whose round trips are recorded.
func tripsFixture(t *testing.T) (moneyFixture, *trips) {
	t.Helper()
	pool, tr := tracedPool(t)
	p := newFakeProvider()
	f := fixtureOn(t, pool, smallSpec([]demo.Section{oneRow("A", 6, 1000)},
		demo.GATier{Name: "Floor", PriceCents: 1000, Capacity: 10, Stripes: 2}), DefaultConfig()).withProviderConfig(p, DefaultConfig())
	jobs := bookingtest.NewJobs(t, f.pool, bookingtest.Workers{})
	f.svc.SetJobs(jobs)
	f.ids(t, `INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents) VALUES ($1, 'all', 100, 300) RETURNING event_id`, f.event)
	f.voucher(t, "ONCE", 5, voucherOpen)
	return moneyFixture{fixture: f, provider: p, jobs: jobs}, tr
}

// TestCheckoutAndConfirmRoundTrips: the round trips of a buyer's checkout (two seats
// or two standing places, fees, with a voucher and without), of the payment's claim
// and charge, and of the provider's webhook that confirms the order, each within its
// budget; the order's lines are the quote's, read back in one round trip. The
// statements of each are logged (go test -v).
func TestCheckoutAndConfirmRoundTrips(t *testing.T) {
	t.Parallel()
	f, tr := tripsFixture(t)
	seats := f.rowSeats(t, "A", "A")
	for _, c := range []struct {
		buyer            string
		seats            []int64 // none: two standing places
		voucher          bool
		checkout, notify int // budgets: checkout's round trips, confirm's
	}{
		{"a", seats[0:2], true, 4, 4},
		{"b", seats[2:4], false, 2, 4},
		{"c", nil, false, 2, 5},
	} {
		var h Hold
		if c.seats != nil {
			h = f.hold(t, c.buyer, c.seats...)
		} else if h2, err := f.holdGA(t, c.buyer, 2); err != nil {
			t.Fatal(err)
		} else {
			h = h2
		}
		if c.voucher {
			if err := f.svc.Buyer.SetVoucher(t.Context(), h.ID, c.buyer, "ONCE"); err != nil {
				t.Fatal(err)
			}
		}
		var o Order
		checkout := tr.during(func() { o = f.checkout(t, h, c.buyer) })
		if want := 2*1100 + 300 - map[bool]int{true: 500}[c.voucher]; o.AmountCents != want {
			t.Fatalf("%s: amount: got %d, want %d", c.buyer, o.AmountCents, want)
		}
		var ch Charges
		var err error
		charges, stmts := tr.counted(func() { ch, err = f.svc.Buyer.OrderCharges(t.Context(), o) })
		if err != nil {
			t.Fatal(err)
		}
		// One batch: the lines, the tax label, the voucher redeemed, the access code used.
		if len(charges) != 1 || stmts != 4 {
			t.Errorf("%s: the order's charges read in %d round trips of %d statements (%v), want 1 of 4", c.buyer, len(charges), stmts, charges)
		}
		if q := ch.Quote; q.Total != int64(o.AmountCents) || len(q.Lines) != 2 || q.OrderFee != 300 || (ch.VoucherCode == "ONCE") != c.voucher {
			t.Errorf("%s: charges: got total %d, %d ticket lines, order fee %d, voucher %q; want %d, 2, 300, voucher %v",
				c.buyer, q.Total, len(q.Lines), q.OrderFee, ch.VoucherCode, o.AmountCents, c.voucher)
		}
		pay := tr.during(func() {
			if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, c.buyer, PaymentMethod{Method: "card"}); err != nil {
				t.Fatal(err)
			}
		})
		ev := f.provider.chargeOf(t, o.ID).event("evt_"+c.buyer, KindPaymentSucceeded)
		confirm := tr.during(func() {
			if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ev); err != nil || got != OutcomeConfirmed {
				t.Fatalf("%s: webhook: got %q, %v; want confirmed", c.buyer, got, err)
			}
		})
		if s, ga := f.ticketCount(t, o.ID); s+ga != 2 {
			t.Errorf("%s: got %d tickets, want 2", c.buyer, s+ga)
		}
		for _, r := range []struct {
			name string
			sent []string
			max  int
		}{{"checkout", checkout, c.checkout}, {"pay", pay, 3}, {"confirm", confirm, c.notify}} {
			t.Logf("%s (seats %v, voucher %v): %s: %d round trips: %s", c.buyer, c.seats != nil, c.voucher, r.name, len(r.sent), strings.Join(r.sent, " | "))
			if len(r.sent) > r.max {
				t.Errorf("%s: %s took %d round trips, want at most %d", c.buyer, r.name, len(r.sent), r.max)
			}
		}
	}
}
