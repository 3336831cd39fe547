-- Orders as the box office sees them: search, a staff refund or void of
-- some or all of an order's tickets, and the orders export.

-- name: OrderSearch :many
-- Orders whose email starts with @email (case-insensitively; '' matches none), or
-- with id @order_id, or holding a ticket coded @code: newest first, older than
-- @before_id when it is not 0, @max_rows at most.
SELECT o.id, o.event_id, e.name AS event_name, o.email, o.status, o.amount_cents, o.created_at,
       (SELECT count(*) FROM tickets t WHERE t.event_id = o.event_id AND t.order_id = o.id AND t.voided_at IS NULL)::int AS valid_tickets,
       (SELECT v.time_zone FROM venues v WHERE v.id = e.venue_id) AS time_zone
FROM orders o JOIN events e ON e.id = o.event_id
WHERE (o.id = @order_id::bigint
       OR (@email::text <> '' AND lower(o.email) LIKE @email::text || '%')
       OR o.id = (SELECT t.order_id FROM tickets t WHERE t.code = @code::text))
  AND (@before_id::bigint = 0 OR o.id < @before_id::bigint)
ORDER BY o.id DESC
LIMIT @max_rows::int;

-- name: OrdersRecent :many
-- Every event's orders, newest first, older than @before_id when it is not 0, @max_rows
-- at most: the order list before anything is searched.
SELECT o.id, o.event_id, e.name AS event_name, o.email, o.status, o.amount_cents, o.created_at,
       (SELECT count(*) FROM tickets t WHERE t.event_id = o.event_id AND t.order_id = o.id AND t.voided_at IS NULL)::int AS valid_tickets,
       (SELECT v.time_zone FROM venues v WHERE v.id = e.venue_id) AS time_zone
FROM orders o JOIN events e ON e.id = o.event_id
WHERE @before_id::bigint = 0 OR o.id < @before_id::bigint
ORDER BY o.id DESC
LIMIT @max_rows::int;

-- name: TicketsOfOrderAdmin :many
-- Every ticket of an order, valid or not, with what it admits to, what it cost (its
-- order line's, else its seat's or tier's price), and how it ended or was used.
SELECT t.id, t.seat_id, t.ga_tier_id, t.code, t.created_at, t.voided_at, t.void_reason, t.refund_id,
       t.checked_in_at, t.checked_in_gate,
       coalesce(s.section, '') AS section, coalesce(s.row_label, '') AS row_label, coalesce(s.number, 0)::int AS number,
       coalesce(g.name, '') AS ga_tier_name,
       coalesce(ticket_paid_cents(t.event_id, t.order_id, t.id, t.seat_id, t.ga_tier_id), s.price_cents, g.price_cents, 0)::int AS price_cents
FROM tickets t
LEFT JOIN seats s ON s.event_id = t.event_id AND s.id = t.seat_id
LEFT JOIN ga_tiers g ON g.event_id = t.event_id AND g.id = t.ga_tier_id
WHERE t.event_id = @event_id AND t.order_id = @order_id
ORDER BY t.id;

-- name: TicketsValidOfOrder :many
SELECT id FROM tickets
WHERE event_id = @event_id AND order_id = @order_id AND voided_at IS NULL
ORDER BY id;

-- name: TicketsVoid :many
-- Ends tickets of an order, staff's decision: only those still valid and not used at
-- the door. Their rows are the verdict: the caller compares them with what it asked
-- for and undoes everything on a shortfall. Answers with what each admitted to and
-- what it cost (what a refund gives back: its order line's, else its own price).
WITH v AS (
    UPDATE tickets t
    SET voided_at = now(), void_reason = @void_reason::text, voided_by = sqlc.narg(staff_id)::bigint
    WHERE t.event_id = @event_id AND t.order_id = @order_id AND t.id = ANY(@ticket_ids::bigint[])
      AND t.voided_at IS NULL AND t.checked_in_at IS NULL
    RETURNING t.id, t.seat_id, t.ga_tier_id
)
SELECT v.id, v.seat_id, v.ga_tier_id,
       coalesce(ticket_paid_cents(@event_id, @order_id, v.id, v.seat_id, v.ga_tier_id), s.price_cents, g.price_cents, 0)::int AS price_cents
FROM v
LEFT JOIN seats s ON s.event_id = @event_id AND s.id = v.seat_id
LEFT JOIN ga_tiers g ON g.event_id = @event_id AND g.id = v.ga_tier_id
ORDER BY v.id;

-- name: TicketsSetRefund :exec
UPDATE tickets SET refund_id = @refund_id
WHERE event_id = @event_id AND id = ANY(@ticket_ids::bigint[]);

-- name: SeatUnsell :many
-- Returns seats to sale: only those still sold to this order. The caller compares the
-- rows with the seats it freed tickets of.
UPDATE seats SET sold_at = NULL, order_id = NULL
WHERE event_id = @event_id AND id = ANY(@seat_ids::bigint[]) AND order_id = @order_id
RETURNING id;

-- name: HoldGAPlaceReduce :execrows
-- Takes @quantity places off what a sold hold took from one stripe, leaving some.
UPDATE hold_ga_places SET quantity = quantity - @quantity::int
WHERE event_id = @event_id AND hold_id = @hold_id AND tier_id = @tier_id AND stripe = @stripe
  AND quantity > @quantity::int;

-- name: HoldGAPlaceRemove :execrows
-- Takes all @quantity places off what a sold hold took from one stripe.
DELETE FROM hold_ga_places
WHERE event_id = @event_id AND hold_id = @hold_id AND tier_id = @tier_id AND stripe = @stripe
  AND quantity = @quantity::int;

-- name: OrderDropPlaces :exec
-- A confirmed order gives up some of its seats and places (a staff refund or void of
-- some tickets): seat_ids and ga_quantity stay what the order owns.
UPDATE orders
SET seat_ids = ARRAY(SELECT x FROM unnest(seat_ids) WITH ORDINALITY AS u(x, n)
                     WHERE x <> ALL(@seat_ids::bigint[]) ORDER BY n),
    ga_quantity = ga_quantity - @ga_quantity::int, updated_at = now()
WHERE id = @id AND status = 'confirmed';

-- name: RefundCreateForTickets :one
-- Records a staff refund of some tickets of an order against the payment it keeps: only
-- a payment that succeeded, and only while what its refunds (but failed ones) add up
-- to stays within what it took. No row: it would not. state is due for a refund
-- through the provider, succeeded for one counted out at the desk.
INSERT INTO refunds (order_id, payment_id, amount_cents, reason, idempotency_key, by_staff, staff_id, state)
SELECT @order_id::bigint, p.id, @amount_cents::int, @reason::text, @idempotency_key::text, true, sqlc.narg(staff_id)::bigint,
       @state::refund_state
FROM payments p
WHERE p.id = @payment_id AND p.order_id = @order_id::bigint AND p.state = 'succeeded'
  AND p.amount_cents - (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r
                        WHERE r.payment_id = p.id AND r.state <> 'failed') >= @amount_cents::int
RETURNING id;

-- name: OrdersExport :many
-- An event's orders for the CSV export, a page at a time by id.
SELECT o.id, o.email, o.status, o.status_reason, o.amount_cents, o.created_at, o.confirmed_at,
       (SELECT count(*) FROM tickets t WHERE t.event_id = o.event_id AND t.order_id = o.id AND t.voided_at IS NULL)::int AS valid_tickets,
       (SELECT count(*) FROM tickets t WHERE t.event_id = o.event_id AND t.order_id = o.id AND t.voided_at IS NOT NULL)::int AS void_tickets,
       (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r WHERE r.order_id = o.id AND r.state = 'succeeded')::int AS refunded_cents
FROM orders o
WHERE o.event_id = @event_id AND o.id > @after_id
ORDER BY o.id
LIMIT @max_rows::int;

-- name: AuditOfSubject :many
-- What staff did to one thing ("order 42"), newest first.
SELECT a.id, a.at, a.action, coalesce(s.name, '') AS staff_name, a.before, a.after
FROM audit_log a LEFT JOIN staff s ON s.id = a.staff_id
WHERE a.subject = @subject
ORDER BY a.id DESC
LIMIT @max_rows::int;

-- name: HoldDropPlaces :exec
-- A sold hold gives up places staff refunded or voided, so that what its buyer owns
-- (buyer_places, the per-buyer limit) counts only what they still have.
UPDATE holds
SET seat_count = seat_count - @seat_count::int, ga_quantity = ga_quantity - @ga_quantity::int
WHERE event_id = @event_id AND id = @id AND sold_at IS NOT NULL;
