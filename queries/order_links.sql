-- name: OrderLinkVersion :one
-- The version an order's access link must carry: 1 until staff first revoke.
SELECT coalesce((SELECT version FROM order_links WHERE order_id = @order_id), 1)::int AS version;

-- name: OrderLinkRevoke :one
-- Moves the order's links on by one version: every link of an earlier one stops
-- working. The caller holds the order's lock.
INSERT INTO order_links (order_id, version) VALUES (@order_id, 2)
ON CONFLICT (order_id) DO UPDATE SET version = order_links.version + 1, revoked_at = now()
RETURNING version;

-- name: OrdersOfEmail :many
-- The orders of an address that a buyer may want to open again (paid ones, and those
-- refunded or being refunded), newest first, @max_rows at most. lower(email) is
-- indexed (orders_email).
SELECT id FROM orders
WHERE lower(email) = @email::text AND status IN ('confirmed', 'refund_pending', 'refunded')
ORDER BY id DESC
LIMIT @max_rows::int;
