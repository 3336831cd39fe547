package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// apiViolations checks, through what the API said to the buyers and the final seat map,
// that no seat was sold twice, that the seats sold are the seats ticketed, and that
// every paid order has its tickets or its refund. It assumes the simulated buyers were
// the event's only buyers (a fresh event, as make onsale makes), and that orders holds
// each buyer's order as read after the buying (settle): a confirmed order counts
// whether or not its buyer saw the confirmation in time. An order whose pay call was
// never answered may be pending without a refund (nothing is known to be charged; the
// SQL checks see a charge that went through); a paid one may not.
func apiViolations(buyers []*buyer, orders map[int]orderJSON, m *board) []string {
	var out []string
	owner := map[int64]int64{} // seat → the confirmed order whose ticket names it
	seatTickets := 0
	for i, b := range buyers {
		o, ok := orders[i]
		if b.orderID == 0 {
			continue
		}
		if !ok {
			if b.paid {
				out = append(out, fmt.Sprintf("order %d was paid, and cannot be read", b.orderID))
			}
			continue
		}
		switch o.Status {
		case "confirmed":
			places := len(o.Seats)
			if o.GAPlaces != nil {
				places += o.GAPlaces.Quantity
			}
			if len(o.Tickets) != places {
				out = append(out, fmt.Sprintf("order %d is confirmed with %d tickets for %d places", o.OrderID, len(o.Tickets), places))
			}
			for _, t := range o.Tickets {
				if t.SeatID == 0 {
					continue
				}
				seatTickets++
				if prev, ok := owner[t.SeatID]; ok {
					out = append(out, fmt.Sprintf("seat %d sold twice: tickets in orders %d and %d", t.SeatID, prev, o.OrderID))
				}
				owner[t.SeatID] = o.OrderID
			}
		case "refunded", "refund_pending":
			if b.paid && len(o.Refunds) == 0 {
				out = append(out, fmt.Sprintf("order %d is %s without a refund", o.OrderID, o.Status))
			}
		default:
			if b.paid {
				out = append(out, fmt.Sprintf("order %d was paid and is %s: neither tickets nor a refund", o.OrderID, o.Status))
			}
		}
		if o.Status != "confirmed" && len(o.Tickets) > 0 {
			out = append(out, fmt.Sprintf("order %d is %s and has %d tickets", o.OrderID, o.Status, len(o.Tickets)))
		}
	}
	if m != nil && m.sold != seatTickets {
		out = append(out, fmt.Sprintf("the seat map shows %d seats sold, the buyers' confirmed orders hold %d seat tickets", m.sold, seatTickets))
	}
	return out
}

// sqlCheck runs the invariants in SQL. The simulator checks the program from
// outside, as any reader of its database could, so the statements are its own,
// read-only.
type sqlCheck struct{ pool *pgxpool.Pool }

func openSQL(ctx context.Context, url string) (*sqlCheck, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("-db: %w", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("-db: %w", err)
	}
	return &sqlCheck{pool: pool}, nil
}

func (c *sqlCheck) Close() { c.pool.Close() }

// roomSettings reads the event's waiting room, to compare the achieved admission rate
// with the configured one.
func (c *sqlCheck) roomSettings(ctx context.Context, eventID int64, cfg *config) error {
	return c.pool.QueryRow(ctx, `SELECT queue_rate, queue_slots FROM events WHERE id = $1`, eventID).Scan(&cfg.Rate, &cfg.Slots)
}

// invariant is a query that returns one line per violation; $1 is the event, $2 how
// long past its expiry a hold may live (the tidy-up period).
type invariant struct{ name, query string }

var invariants = []invariant{
	{"a seat sold twice", `
		SELECT 'seat ' || seat_id || ' has ' || count(*) || ' valid tickets, orders ' || string_agg(order_id::text, ', ')
		FROM tickets WHERE event_id = $1 AND voided_at IS NULL AND seat_id IS NOT NULL
		GROUP BY seat_id HAVING count(*) > 1`},
	{"sold seats and valid tickets differ", `
		SELECT (SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NOT NULL) || ' seats sold, '
		       || (SELECT count(DISTINCT seat_id) FROM tickets WHERE event_id = $1 AND voided_at IS NULL AND seat_id IS NOT NULL)
		       || ' seats with a valid ticket, '
		       || (SELECT count(*) FROM tickets WHERE event_id = $1 AND voided_at IS NULL AND seat_id IS NOT NULL)
		       || ' valid seat tickets'
		WHERE (SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NOT NULL)
		   <> (SELECT count(*) FROM tickets WHERE event_id = $1 AND voided_at IS NULL AND seat_id IS NOT NULL)`},
	{"a sold seat without its order's ticket", `
		SELECT 'seat ' || s.id || ' sold to order ' || s.order_id || ' has ' || count(t.id) || ' valid tickets of that order'
		FROM seats s
		LEFT JOIN tickets t ON t.event_id = s.event_id AND t.seat_id = s.id AND t.voided_at IS NULL AND t.order_id = s.order_id
		WHERE s.event_id = $1 AND s.sold_at IS NOT NULL
		GROUP BY s.id, s.order_id HAVING count(t.id) <> 1`},
	{"a confirmed order with the wrong number of tickets", `
		SELECT 'order ' || o.id || ' has ' || n || ' tickets for ' || (cardinality(o.seat_ids) + o.ga_quantity) || ' places'
		FROM orders o,
		     LATERAL (SELECT count(*) AS n FROM tickets t WHERE t.event_id = $1 AND t.order_id = o.id AND t.voided_at IS NULL) c
		WHERE o.event_id = $1 AND o.status = 'confirmed' AND n <> cardinality(o.seat_ids) + o.ga_quantity`},
	{"valid tickets of an order that is not confirmed", `
		SELECT 'order ' || o.id || ' is ' || o.status || ' but has valid tickets'
		FROM orders o
		WHERE o.event_id = $1 AND o.status <> 'confirmed'
		  AND EXISTS (SELECT 1 FROM tickets t WHERE t.event_id = $1 AND t.order_id = o.id AND t.voided_at IS NULL)`},
	{"a paid order with neither its tickets nor its refund", `
		SELECT 'order ' || o.id || ' is ' || o.status || ', its payment ' || p.id || ' ' || p.state
		FROM orders o JOIN payments p ON p.order_id = o.id
		WHERE o.event_id = $1 AND p.state IN ('succeeded', 'refunded') AND o.status <> 'confirmed'
		  AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.payment_id = p.id)`},
	{"GA places sold beyond capacity", `
		SELECT 'tier ' || g.id || ': ' || n || ' valid tickets for ' || g.capacity || ' places'
		FROM ga_tiers g,
		     LATERAL (SELECT count(*) AS n FROM tickets t WHERE t.event_id = $1 AND t.ga_tier_id = g.id AND t.voided_at IS NULL) c
		WHERE g.event_id = $1 AND n > g.capacity`},
	{"a seat hold that outlived its expiry by more than the tidy-up period", `
		SELECT 'seat ' || id || ' still held ' || round(extract(epoch FROM now() - hold_expires_at)::numeric, 1) || ' s after its expiry'
		FROM seats
		WHERE event_id = $1 AND held_by IS NOT NULL AND hold_expires_at < now() - make_interval(secs => $2::float8)
		LIMIT 20`},
	{"a standing hold that outlived its expiry by more than the tidy-up period", `
		SELECT 'hold ' || id || ' keeps ' || ga_quantity || ' places ' || round(extract(epoch FROM now() - expires_at)::numeric, 1) || ' s after its expiry'
		FROM holds
		WHERE event_id = $1 AND ga_quantity > 0 AND released_at IS NULL AND sold_at IS NULL AND expires_at < now() - make_interval(secs => $2::float8)
		LIMIT 20`},
}

// violations returns every broken invariant of the event, one line each.
func (c *sqlCheck) violations(ctx context.Context, eventID int64, tidy time.Duration) ([]string, error) {
	var out []string
	for _, inv := range append(invariants[:len(invariants):len(invariants)], moneyInvariants...) {
		args := []any{eventID}
		if strings.Contains(inv.query, "$2") {
			args = append(args, tidy.Seconds())
		}
		rows, err := c.pool.Query(ctx, inv.query, args...)
		if err != nil {
			return out, fmt.Errorf("%s: %w", inv.name, err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return out, err
			}
			out = append(out, inv.name+": "+line)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return out, fmt.Errorf("%s: %w", inv.name, err)
		}
	}
	return out, nil
}
