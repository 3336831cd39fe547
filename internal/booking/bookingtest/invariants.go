// Package bookingtest checks, in SQL, the invariants that no sale may break. Race
// tests run it after every round, and HTTP tests after their sales.
//
// It imports only pgx: it reads the tables as they stand, not through booking, so that
// it checks what booking wrote rather than what booking believes.
package bookingtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// invariant is a query that returns one row per violation, described as text.
type invariant struct {
	name  string
	query string
}

var invariants = []invariant{
	{"a seat with two valid tickets", `
		SELECT 'seat ' || seat_id || ' has ' || count(*) || ' valid tickets'
		FROM tickets WHERE event_id = $1 AND voided_at IS NULL AND seat_id IS NOT NULL
		GROUP BY seat_id HAVING count(*) > 1`},
	{"a sold seat without exactly its order's ticket", `
		SELECT 'seat ' || s.id || ' sold to order ' || s.order_id || ' has ' || count(t.id) || ' valid tickets of that order'
		FROM seats s
		LEFT JOIN tickets t ON t.event_id = s.event_id AND t.seat_id = s.id AND t.voided_at IS NULL AND t.order_id = s.order_id
		WHERE s.event_id = $1 AND s.sold_at IS NOT NULL
		GROUP BY s.id, s.order_id HAVING count(t.id) <> 1`},
	{"a valid ticket for a seat that is not sold to its order", `
		SELECT 'ticket ' || t.id || ' (order ' || t.order_id || ') for seat ' || t.seat_id || ' sold to ' || coalesce(s.order_id::text, 'nobody')
		FROM tickets t JOIN seats s ON s.event_id = t.event_id AND s.id = t.seat_id
		WHERE t.event_id = $1 AND t.voided_at IS NULL AND s.order_id IS DISTINCT FROM t.order_id`},
	{"a confirmed order that does not own exactly its seats", `
		SELECT 'order ' || o.id || ' owns ' || owned::text || ', bought ' || bought::text
		FROM orders o,
		     LATERAL (SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') AS owned
		              FROM seats s WHERE s.event_id = $1 AND s.order_id = o.id) a,
		     LATERAL (SELECT coalesce(array_agg(x ORDER BY x), '{}') AS bought FROM unnest(o.seat_ids) x) b
		WHERE o.event_id = $1 AND o.status = 'confirmed' AND owned <> bought`},
	{"a seat owned by an order that is not confirmed", `
		SELECT 'seat ' || s.id || ' owned by ' || o.status || ' order ' || o.id
		FROM seats s JOIN orders o ON o.id = s.order_id
		WHERE s.event_id = $1 AND o.status <> 'confirmed'`},
	{"a confirmed order with the wrong number of tickets", `
		SELECT 'order ' || o.id || ' has ' || (SELECT count(*) FROM tickets t WHERE t.event_id = $1 AND t.order_id = o.id AND t.voided_at IS NULL)
		       || ' tickets for ' || (cardinality(o.seat_ids) + o.ga_quantity) || ' places'
		FROM orders o
		WHERE o.event_id = $1 AND o.status = 'confirmed'
		  AND (SELECT count(*) FROM tickets t WHERE t.event_id = $1 AND t.order_id = o.id AND t.voided_at IS NULL)
		      <> cardinality(o.seat_ids) + o.ga_quantity`},
	{"tickets for an order that is not confirmed", `
		SELECT 'order ' || o.id || ' is ' || o.status || ' but has valid tickets'
		FROM orders o
		WHERE o.event_id = $1 AND o.status IN ('pending', 'refund_pending', 'refunded', 'expired')
		  AND EXISTS (SELECT 1 FROM tickets t WHERE t.event_id = $1 AND t.order_id = o.id AND t.voided_at IS NULL)`},
	{"GA places that do not add up to capacity", `
		SELECT 'tier ' || g.id || ': ' || remaining || ' left + ' || taken || ' held or sold <> capacity ' || g.capacity
		FROM ga_tiers g,
		     LATERAL (SELECT coalesce(sum(remaining), 0) AS remaining FROM ga_stripes s WHERE s.event_id = $1 AND s.tier_id = g.id) r,
		     LATERAL (SELECT coalesce(sum(p.quantity), 0) AS taken FROM hold_ga_places p
		              JOIN holds h ON h.event_id = p.event_id AND h.id = p.hold_id
		              WHERE p.event_id = $1 AND p.tier_id = g.id AND h.released_at IS NULL) t
		WHERE g.event_id = $1 AND remaining + taken <> g.capacity`},
	{"more valid GA tickets than places sold", `
		SELECT 'tier ' || g.id || ': ' || tickets || ' valid tickets, ' || sold || ' places sold'
		FROM ga_tiers g,
		     LATERAL (SELECT count(*) AS tickets FROM tickets t WHERE t.event_id = $1 AND t.ga_tier_id = g.id AND t.voided_at IS NULL) a,
		     LATERAL (SELECT coalesce(sum(p.quantity), 0) AS sold FROM hold_ga_places p
		              JOIN holds h ON h.event_id = p.event_id AND h.id = p.hold_id
		              WHERE p.event_id = $1 AND p.tier_id = g.id AND h.sold_at IS NOT NULL) b
		WHERE g.event_id = $1 AND tickets <> sold`},
}

// Violations returns every broken invariant of the event, one line each; none is good.
func Violations(ctx context.Context, pool *pgxpool.Pool, eventID int64) ([]string, error) {
	return violations(ctx, pool, eventID, invariants)
}

// violations runs a list of invariants.
func violations(ctx context.Context, pool *pgxpool.Pool, eventID int64, list []invariant) ([]string, error) {
	var out []string
	for _, inv := range list {
		rows, err := pool.Query(ctx, inv.query, eventID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", inv.name, err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, inv.name+": "+line)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", inv.name, err)
		}
	}
	return out, nil
}

// Check fails the test for every broken invariant of the event.
func Check(t testing.TB, pool *pgxpool.Pool, eventID int64) {
	t.Helper()
	v, err := Violations(context.Background(), pool, eventID)
	if err != nil {
		t.Fatalf("checking invariants: %v", err)
	}
	for _, line := range v {
		t.Errorf("invariant broken: %s", line)
	}
}
