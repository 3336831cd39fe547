package booking

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/demo"
)

// moneyFixture is a fixture that pays through a fake provider and queues its side
// effects on a test job queue, run by Drain.
type moneyFixture struct {
	fixture
	provider *fakeProvider
	jobs     *bookingtest.Jobs
}

func newMoneyFixture(t *testing.T, spec demo.EventSpec, cfg Config) moneyFixture {
	t.Helper()
	p := newFakeProvider()
	f := newFixture(t, spec, cfg).withProviderConfig(p, cfg)
	jobs := bookingtest.NewJobs(t, f.pool, bookingtest.Workers{Refund: f.svc.Worker.RunRefund})
	f.svc.SetJobs(jobs)
	return moneyFixture{fixture: f, provider: p, jobs: jobs}
}

// drain runs the queued jobs and fails the test if one fails.
func (f moneyFixture) drain(t *testing.T) {
	t.Helper()
	if _, err := f.jobs.Drain(t.Context()); err != nil {
		t.Fatalf("jobs: %v", err)
	}
	if fs := f.jobs.Failures(); len(fs) > 0 {
		t.Fatalf("jobs failed: %v", fs)
	}
}

// TestRunRefundOnce: the success of a payment whose seats were resold queues one
// refund; running it again and again, and the refund's webhook arriving after the
// provider already said it was done, refund once and end the order refunded.
func TestRunRefundOnce(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	seats := f.rowSeats(t, "Floor", "A")
	o := f.checkout(t, f.hold(t, "a", seats[0]), "a")
	if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "a", PaymentMethod{Method: "card"}); err != nil {
		t.Fatal(err)
	}
	f.lapse(t, o.HoldID)
	ob := f.checkout(t, f.hold(t, "b", seats[0]), "b")
	if got := f.pay(t, ob, "evt_b"); got != OutcomeConfirmed {
		t.Fatalf("b: got %q, want confirmed", got)
	}
	ev := f.provider.chargeOf(t, o.ID).event("evt_a", KindPaymentSucceeded)
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ev); err != nil || got != OutcomeRefundPending {
		t.Fatalf("a's late success: got %q, %v, want refund_pending", got, err)
	}
	var refund int64
	if err := f.pool.QueryRow(t.Context(), `SELECT id FROM refunds WHERE order_id = $1`, o.ID).Scan(&refund); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	for range 3 {
		if err := f.svc.Worker.RunRefund(t.Context(), refund); err != nil {
			t.Fatalf("run refund again: %v", err)
		}
	}
	if _, refunds := f.provider.counts(); refunds != 1 {
		t.Errorf("refunds at the provider: got %d, want 1", refunds)
	}
	webhook := PaymentEvent{ID: "evt_refund", Kind: KindRefundSucceeded, RefundKey: "unknown", OrderID: o.ID, EventID: o.EventID}
	if err := f.pool.QueryRow(t.Context(), `SELECT provider_refund_id FROM refunds WHERE id = $1`, refund).Scan(&webhook.RefundID); err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", webhook); err != nil || got != OutcomeIgnored {
		t.Errorf("the refund's webhook after it was settled: got %q, %v, want ignored", got, err)
	}
	got, err := f.svc.Buyer.Order(t.Context(), o.ID, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusRefunded || got.StatusReason != ReasonSeatsUnavailable || len(got.Refunds) != 1 || !got.Refunds[0].Done {
		t.Errorf("order: got %s (%s), refunds %+v, want refunded (seats_unavailable), one done", got.Status, got.StatusReason, got.Refunds)
	}
	if n := f.jobs.Queued(t, bookingtest.JobOrderRefunded, o.ID); n != 1 {
		t.Errorf("refund emails queued: got %d, want 1", n)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestReconcileAfterAge: a payment is looked up only once it has gone without word for
// ReconcileAfter; then its success is applied as its webhook would be.
func TestReconcileAfterAge(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	o := f.checkout(t, f.hold(t, "a", f.rowSeats(t, "Floor", "A")[0]), "a")
	if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "a", PaymentMethod{Method: "card"}); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Worker.Reconcile(t.Context())
	if err != nil || res.Looked != 0 {
		t.Fatalf("a fresh payment: got %+v, %v, want nothing looked up", res, err)
	}
	cfg := DefaultConfig()
	cfg.ReconcileAfter = time.Nanosecond
	soon := f.withProviderConfig(f.provider, cfg)
	soon.svc.SetJobs(f.jobs)
	res, err = soon.svc.Worker.Reconcile(t.Context())
	if err != nil || res.Looked != 1 || res.Applied != 1 {
		t.Fatalf("with no wait: got %+v, %v, want one looked up and applied", res, err)
	}
	if st, _ := f.orderStatus(t, o.ID); st != StatusConfirmed {
		t.Errorf("order: got %s, want confirmed", st)
	}
	f.drain(t)
	if n := f.jobs.Queued(t, bookingtest.JobOrderConfirmed, o.ID); n != 1 {
		t.Errorf("confirmations queued: got %d, want 1", n)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestExpireClaimRace races, around the moment holds lapse, payments starting (the
// claim) against reconciliation expiring the same orders. Both take the order's lock
// first and decide after it, so each order ends one way: expired with no payment under
// way, or pending with its payment claimed before the hold lapsed, never both. Both
// outcomes must turn up, so the race is really run on both sides of the expiry. The
// money checker, whose negative control is in bookingtest, reports an expired order
// with a payment under way.
func TestExpireClaimRace(t *testing.T) {
	t.Parallel()
	// The race must be run, not only survived: a round in which every payer came
	// before the expiry (or after it) shows nothing, which a starved machine can make
	// happen. Up to three rounds, each on a fresh event, until one has both outcomes;
	// the invariants are checked after every round.
	for round := 1; ; round++ {
		claimed, refused := expireClaimRound(t)
		if claimed > 0 && refused > 0 {
			return
		}
		if round == 3 {
			t.Errorf("in %d rounds no claims raced the expiry (last round: %d claimed, %d refused)", round, claimed, refused)
			return
		}
		t.Logf("round %d: %d claimed, %d refused: again", round, claimed, refused)
	}
}

// expireClaimRound is one round of TestExpireClaimRace: every order either claimed
// for payment or expired, never both or neither.
func expireClaimRound(t *testing.T) (claimed, refused int64) {
	t.Helper()
	const orders = 40
	spec := smallSpec([]demo.Section{{Name: "Floor", Rows: 4, SeatsPerRow: 10, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 5000}}}})
	f := newMoneyFixture(t, spec, DefaultConfig())
	var seats []int64
	for _, row := range []string{"A", "B", "C", "D"} {
		seats = append(seats, f.rowSeats(t, "Floor", row)...)
	}
	os := make([]Order, orders)
	for i := range os {
		buyer := buyerName("r", i)
		os[i] = f.checkout(t, f.hold(t, buyer, seats[i]), buyer)
	}
	// Every hold lapses 300 ms from now (test setup: the database clock decides), and
	// each payer waits a different while, spreading the claims across the expiry.
	for _, q := range []string{
		`UPDATE holds SET expires_at = now() + interval '300 milliseconds' WHERE event_id = $1`,
		`UPDATE seats SET hold_expires_at = now() + interval '300 milliseconds' WHERE event_id = $1 AND held_by IS NOT NULL`,
	} {
		if _, err := f.pool.Exec(t.Context(), q, f.event); err != nil {
			t.Fatal(err)
		}
	}
	var nClaimed, nRefused atomic.Int64
	var errs errorCounter
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.svc.Worker.Reconcile(t.Context()); err != nil {
				errs.add(err)
			}
		}
	}()
	atOnce(orders, func(i int) {
		wait(t.Context(), time.Duration(i)*15*time.Millisecond)
		_, err := f.svc.Buyer.Pay(t.Context(), os[i].ID, buyerName("r", i), PaymentMethod{Method: "card"})
		switch {
		case err == nil:
			nClaimed.Add(1)
		case errors.Is(err, ErrHoldExpired), errors.Is(err, ErrOrderNotPending):
			nRefused.Add(1)
		default:
			errs.add(err)
		}
	})
	close(stop)
	<-done
	errs.report(t, "race")
	if _, err := f.svc.Worker.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	expired := f.count(t, `SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'expired'`, f.event)
	underWay := f.count(t, `SELECT count(*) FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE o.event_id = $1 AND p.state = 'pending'`, f.event)
	claimed, refused = nClaimed.Load(), nRefused.Load()
	t.Logf("%d claimed, %d refused; %d expired", claimed, refused, expired)
	if int64(underWay) != claimed || expired+underWay != orders {
		t.Errorf("got %d payments under way and %d expired orders for %d claims and %d orders, want every order one way",
			underWay, expired, claimed, orders)
	}
	bookingtest.CheckMoney(t, f.pool, f.event)
	return claimed, refused
}

// TestFreeOrders: a free order confirms at checkout, with no charge; one left pending
// (checked out before free orders confirmed there) confirms when paid.
func TestFreeOrders(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, smallSpec([]demo.Section{oneRow("Free", 4, 0)}), DefaultConfig())
	seats := f.rowSeats(t, "Free", "A")
	o := f.checkout(t, f.hold(t, "a", seats[0]), "a")
	if o.Status != StatusConfirmed || len(o.Tickets) != 1 {
		t.Errorf("checkout: got %s with %d tickets, want confirmed with 1", o.Status, len(o.Tickets))
	}
	legacy := f.checkout(t, f.hold(t, "a", seats[1]), "a")
	if _, err := f.pool.Exec(t.Context(), `
		WITH t AS (DELETE FROM tickets WHERE event_id = $1 AND order_id = $2)
		UPDATE orders SET status = 'pending', payment_id = NULL WHERE id = $2`, f.event, legacy.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(t.Context(), `UPDATE seats SET sold_at = NULL, order_id = NULL WHERE event_id = $1 AND order_id = $2`, f.event, legacy.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(t.Context(), `UPDATE holds SET sold_at = NULL WHERE event_id = $1 AND id = $2`, f.event, legacy.HoldID.Seq); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Buyer.Pay(t.Context(), legacy.ID, "a", PaymentMethod{Method: "card"})
	if err != nil || res.Status != PayConfirmed {
		t.Fatalf("pay a free order: got %+v, %v, want confirmed", res, err)
	}
	if n, _ := f.provider.counts(); n != 0 {
		t.Errorf("charges: got %d, want none", n)
	}
	f.drain(t)
	bookingtest.CheckMoney(t, f.pool, f.event)
}

// TestReceipt: the jobs' view of an order, with no session: its tickets and its event.
func TestReceipt(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	o := f.checkout(t, f.hold(t, "a", f.rowSeats(t, "Floor", "A")[:2]...), "a")
	f.pay(t, o, "evt_1")
	r, err := f.svc.Worker.Receipt(t.Context(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Order.Status != StatusConfirmed || len(r.Order.Tickets) != 2 || len(r.Order.Seats) != 2 || r.Event.ID != f.event || r.Event.Name == "" {
		t.Errorf("receipt: got %s, %d tickets, %d seats, event %d %q; want confirmed, 2, 2, event %d",
			r.Order.Status, len(r.Order.Tickets), len(r.Order.Seats), r.Event.ID, r.Event.Name, f.event)
	}
	if _, err := f.svc.Worker.Receipt(t.Context(), o.ID+1000); !errors.Is(err, ErrOrderNotFound) {
		t.Errorf("receipt of no order: got %v, want ErrOrderNotFound", err)
	}
}

// TestReconcileStuckPaymentGoesToTheBack: a payment the provider cannot tell about
// (every lookup fails) must not hold the front of reconciliation's line. With a batch
// of one and the stuck payment the oldest, the second pass must take the other one.
// Before, a failed lookup left the row untouched, first in line for ever: a batch's
// worth of such payments stopped reconciliation for good.
func TestReconcileStuckPaymentGoesToTheBack(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.ReconcileAfter, cfg.ReconcileBatch = time.Nanosecond, 1
	f := newMoneyFixture(t, confirmSpec(), cfg)
	f.log.expect("payment lookup failed")
	seats := f.rowSeats(t, "Floor", "A")
	stuck := f.checkout(t, f.hold(t, "a", seats[0]), "a")
	other := f.checkout(t, f.hold(t, "b", seats[1]), "b")
	for buyer, o := range map[string]Order{"a": stuck, "b": other} {
		if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, buyer, PaymentMethod{Method: "card"}); err != nil {
			t.Fatal(err)
		}
	}
	stuckID := f.provider.chargeOf(t, stuck.ID).id
	f.provider.mu.Lock()
	f.provider.cannotSay = map[string]bool{stuckID: true}
	f.provider.mu.Unlock()
	// The stuck payment is the oldest.
	if _, err := f.pool.Exec(t.Context(), `UPDATE payments SET updated_at = now() - interval '1 hour' WHERE order_id = $1`, stuck.ID); err != nil {
		t.Fatal(err)
	}
	for pass := 1; pass <= 2; pass++ {
		if _, err := f.svc.Worker.Reconcile(t.Context()); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
	}
	if st, _ := f.orderStatus(t, other.ID); st != StatusConfirmed {
		t.Errorf("the other order after two passes of one: got %s, want confirmed", st)
	}
	if st, _ := f.orderStatus(t, stuck.ID); st != StatusPending {
		t.Errorf("the stuck order: got %s, want still pending (its claim kept)", st)
	}
}

// TestPayRefusals: Pay answers another buyer's order and an order that does not
// exist as not found, a paid order as not pending, and none of them takes a claim or
// a charge.
func TestPayRefusals(t *testing.T) {
	t.Parallel()
	f := newMoneyFixture(t, confirmSpec(), DefaultConfig())
	o := f.checkout(t, f.hold(t, "a", f.rowSeats(t, "Floor", "A")[0]), "a")
	for _, c := range []struct {
		what  string
		id    int64
		buyer string
		want  error
	}{
		{"another buyer's order", o.ID, "b", ErrOrderNotFound},
		{"no such order", o.ID + 1000, "a", ErrOrderNotFound},
	} {
		if _, err := f.svc.Buyer.Pay(t.Context(), c.id, c.buyer, PaymentMethod{Method: "card"}); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.what, err, c.want)
		}
	}
	var claims int
	if err := f.pool.QueryRow(t.Context(), `SELECT count(*) FROM payments WHERE order_id = $1`, o.ID).Scan(&claims); err != nil {
		t.Fatal(err)
	}
	if charges, _ := f.provider.counts(); claims != 0 || charges != 0 {
		t.Fatalf("after the refusals: %d claims, %d charges, want none", claims, charges)
	}
	if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "a", PaymentMethod{Method: "card"}); err != nil {
		t.Fatalf("a pays: %v", err)
	}
	ev := f.provider.chargeOf(t, o.ID).event("evt_a", KindPaymentSucceeded)
	if got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", ev); err != nil || got != OutcomeConfirmed {
		t.Fatalf("a's payment: got %q, %v, want confirmed", got, err)
	}
	if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, "a", PaymentMethod{Method: "card"}); !errors.Is(err, ErrOrderNotPending) {
		t.Errorf("a paid order: got %v, want ErrOrderNotPending", err)
	}
	if charges, _ := f.provider.counts(); charges != 1 {
		t.Errorf("charges: got %d, want the one payment's", charges)
	}
}
