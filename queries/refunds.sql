-- name: RefundCreate :one
-- Records the refund of a payment that sold nothing, in the transaction that found so.
-- No row: the payment's refund is recorded already (exactly once per payment; staff
-- refunds of some tickets are other rows, see RefundCreateForTickets).
INSERT INTO refunds (order_id, payment_id, amount_cents, reason, idempotency_key)
VALUES (@order_id, @payment_id, @amount_cents, @reason, @idempotency_key)
ON CONFLICT (payment_id) WHERE NOT by_staff DO NOTHING
RETURNING id;

-- name: RefundGet :one
-- A refund with what the provider needs to make it: the payment's provider ids, and
-- the order's event.
SELECT r.*, p.provider, p.provider_payment_id, o.event_id
FROM refunds r
JOIN payments p ON p.id = r.payment_id
JOIN orders o ON o.id = r.order_id
WHERE r.id = @id;

-- name: RefundLock :one
SELECT * FROM refunds WHERE id = @id FOR UPDATE;

-- name: RefundLockByProviderID :one
SELECT r.* FROM refunds r JOIN payments p ON p.id = r.payment_id
WHERE p.provider = @provider AND r.provider_refund_id = @provider_refund_id
FOR UPDATE OF r;

-- name: RefundLockByKey :one
SELECT * FROM refunds WHERE idempotency_key = @idempotency_key FOR UPDATE;

-- name: RefundSetProviderID :exec
-- The provider has the refund: its id is recorded, and it is pending until the
-- provider's word (which may have come first: then this changes nothing). Only under
-- the key it was asked for with: a refund made again under a new key meanwhile (the
-- first failed) is not this one.
UPDATE refunds SET provider_refund_id = @provider_refund_id, state = 'pending', updated_at = now()
WHERE id = @id AND state = 'due' AND idempotency_key = @idempotency_key;

-- name: RefundKeyUse :one
-- The refund is about to be asked for under its key: the key's first use is recorded,
-- and stale says an earlier use is window_seconds old or more, so that the provider may
-- have forgotten the key (the refund is looked up before it is asked for again). No
-- row: the refund is not due.
WITH old AS (SELECT f.id, f.key_used_at FROM refunds f WHERE f.id = @id AND f.state = 'due' FOR UPDATE)
UPDATE refunds r SET key_used_at = coalesce(old.key_used_at, now())
FROM old WHERE r.id = old.id
RETURNING (old.key_used_at IS NOT NULL
           AND old.key_used_at <= now() - make_interval(secs => @window_seconds::float8))::bool AS stale;

-- name: RefundReopen :execrows
-- The provider failed the refund, before or after it succeeded: the buyer is still
-- owed the money, so it is due again, under a new key (the old one names the failed
-- refund at the provider), as the refund's next attempt.
UPDATE refunds
SET state = 'due', idempotency_key = @idempotency_key, provider_refund_id = NULL, key_used_at = NULL,
    attempt = attempt + 1, updated_at = now()
WHERE id = @id AND state <> 'failed';

-- name: RefundGiveUp :execrows
-- The provider failed the refund once more than booking makes it again: it stays
-- failed, for a person to settle with the buyer.
UPDATE refunds SET state = 'failed', updated_at = now() WHERE id = @id AND state <> 'failed';

-- name: RefundSettle :execrows
-- The provider's word on a refund: succeeded or failed. Only once.
UPDATE refunds
SET state = @state, updated_at = now(),
    provider_refund_id = coalesce(provider_refund_id, sqlc.narg(provider_refund_id)::text)
WHERE id = @id AND state IN ('due', 'pending');

-- name: RefundsUnsettledCount :one
SELECT count(*)::int FROM refunds WHERE order_id = @order_id AND state IN ('due', 'pending');

-- name: RefundsOfOrder :many
SELECT * FROM refunds WHERE order_id = @order_id ORDER BY id;

-- name: RefundsStale :many
-- Refunds with no progress for age_seconds: due ones whose job never ran (or no job
-- queue is configured), pending ones whose webhook never came.
SELECT r.id, r.state, r.order_id, r.amount_cents, r.idempotency_key, r.provider_refund_id,
       p.provider, p.provider_payment_id, o.event_id
FROM refunds r
JOIN payments p ON p.id = r.payment_id
JOIN orders o ON o.id = r.order_id
WHERE p.provider = @provider AND r.state IN ('due', 'pending')
  AND r.updated_at < now() - make_interval(secs => @age_seconds::float8)
ORDER BY r.updated_at
LIMIT @max_rows::int;

-- name: RefundTouch :exec
UPDATE refunds SET updated_at = now() WHERE id = @id AND state IN ('due', 'pending');
