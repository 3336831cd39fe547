-- The desk's till: what each member of staff took and gave back, per day and method.

-- name: StaffRefundRequestGet :one
-- A staff refund or void confirmed under key before, if it was.
SELECT * FROM staff_refund_requests WHERE key = @key;

-- name: StaffRefundRequestRecord :exec
INSERT INTO staff_refund_requests (key, order_id, kind, staff_id, ticket_ids, amount_cents, method, status)
VALUES (@key, @order_id, @kind, sqlc.narg(staff_id)::bigint, @ticket_ids::bigint[], @amount_cents, @method, @status);

-- name: TillReport :many
-- Sales at the box office and staff refunds, per member of staff, day and method,
-- from from_day to to_day (dates on the clocks of each event's venue). A sale counts
-- the money its payment took (a free sale none); a refund counts unless it failed.
-- The method of a refund is its payment's: cash or card_present for a box-office
-- payment (given back at the desk), card for a payment through the provider.
WITH moves AS (
    SELECT b.staff_id, v.time_zone, (b.created_at AT TIME ZONE v.time_zone)::date AS day, b.method,
           coalesce(p.amount_cents, 0) AS sold_cents, 0 AS refunded_cents, 1 AS sales, 0 AS refunds
    FROM box_office_sales b
    JOIN events e ON e.id = b.event_id
    JOIN venues v ON v.id = e.venue_id
    LEFT JOIN payments p ON p.order_id = b.order_id AND p.provider = 'box_office'
    WHERE b.created_at >= @from_at AND b.created_at < @to_at
    UNION ALL
    SELECT r.staff_id, v.time_zone, (r.created_at AT TIME ZONE v.time_zone)::date,
           CASE WHEN p.provider = 'box_office' THEN p.state_reason ELSE 'card' END,
           0, r.amount_cents, 0, 1
    FROM refunds r
    JOIN payments p ON p.id = r.payment_id
    JOIN orders o ON o.id = r.order_id
    JOIN events e ON e.id = o.event_id
    JOIN venues v ON v.id = e.venue_id
    WHERE r.by_staff AND r.staff_id IS NOT NULL AND r.state <> 'failed'
      AND r.created_at >= @from_at AND r.created_at < @to_at
)
SELECT m.day::date AS day, m.time_zone::text AS time_zone, m.staff_id::bigint AS staff_id, s.name AS staff_name,
       m.method::text AS method,
       sum(m.sold_cents)::bigint AS sold_cents, sum(m.refunded_cents)::bigint AS refunded_cents,
       sum(m.sales)::int AS sales, sum(m.refunds)::int AS refunds
FROM moves m JOIN staff s ON s.id = m.staff_id
WHERE m.day BETWEEN @from_day::date AND @to_day::date
GROUP BY m.day, m.time_zone, m.staff_id, s.name, m.method
ORDER BY m.day DESC, s.name, m.staff_id, m.time_zone, m.method;
