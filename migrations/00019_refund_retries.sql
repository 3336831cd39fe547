-- +goose Up

-- A refund's key and its tries at the provider.
--
-- key_used_at is when the refund was first asked for under its current idempotency
-- key. The provider answers a repeat of a key with the first answer only while it keeps
-- the key (Stripe: 24 hours), and the refund job retries for days: a retry later than
-- the window looks the refund up first and asks again only if none was made. Refunds
-- due before this migration may have been asked for already: their key counts as used
-- when they were recorded, so that an old one is looked up first.
--
-- attempt counts the refunds made at the provider for the row. A refund the provider
-- fails (before or after it succeeded) is still owed to the buyer: it is made again
-- under a new key, a bounded number of times, after which it stays failed for a person
-- to settle.
ALTER TABLE refunds
    ADD COLUMN key_used_at timestamptz,
    ADD COLUMN attempt     integer NOT NULL DEFAULT 1 CHECK (attempt >= 1);
UPDATE refunds SET key_used_at = created_at WHERE state = 'due';

-- +goose Down

ALTER TABLE refunds DROP COLUMN attempt, DROP COLUMN key_used_at;
