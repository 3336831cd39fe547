package bookingtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// moneyInvariants are the rules of "every payment accounted for": no money
// kept without tickets, no tickets without money kept, and nothing left half-way once
// the jobs have run. A kept charge is a payment that succeeded and has no automatic
// refund (by_staff false: the refund of a payment that sold nothing, always in full);
// staff may refund a kept charge in part, ticket by ticket (staffrefund.go), and it stays the
// kept charge until its refunds add up to it. A staff void ends tickets with no money
// back (status_reason 'voided'): what the order paid stays paid, on purpose. A
// box-office payment (cash or a card present) is its sale's, and goes back at the desk
// only: a refund by a named member, done as it is recorded, so that the till's cash
// is the sales less these refunds.
var moneyInvariants = []invariant{
	{"a confirmed order without exactly one kept charge (none if free)", `
		SELECT 'order ' || o.id || ' (' || o.amount_cents || ' cents) keeps ' || count(p.id) || ' charges'
		FROM orders o
		LEFT JOIN payments p ON p.order_id = o.id AND p.state = 'succeeded'
		     AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.payment_id = p.id AND NOT r.by_staff)
		WHERE o.event_id = $1 AND o.status = 'confirmed'
		GROUP BY o.id, o.amount_cents
		HAVING count(p.id) <> CASE WHEN o.amount_cents > 0 THEN 1 ELSE 0 END`},
	{"a confirmed order whose kept charge is not the one it names, or not its amount", `
		SELECT 'order ' || o.id || ' names ' || coalesce(o.payment_id, 'nothing') || ', keeps ' || p.provider_payment_id
		       || ' of ' || p.amount_cents || ' cents for ' || o.amount_cents
		FROM orders o
		JOIN payments p ON p.order_id = o.id AND p.state = 'succeeded'
		     AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.payment_id = p.id AND NOT r.by_staff)
		WHERE o.event_id = $1 AND o.status = 'confirmed'
		  AND (o.payment_id IS DISTINCT FROM p.provider_payment_id OR p.amount_cents <> o.amount_cents)`},
	{"money kept for an order that sold nothing", `
		SELECT 'order ' || o.id || ' is ' || o.status || ' and keeps payment ' || p.id || ' (' || p.state || ')'
		FROM orders o JOIN payments p ON p.order_id = o.id
		WHERE o.event_id = $1 AND o.status <> 'confirmed'
		  AND ((p.state = 'succeeded' AND o.status_reason <> 'voided'
		        AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.payment_id = p.id AND r.state = 'succeeded'))
		       OR (o.status <> 'pending' AND p.state IN ('pending', 'unknown')))`},
	{"tickets for an order that sold nothing", `
		SELECT 'order ' || o.id || ' is ' || o.status || ' but has valid tickets'
		FROM orders o
		WHERE o.event_id = $1 AND o.status IN ('refunded', 'expired')
		  AND EXISTS (SELECT 1 FROM tickets t WHERE t.event_id = $1 AND t.order_id = o.id AND t.voided_at IS NULL)`},
	{"a refund not done once the jobs have run", `
		SELECT 'refund ' || r.id || ' of order ' || r.order_id || ' is ' || r.state
		FROM refunds r JOIN orders o ON o.id = r.order_id
		WHERE o.event_id = $1 AND r.state <> 'succeeded'`},
	{"a refunded payment without its refunds adding up to it, or one refunded in full that is not marked so", `
		SELECT 'payment ' || p.id || ' of ' || p.amount_cents || ' cents is ' || p.state || ', its refunds done ' || done
		FROM payments p JOIN orders o ON o.id = p.order_id,
		     LATERAL (SELECT coalesce(sum(r.amount_cents), 0) AS done FROM refunds r
		              WHERE r.payment_id = p.id AND r.state = 'succeeded') d
		WHERE o.event_id = $1 AND p.state IN ('succeeded', 'refunded')
		  AND ((p.state = 'refunded') <> (done > 0 AND done >= p.amount_cents))`},
	{"a payment refunded by more than it took", `
		SELECT 'payment ' || p.id || ' took ' || p.amount_cents || ', refunds ' || sum(r.amount_cents)
		FROM payments p JOIN orders o ON o.id = p.order_id JOIN refunds r ON r.payment_id = p.id AND r.state <> 'failed'
		WHERE o.event_id = $1
		GROUP BY p.id, p.amount_cents HAVING sum(r.amount_cents) > p.amount_cents`},
	// A ticket is worth what its order line charged (ticket_paid_cents), else its own
	// price; the staff refund that ended an order, its last, gives back the order fee
	// too.
	{"a staff refund that is not its tickets' prices", `
		SELECT 'refund ' || r.id || ' of ' || r.amount_cents || ' cents for tickets worth ' || worth
		FROM (SELECT r.id, r.order_id, r.amount_cents,
		             coalesce(sum(coalesce(ticket_paid_cents(t.event_id, t.order_id, t.id, t.seat_id, t.ga_tier_id), s.price_cents, g.price_cents)), 0) AS worth
		      FROM refunds r JOIN orders o ON o.id = r.order_id
		      LEFT JOIN tickets t ON t.refund_id = r.id
		      LEFT JOIN seats s ON s.event_id = t.event_id AND s.id = t.seat_id
		      LEFT JOIN ga_tiers g ON g.event_id = t.event_id AND g.id = t.ga_tier_id
		      WHERE o.event_id = $1 AND r.by_staff
		      GROUP BY r.id, r.order_id, r.amount_cents) r
		WHERE r.amount_cents <> worth
		  AND NOT (r.amount_cents = worth + (SELECT coalesce(sum(l.total_cents), 0) FROM order_lines l
		                                     WHERE l.event_id = $1 AND l.order_id = r.order_id AND l.kind = 'order_fee')
		           AND NOT EXISTS (SELECT 1 FROM tickets v WHERE v.event_id = $1 AND v.order_id = r.order_id AND v.voided_at IS NULL)
		           AND r.id = (SELECT max(x.id) FROM refunds x WHERE x.order_id = r.order_id AND x.by_staff))`},
	{"a ticket refunded by staff without its refund, or voided with one", `
		SELECT 'ticket ' || t.id || ' ended as ' || t.void_reason || ' with refund ' || coalesce(t.refund_id::text, 'none')
		FROM tickets t
		WHERE t.event_id = $1 AND t.void_reason IS NOT NULL
		  AND ((t.void_reason = 'void') <> (t.refund_id IS NULL))
		  AND coalesce(ticket_paid_cents(t.event_id, t.order_id, t.id, t.seat_id, t.ga_tier_id),
		               (SELECT s.price_cents FROM seats s WHERE s.event_id = t.event_id AND s.id = t.seat_id),
		               (SELECT g.price_cents FROM ga_tiers g WHERE g.event_id = t.event_id AND g.id = t.ga_tier_id)) > 0`},
	{"a box-office payment refunded other than at the desk: by no member, through a provider, or not done at once", `
		SELECT 'refund ' || r.id || ' of box-office payment ' || p.id || ' is ' || r.state
		       || ' by ' || coalesce(r.staff_id::text, 'nobody') || coalesce(' as ' || r.provider_refund_id, '')
		FROM refunds r JOIN payments p ON p.id = r.payment_id JOIN orders o ON o.id = r.order_id
		WHERE o.event_id = $1 AND p.provider = 'box_office'
		  AND (NOT r.by_staff OR r.staff_id IS NULL OR r.state <> 'succeeded' OR r.provider_refund_id IS NOT NULL)`},
	{"a box-office payment that is not its sale's: no sale, another method, another order's", `
		SELECT 'payment ' || p.id || ' of order ' || p.order_id || ' (' || p.state_reason || ') has sale '
		       || coalesce(b.method, 'none')
		FROM payments p JOIN orders o ON o.id = p.order_id
		LEFT JOIN box_office_sales b ON b.order_id = p.order_id
		WHERE o.event_id = $1 AND p.provider = 'box_office'
		  AND (b.order_id IS NULL OR b.method <> p.state_reason OR b.event_id <> o.event_id)`},
	{"a desk confirmation that does not match what it did", `
		SELECT 'confirmation of order ' || c.order_id || ' says ' || c.amount_cents || ' cents for '
		       || c.asked || ' tickets; they are worth ' || c.worth || ', ' || c.ended || ' ended as ' || c.kind
		FROM (SELECT c.order_id, c.amount_cents, c.kind, cardinality(c.ticket_ids) AS asked, count(t.id) AS ended,
		             coalesce(sum(coalesce(ticket_paid_cents(t.event_id, t.order_id, t.id, t.seat_id, t.ga_tier_id), s.price_cents, g.price_cents)), 0) AS worth
		      FROM staff_refund_requests c JOIN orders o ON o.id = c.order_id
		      LEFT JOIN tickets t ON t.event_id = o.event_id AND t.id = ANY(c.ticket_ids) AND t.order_id = c.order_id
		           AND t.void_reason = c.kind
		      LEFT JOIN seats s ON s.event_id = t.event_id AND s.id = t.seat_id
		      LEFT JOIN ga_tiers g ON g.event_id = t.event_id AND g.id = t.ga_tier_id
		      WHERE o.event_id = $1
		      GROUP BY c.key, c.order_id, c.amount_cents, c.ticket_ids, c.kind) c
		WHERE c.ended <> c.asked
		   OR (c.amount_cents <> CASE c.kind WHEN 'void' THEN 0 ELSE c.worth END
		       AND NOT (c.kind = 'refund' AND c.amount_cents = c.worth + (SELECT coalesce(sum(l.total_cents), 0) FROM order_lines l
		                                     WHERE l.event_id = $1 AND l.order_id = c.order_id AND l.kind = 'order_fee')
		                AND NOT EXISTS (SELECT 1 FROM tickets v WHERE v.event_id = $1 AND v.order_id = c.order_id AND v.voided_at IS NULL)))`},
	{"an order refund_pending once the jobs have run", `
		SELECT 'order ' || o.id || ' is refund_pending (' || o.status_reason || ')'
		FROM orders o WHERE o.event_id = $1 AND o.status = 'refund_pending'`},
}

// MoneyViolations returns every broken money invariant of the event, one line each.
// It assumes the jobs have run: a refund under way is a violation.
func MoneyViolations(ctx context.Context, pool *pgxpool.Pool, eventID int64) ([]string, error) {
	return violations(ctx, pool, eventID, moneyInvariants)
}

// CheckMoney fails the test for every broken invariant of the event, of the seats
// (Check) and of the money. Call it once the jobs have run (see SettleMoney).
func CheckMoney(t testing.TB, pool *pgxpool.Pool, eventID int64) {
	t.Helper()
	Check(t, pool, eventID)
	v, err := MoneyViolations(context.Background(), pool, eventID)
	if err != nil {
		t.Fatalf("checking money invariants: %v", err)
	}
	for _, line := range v {
		t.Errorf("money invariant broken: %s", line)
	}
}

// SettleMoney waits, up to d, until no refund of the event is under way and no order
// is refund_pending (the jobs and the refund webhooks have done their work), then
// checks every invariant with CheckMoney. A refund that never settles fails the test
// at the deadline, with what is left.
func SettleMoney(t testing.TB, pool *pgxpool.Pool, eventID int64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var left int
		err := pool.QueryRow(context.Background(), `
			SELECT (SELECT count(*) FROM refunds r JOIN orders o ON o.id = r.order_id
			        WHERE o.event_id = $1 AND r.state IN ('due', 'pending'))
			     + (SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'refund_pending')`, eventID).Scan(&left)
		if err != nil {
			t.Fatalf("waiting for refunds: %v", err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after %v: %d refunds or refund_pending orders left, want none", d, left)
			break
		}
		time.Sleep(20 * time.Millisecond) // polling: the refunds are jobs and webhooks
	}
	CheckMoney(t, pool, eventID)
}
