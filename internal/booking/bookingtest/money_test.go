package bookingtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// TestMoneyInvariantsCatch is the negative control of CheckMoney, which every money
// test runs: each broken rule, written straight into the tables, is reported, and an
// event where every order is in order reports nothing.
func TestMoneyInvariantsCatch(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	ev, err := demo.Create(ctx, pool, demo.DemoSpec(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := MoneyViolations(ctx, pool, ev); err != nil || len(v) != 0 {
		t.Fatalf("a fresh event: got %v, %v, want no violation", v, err)
	}

	// order makes an order in a state, with payments (state:amount) and refunds of them.
	order := func(status string, payments ...string) int64 {
		t.Helper()
		var hold, id int64
		mustScan(t, pool, `INSERT INTO holds (event_id, buyer, expires_at) VALUES ($1, 'b', now()) RETURNING id`, []any{ev}, &hold)
		mustScan(t, pool, `INSERT INTO orders (event_id, hold_id, buyer, email, amount_cents, status)
			VALUES ($1, $2, 'b', 'b@example.com', 1000, $3::order_status) RETURNING id`, []any{ev, hold, status}, &id)
		for i, p := range payments {
			state, refund, _ := strings.Cut(p, "+")
			var pay int64
			mustScan(t, pool, `INSERT INTO payments (order_id, provider, idempotency_key, provider_payment_id, amount_cents, state)
				VALUES ($1, 'test', $2, $3, 1000, $4::payment_state) RETURNING id`,
				[]any{id, fmt.Sprintf("k%d_%d", id, i), fmt.Sprintf("pi_%d_%d", id, i), state}, &pay)
			if refund != "" {
				if _, err := pool.Exec(ctx, `INSERT INTO refunds (order_id, payment_id, amount_cents, reason, idempotency_key, state)
					VALUES ($1, $2, 1000, 'test', $3, $4::refund_state)`, id, pay, fmt.Sprintf("r%d", pay), refund); err != nil {
					t.Fatal(err)
				}
			}
		}
		return id
	}
	// staffRefund adds a staff refund of the order's first payment.
	staffRefund := func(orderID int64, cents int, state string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO refunds (order_id, payment_id, amount_cents, reason, idempotency_key, state, by_staff)
			SELECT $1::bigint, min(id), $2::int, 'staff_refund', 'sr' || $1::bigint || '_' || $2::int || '_' || $3::text, $3::refund_state, true
			FROM payments WHERE order_id = $1::bigint`, orderID, cents, state); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, want string
		make       func()
	}{
		{"confirmed with two kept charges", "without exactly one kept charge", func() {
			id := order("confirmed", "succeeded", "succeeded")
			if _, err := pool.Exec(ctx, `UPDATE orders SET payment_id = 'pi_' || id || '_0' WHERE id = $1`, id); err != nil {
				t.Fatal(err)
			}
		}},
		{"confirmed with no charge", "without exactly one kept charge", func() { order("confirmed") }},
		{"confirmed, keeping another charge than it names", "not the one it names", func() { order("confirmed", "succeeded") }},
		{"refunded, its charge kept", "money kept for an order that sold nothing", func() { order("refunded", "succeeded") }},
		{"expired with a charge under way", "money kept for an order that sold nothing", func() { order("expired", "unknown") }},
		{"a refund never done", "a refund not done", func() { order("refunded", "refunded+due") }},
		{"a payment refunded without its refund", "a refunded payment without its refund", func() { order("refunded", "refunded") }},
		{"left refund_pending", "refund_pending once the jobs have run", func() { order("refund_pending", "refunded+succeeded") }},
		{"staff refunds past what the payment took", "refunded by more than it took", func() {
			id := order("confirmed", "succeeded")
			staffRefund(id, 600, "succeeded")
			staffRefund(id, 600, "pending")
		}},
		{"a staff refund with no tickets behind it", "not its tickets' prices", func() {
			staffRefund(order("confirmed", "succeeded"), 500, "succeeded")
		}},
		{"a payment refunded in part marked refunded", "a refunded payment without its refund", func() {
			staffRefund(order("confirmed", "refunded"), 500, "succeeded")
		}},
	}
	for _, tc := range cases {
		// One at a time on the same event: each adds exactly its own violation.
		before, err := MoneyViolations(ctx, pool, ev)
		if err != nil {
			t.Fatal(err)
		}
		tc.make()
		after, err := MoneyViolations(ctx, pool, ev)
		if err != nil {
			t.Fatal(err)
		}
		added := newLines(before, after)
		found := false
		for _, line := range added {
			found = found || strings.Contains(line, tc.want)
		}
		if !found {
			t.Errorf("%s: got new violations %q, want one about %q", tc.name, added, tc.want)
		}
	}
	// Each sound state, for contrast, adds nothing.
	before, _ := MoneyViolations(ctx, pool, ev)
	order("refunded", "refunded+succeeded", "failed")
	order("pending", "failed", "pending")
	order("expired", "failed")
	after, _ := MoneyViolations(ctx, pool, ev)
	if added := newLines(before, after); len(added) != 0 {
		t.Errorf("sound orders: got new violations %q, want none", added)
	}
}

// newLines returns the lines of after that are not in before.
func newLines(before, after []string) []string {
	seen := map[string]bool{}
	for _, l := range before {
		seen[l] = true
	}
	var out []string
	for _, l := range after {
		if !seen[l] {
			out = append(out, l)
		}
	}
	return out
}

func mustScan(t *testing.T, pool *pgxpool.Pool, q string, args []any, dst ...any) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), q, args...).Scan(dst...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
