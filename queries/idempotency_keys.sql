-- name: IdempotencyKeysClaim :many
-- Takes keys for first requests, a batch of them in one statement (booking gathers
-- the claims that arrive while one batch is in flight into the next, as the session
-- store does with its writes): a new key, one whose stored answer expired, or one
-- left in flight for stale_seconds by a request of the same body that never finished
-- (its process died; a request never runs that long). The keys returned are taken;
-- one not returned was taken before (the caller reads it to replay its answer, or to
-- refuse). A batch names a key once: the caller sends its repeats in no batch.
--
-- The claims and the answers' saves commit asynchronously, as session writes do
-- (sessions.sql): set_config(…, true) turns synchronous_commit off for the
-- statement's own transaction, so a keyed call waits for no WAL fsync of the key's
-- own. The key is seen by every other transaction at once all the same. The WAL is
-- one sequence: the request's own durable commit (a hold, an order, a payment's
-- claim) flushes the claim made before it, so a crash never keeps a request's effect
-- and loses its key. It can lose an answer saved in the last moment (3 ×
-- wal_writer_delay): the key is then left in flight, and a repeat after it goes stale
-- runs again, against booking's own guards (one order per hold, one payment under
-- way per order, the buyer's one basket). It is sent alone, in its own transaction:
-- the setting holds for the whole transaction, and would make any write sent in it
-- commit asynchronously too.
INSERT INTO idempotency_keys (buyer, key, request_hash, expires_at)
SELECT c.buyer, c.key, c.request_hash, now() + make_interval(secs => @ttl_seconds::float8)
FROM (SELECT set_config('synchronous_commit', 'off', true)) AS lax,
     (SELECT unnest(@buyers::text[]) AS buyer, unnest(@keys::text[]) AS key,
             unnest(@request_hashes::bytea[]) AS request_hash) AS c
ON CONFLICT (buyer, key) DO UPDATE
SET request_hash = excluded.request_hash, status = NULL, body = NULL, created_at = now(),
    expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at <= now()
   OR (idempotency_keys.status IS NULL AND idempotency_keys.request_hash = excluded.request_hash
       AND idempotency_keys.created_at < now() - make_interval(secs => @stale_seconds::float8))
RETURNING buyer, key;

-- name: IdempotencyKeyGet :one
SELECT request_hash, status, body FROM idempotency_keys WHERE buyer = @buyer AND key = @key;

-- name: IdempotencyKeysSave :exec
-- Stores the answers of a batch of requests (gathered as the claims are), each on its
-- key while the key is in flight. Commits asynchronously (IdempotencyKeysClaim says
-- why that is safe).
UPDATE idempotency_keys AS k SET status = a.status, body = a.body
FROM (SELECT set_config('synchronous_commit', 'off', true)) AS lax,
     (SELECT unnest(@buyers::text[]) AS buyer, unnest(@keys::text[]) AS key,
             unnest(@statuses::int[]) AS status, unnest(@bodies::bytea[]) AS body) AS a
WHERE k.buyer = a.buyer AND k.key = a.key AND k.status IS NULL;

-- name: IdempotencyKeyRelease :exec
-- Gives a key back when its request failed on our side: a retry runs it again.
DELETE FROM idempotency_keys WHERE buyer = @buyer AND key = @key AND status IS NULL;

-- name: IdempotencyKeysExpire :execrows
DELETE FROM idempotency_keys
WHERE ctid = ANY (ARRAY(SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT @max_rows::int));
