-- name: OrderCreate :one
-- One order per hold, and only while the event's sale is open to the hold (by the
-- database clock; a hold that records an access code, in the code's presale too): no
-- row means a second checkout of the same hold (the caller answers with the existing
-- order) or the window (EventSaleWindow tells). The order's lines (order_lines, what
-- it charges line by line) go in with it, numbered from 1 in the arrays' order: the
-- lines_* arrays have one element per line, 0 for a seat, tier or type a line has
-- not. One statement, so an order is never without its lines, and no lines are
-- written when no order is.
WITH created AS (
    INSERT INTO orders (event_id, hold_id, buyer, email, seat_ids, ga_tier_id, ga_quantity, amount_cents)
    SELECT @event_id::bigint, @hold_id::bigint, @buyer::text, @email::text, @seat_ids::bigint[],
           sqlc.narg(ga_tier_id)::bigint, @ga_quantity::int, @amount_cents::int
    WHERE EXISTS (SELECT 1 FROM events e WHERE e.id = @event_id::bigint
                  AND event_on_sale_with(e, (SELECT h.access_code_id FROM holds h
                                             WHERE h.event_id = @event_id::bigint AND h.id = @hold_id::bigint)))
    ON CONFLICT (event_id, hold_id) DO NOTHING
    RETURNING *
), lines AS (
    INSERT INTO order_lines (event_id, order_id, line, kind, seat_id, ga_tier_id, type_id, label,
        price_cents, fee_cents, discount_cents, tax_cents, total_cents)
    SELECT c.event_id, c.id, l.i, (@lines_kind::text[])[l.i], nullif((@lines_seat_id::bigint[])[l.i], 0),
           nullif((@lines_ga_tier_id::bigint[])[l.i], 0), nullif((@lines_type_id::bigint[])[l.i], 0),
           (@lines_label::text[])[l.i], (@lines_price_cents::int[])[l.i], (@lines_fee_cents::int[])[l.i],
           (@lines_discount_cents::int[])[l.i], (@lines_tax_cents::int[])[l.i], (@lines_total_cents::int[])[l.i]
    FROM created c, generate_subscripts(@lines_kind::text[], 1) AS l(i)
)
SELECT created.* FROM created;

-- name: OrderByHold :one
SELECT * FROM orders WHERE event_id = @event_id AND hold_id = @hold_id;

-- name: OrderGet :one
SELECT * FROM orders WHERE id = @id;

-- name: OrderLock :one
-- The order row, locked: every change of an order's state happens under it, which
-- makes confirm idempotent on the order id.
SELECT * FROM orders WHERE id = @id FOR UPDATE;

-- name: OrderSetStatus :exec
UPDATE orders
SET status = @status, status_reason = @status_reason, updated_at = now(),
    confirmed_at = CASE WHEN @status = 'confirmed'::order_status THEN now() ELSE confirmed_at END
WHERE id = @id;

-- name: OrderConfirm :exec
-- The order is sold, and its hold with it: payment_id names the provider's payment it
-- keeps (none for a free order). Only a pending order is confirmed, and its hold is
-- marked sold only when it is: an order in any other state leaves both rows as they
-- are. One statement for both rows, which the sale has locked already (HoldLock;
-- OrderLock, or the order's own creation in the same transaction), so it takes no
-- lock the sale does not hold.
WITH confirmed AS (
    UPDATE orders
    SET status = 'confirmed', status_reason = '', payment_id = sqlc.narg(payment_id)::text,
        confirmed_at = now(), updated_at = now()
    WHERE orders.id = @id AND orders.status = 'pending'
    RETURNING orders.id
)
UPDATE holds SET sold_at = now(), released_at = NULL
WHERE holds.event_id = @event_id AND holds.id = @hold_id AND holds.sold_at IS NULL
  AND EXISTS (SELECT 1 FROM confirmed);

-- name: OrderSetReason :exec
-- Says why a pending order is still pending (payment_failed, payment_unknown).
UPDATE orders SET status_reason = @status_reason, updated_at = now()
WHERE orders.id = @id AND orders.status = 'pending';

-- name: OrdersLapsed :many
-- Pending orders whose hold lapsed (or was released) unsold, with no payment under way:
-- reconciliation expires them. A candidate list; OrderExpire decides.
SELECT o.id
FROM orders o
JOIN holds h ON h.event_id = o.event_id AND h.id = o.hold_id
WHERE o.status = 'pending' AND h.sold_at IS NULL AND NOT hold_is_live(h)
  AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.state IN ('pending', 'unknown'))
ORDER BY o.id
LIMIT @max_rows::int;

-- name: OrderExpire :execrows
-- Ends a pending order whose hold lapsed unsold while no payment is under way. Run
-- after OrderLock: the conditions are then read after every claim (PaymentClaim)
-- committed before it, and none can start until this commits.
UPDATE orders o SET status = 'expired', status_reason = 'hold_lapsed', updated_at = now()
WHERE o.id = @id AND o.status = 'pending'
  AND EXISTS (SELECT 1 FROM holds h
              WHERE h.event_id = o.event_id AND h.id = o.hold_id AND h.sold_at IS NULL AND NOT hold_is_live(h))
  AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.state IN ('pending', 'unknown'));

-- name: OrderWithView :one
-- An order with everything the buyer's view of it shows, in one statement and so one
-- snapshot: its payments each with its refund if any (a payment is refunded at most
-- once), its seats, its standing tier, and its valid tickets once it has been sold.
-- The order views (checkout and pay answers, each order-page poll, each confirmation
-- email) are frequent at an onsale: at up to five statements each they would be a
-- fifth of its statements.
SELECT sqlc.embed(o),
    coalesce((SELECT json_agg(json_build_object(
            'state', p.state, 'provider_id', p.provider_payment_id, 'refund_id', r.id,
            'refund_cents', r.amount_cents, 'refund_reason', r.reason, 'refund_state', r.state) ORDER BY p.id)
        FROM payments p LEFT JOIN refunds r ON r.payment_id = p.id
        WHERE p.order_id = o.id), '[]'::json)::text AS payments,
    coalesce((SELECT json_agg(json_build_object(
            'id', s.id, 'section', s.section, 'row', s.row_label, 'number', s.number, 'price', s.price_cents) ORDER BY s.id)
        FROM seats s
        WHERE s.event_id = o.event_id AND s.id = ANY(o.seat_ids)), '[]'::json)::text AS seats,
    coalesce(g.name, '') AS ga_tier_name, coalesce(g.price_cents, 0)::int AS ga_price_cents,
    coalesce((SELECT json_agg(json_build_object(
            'id', t.id, 'seat', t.seat_id, 'tier', t.ga_tier_id, 'code', t.code) ORDER BY t.id)
        FROM tickets t
        WHERE t.event_id = o.event_id AND t.order_id = o.id AND t.voided_at IS NULL
            AND o.status NOT IN ('pending', 'expired')), '[]'::json)::text AS tickets
FROM orders o
LEFT JOIN ga_tiers g ON g.event_id = o.event_id AND g.id = o.ga_tier_id
WHERE o.id = @id;
