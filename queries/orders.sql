-- name: OrderCreate :one
-- One order per hold, and only while the event's sale is open (by the database clock):
-- no row means a second checkout of the same hold (the caller answers with the
-- existing order) or the window (EventSaleWindow tells).
INSERT INTO orders (event_id, hold_id, buyer, email, seat_ids, ga_tier_id, ga_quantity, amount_cents)
SELECT @event_id::bigint, @hold_id::bigint, @buyer::text, @email::text, @seat_ids::bigint[],
       sqlc.narg(ga_tier_id)::bigint, @ga_quantity::int, @amount_cents::int
WHERE EXISTS (SELECT 1 FROM events e
              WHERE e.id = @event_id::bigint AND now() >= e.onsale_at AND now() < coalesce(e.sales_close_at, e.starts_at))
ON CONFLICT (event_id, hold_id) DO NOTHING
RETURNING *;

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

-- name: OrderClaimPayment :execrows
-- Lets one payment at a time start for a pending order, so that paying twice before
-- the first webhook arrives cannot charge twice, and only while the event's sale is
-- open (by the database clock; 0 rows then may be the window: EventSaleWindow tells).
-- A claim left by a crashed request expires after a minute.
UPDATE orders o SET payment_id = @claim, payment_started_at = now()
WHERE o.id = @id AND o.status = 'pending'
  AND (o.payment_id IS NULL OR (o.payment_id LIKE 'claim:%' AND o.payment_started_at < now() - interval '1 minute'))
  AND EXISTS (SELECT 1 FROM events e
              WHERE e.id = o.event_id AND now() >= e.onsale_at AND now() < coalesce(e.sales_close_at, e.starts_at));

-- name: OrderSetPayment :exec
-- Replaces this request's claim by the provider's payment id (or by nothing, when the
-- charge failed and the buyer may try another card).
UPDATE orders
SET payment_id = sqlc.narg(payment_id)::text,
    payment_started_at = CASE WHEN sqlc.narg(payment_id)::text IS NULL THEN NULL ELSE payment_started_at END
WHERE id = @id AND payment_id = @claim;
