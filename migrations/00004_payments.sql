-- +goose Up

-- Every payment accounted for (issue 7): one row per charge attempt, one per refund,
-- each with the provider's ids recorded in the transaction that acts on them, and the
-- API's idempotency keys.
--
-- ALTER TYPE … ADD VALUE runs inside this migration's transaction (PostgreSQL 12 and
-- later allow it), so the migration stays all-or-nothing; the one restriction is that
-- the new value may not be used before the transaction commits, and nothing below
-- names 'expired'.
ALTER TYPE order_status ADD VALUE IF NOT EXISTS 'expired';

-- A charge attempt's life: pending (claimed, then charged and awaiting the provider's
-- word) → succeeded or failed; unknown when the charge's answer was lost (a timeout, a
-- 5xx, a crash), until a lookup settles it; succeeded → refunded.
CREATE TYPE payment_state AS ENUM ('pending', 'succeeded', 'failed', 'unknown', 'refunded');

CREATE TABLE payments (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id            bigint NOT NULL REFERENCES orders (id),
    provider            text NOT NULL,
    -- sent with the charge: the provider charges at most once per key, and a lookup can
    -- find the payment by it when its id never reached us
    idempotency_key     text NOT NULL UNIQUE,
    provider_payment_id text,
    amount_cents        integer NOT NULL CHECK (amount_cents >= 0),
    state               payment_state NOT NULL DEFAULT 'pending',
    state_reason        text NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (provider, provider_payment_id)
);
-- The payment claim: at most one payment under way per order. A charge whose outcome is
-- unknown keeps the claim, so no second charge starts without knowing the first; only
-- a definite failure (or a lookup that finds nothing was charged) gives it up.
CREATE UNIQUE INDEX payments_one_under_way ON payments (order_id) WHERE state IN ('pending', 'unknown');
CREATE INDEX payments_order ON payments (order_id);
-- What reconciliation looks up: payments with no word from the provider for a while.
CREATE INDEX payments_unsettled ON payments (updated_at) WHERE state IN ('pending', 'unknown');

-- A refund's life: due (recorded, its job queued) → pending (the provider has it, under
-- provider_refund_id) → succeeded or failed.
CREATE TYPE refund_state AS ENUM ('due', 'pending', 'succeeded', 'failed');

CREATE TABLE refunds (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id           bigint NOT NULL REFERENCES orders (id),
    payment_id         bigint NOT NULL REFERENCES payments (id),
    amount_cents       integer NOT NULL CHECK (amount_cents > 0),
    reason             text NOT NULL,
    -- sent with the refund: the provider refunds at most once per key
    idempotency_key    text NOT NULL UNIQUE,
    provider_refund_id text,
    state              refund_state NOT NULL DEFAULT 'due',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    -- Exactly once: a payment is refunded in full, by one refund, however often the
    -- success that calls for it is delivered or looked up.
    UNIQUE (payment_id)
);
CREATE INDEX refunds_order ON refunds (order_id);
CREATE INDEX refunds_unsettled ON refunds (updated_at) WHERE state IN ('due', 'pending');

-- Orders that may have to expire: pending ones, few at any time.
CREATE INDEX orders_pending ON orders (id) WHERE status = 'pending';

-- Payments made before this migration: the one under way or kept, so that what an order
-- paid is on record and every rule above holds for old orders too.
INSERT INTO payments (order_id, provider, idempotency_key, provider_payment_id, amount_cents, state)
SELECT o.id, 'test', 'legacy-' || o.id, o.payment_id, o.amount_cents,
       CASE o.status WHEN 'pending' THEN 'pending'::payment_state ELSE 'succeeded'::payment_state END
FROM orders o
WHERE o.payment_id IS NOT NULL AND o.payment_id NOT LIKE 'claim:%';
-- Orders of the old code that sold nothing after a payment: their refunds are due now
-- (reconciliation runs refunds that no job has taken).
INSERT INTO refunds (order_id, payment_id, amount_cents, reason, idempotency_key)
SELECT o.id, p.id, p.amount_cents, o.status_reason, 'legacy-refund-' || o.id
FROM orders o JOIN payments p ON p.order_id = o.id
WHERE o.status = 'refund_pending' AND p.amount_cents > 0;
-- A claim left by a request of the old code: it charged nothing it recorded. The claim
-- is a payments row now; orders.payment_id names the payment a confirmed order keeps.
UPDATE orders SET payment_id = NULL WHERE payment_id LIKE 'claim:%';
ALTER TABLE orders DROP COLUMN payment_started_at;

-- Answers of the JSON API's POST calls, per session buyer and Idempotency-Key: a retry
-- with the same key gets the first answer instead of a second hold, order or charge.
-- status is NULL while the first request is still running.
CREATE TABLE idempotency_keys (
    buyer        text NOT NULL,
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    status       integer,
    body         bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (buyer, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- +goose Down
ALTER TABLE orders ADD COLUMN payment_started_at timestamptz;
-- The old code claims an order for payment only while orders.payment_id is empty (or a
-- claim: marker over a minute old). A payment still pending or of unknown outcome must
-- keep its order claimed after the rollback, or the old code would charge again: name
-- it there (not as a claim: marker, which would lapse).
UPDATE orders o
SET payment_id = coalesce(p.provider_payment_id, 'unknown:' || p.idempotency_key)
FROM payments p
WHERE p.order_id = o.id AND p.state IN ('pending', 'unknown') AND o.payment_id IS NULL;
DROP TABLE idempotency_keys, refunds, payments;
DROP TYPE refund_state, payment_state;
DROP INDEX orders_pending;
-- PostgreSQL cannot drop an enum value: 'expired' stays in order_status, unused.
UPDATE orders SET status = 'pending' WHERE status = 'expired';
