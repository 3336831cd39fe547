-- name: PaymentEventRecord :execrows
-- Records a provider event id in the transaction that acts on it. No row: this event
-- was acted on before (or is being acted on by a concurrent delivery, which this
-- statement waits for).
INSERT INTO payment_events (provider, event_id, type, order_id)
VALUES (@provider, @event_id, @type, @order_id)
ON CONFLICT (provider, event_id) DO NOTHING;

-- name: PaymentClaim :one
-- Starts a charge attempt: the payment claim of a pending order, taken only while its
-- hold is live and the event's sale is open to it (event_on_sale_with: the public
-- sale, or the presale of the access code the hold records; by the database clock)
-- and no other payment is under way. No row: one of these (the caller tells which). Run after
-- OrderLock, so that expiring the order and claiming it take turns; the partial unique
-- index payments_one_under_way backstops the last condition.
INSERT INTO payments (order_id, provider, idempotency_key, amount_cents)
SELECT o.id, @provider::text, @idempotency_key::text, o.amount_cents
FROM orders o
WHERE o.id = @order_id AND o.status = 'pending'
  AND EXISTS (SELECT 1 FROM holds h JOIN events e ON e.id = h.event_id
              WHERE h.event_id = o.event_id AND h.id = o.hold_id AND hold_is_live(h)
                AND event_on_sale_with(e, h.access_code_id))
  AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.state IN ('pending', 'unknown'))
ON CONFLICT (order_id) WHERE state IN ('pending', 'unknown') DO NOTHING
RETURNING *;

-- name: PaymentExternalCreate :one
-- Records a success for a payment booking did not start (another attempt's id, a
-- payment made elsewhere): the money is taken, so it is on record, to be kept or
-- refunded.
INSERT INTO payments (order_id, provider, idempotency_key, provider_payment_id, amount_cents, state, state_reason)
VALUES (@order_id, @provider, @idempotency_key, @provider_payment_id, @amount_cents, 'succeeded', 'external')
RETURNING *;

-- name: PaymentLock :one
SELECT * FROM payments WHERE id = @id FOR UPDATE;

-- name: PaymentLockByProviderID :one
SELECT * FROM payments WHERE provider = @provider AND provider_payment_id = @provider_payment_id FOR UPDATE;

-- name: PaymentLockByKey :one
SELECT * FROM payments WHERE idempotency_key = @idempotency_key FOR UPDATE;

-- name: PaymentSetProviderID :exec
-- Records the provider's payment id as soon as the charge's answer brings it, unless
-- the payment is locked: then its webhook (or reconciliation) is acting on it already,
-- and records the id itself (PaymentSucceed, PaymentFail). Waiting for that lock held a
-- pool connection for the webhook's whole transaction, in a quarter of an onsale's
-- payments. Skipped, the id is still found by the charge's key.
UPDATE payments SET provider_payment_id = @provider_payment_id, updated_at = now()
WHERE payments.id = (SELECT p.id FROM payments p WHERE p.id = @id AND p.provider_payment_id IS NULL FOR UPDATE SKIP LOCKED);

-- name: PaymentMarkUnknown :execrows
-- The charge's answer was lost: the payment keeps the order's claim until a lookup
-- settles it.
UPDATE payments SET state = 'unknown', state_reason = @state_reason, updated_at = now()
WHERE id = @id AND state = 'pending';

-- name: PaymentFail :execrows
-- A definite failure: nothing was charged, and the claim is given up (the buyer may
-- pay again). Never after a success: states only move forward.
UPDATE payments
SET state = 'failed', state_reason = @state_reason, updated_at = now(),
    provider_payment_id = coalesce(provider_payment_id, sqlc.narg(provider_payment_id)::text)
WHERE id = @id AND state IN ('pending', 'unknown');

-- name: PaymentSucceed :exec
-- The money is taken: the amount is what the provider says it took.
UPDATE payments
SET state = 'succeeded', updated_at = now(), amount_cents = @amount_cents,
    provider_payment_id = coalesce(provider_payment_id, sqlc.narg(provider_payment_id)::text)
WHERE id = @id AND state IN ('pending', 'unknown', 'failed');

-- name: PaymentMarkRefunded :exec
-- The payment is given back in full: its succeeded refunds add up to what it took. A
-- staff refund of some tickets leaves it succeeded, kept for the tickets left.
UPDATE payments p SET state = 'refunded', updated_at = now()
WHERE p.id = @id AND p.state = 'succeeded'
  AND (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r
       WHERE r.payment_id = p.id AND r.state = 'succeeded') >= p.amount_cents;

-- name: PaymentUnmarkRefunded :exec
-- A refund counted in the payment's full refund failed after all: the payment is kept
-- again until its succeeded refunds add up to what it took.
UPDATE payments p SET state = 'succeeded', updated_at = now()
WHERE p.id = @id AND p.state = 'refunded'
  AND (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r
       WHERE r.payment_id = p.id AND r.state = 'succeeded') < p.amount_cents;

-- name: PaymentTouch :exec
-- Reconciliation took the payment up: whatever the lookup says, the next pass takes
-- the others first (a payment that cannot be settled must not hold the front).
UPDATE payments SET updated_at = now() WHERE id = @id AND state IN ('pending', 'unknown');

-- name: PaymentsOfOrder :many
SELECT * FROM payments WHERE order_id = @order_id ORDER BY id;

-- name: PaymentsUnsettled :many
-- Payments with no word from the provider for age_seconds: reconciliation looks them up.
SELECT p.*, o.event_id
FROM payments p JOIN orders o ON o.id = p.order_id
WHERE p.provider = @provider AND p.state IN ('pending', 'unknown')
  AND p.updated_at < now() - make_interval(secs => @age_seconds::float8)
ORDER BY p.updated_at
LIMIT @max_rows::int;

-- name: PaymentKeptLock :one
-- The payment a confirmed order keeps (the succeeded one its payment_id names), locked.
SELECT * FROM payments
WHERE order_id = @order_id AND provider_payment_id = @provider_payment_id::text AND state = 'succeeded'
FOR UPDATE;

-- name: PaymentKept :one
-- PaymentKeptLock without the lock, with what its refunds (but failed ones) add up to.
SELECT p.*, (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r
             WHERE r.payment_id = p.id AND r.state <> 'failed')::int AS refunded_cents
FROM payments p
WHERE p.order_id = @order_id AND p.provider_payment_id = @provider_payment_id::text AND p.state = 'succeeded';
