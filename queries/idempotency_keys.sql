-- name: IdempotencyKeyClaim :one
-- Takes a key for a first request: a new key, one whose stored answer expired, or one
-- left in flight for stale_seconds by a request of the same body that never finished
-- (its process died; a request never runs that long). No row: the key is taken (the
-- caller reads it to replay its answer, or to refuse).
INSERT INTO idempotency_keys (buyer, key, request_hash, expires_at)
VALUES (@buyer, @key, @request_hash, now() + make_interval(secs => @ttl_seconds::float8))
ON CONFLICT (buyer, key) DO UPDATE
SET request_hash = excluded.request_hash, status = NULL, body = NULL, created_at = now(),
    expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at <= now()
   OR (idempotency_keys.status IS NULL AND idempotency_keys.request_hash = excluded.request_hash
       AND idempotency_keys.created_at < now() - make_interval(secs => @stale_seconds::float8))
RETURNING buyer;

-- name: IdempotencyKeyGet :one
SELECT request_hash, status, body FROM idempotency_keys WHERE buyer = @buyer AND key = @key;

-- name: IdempotencyKeySave :exec
UPDATE idempotency_keys SET status = @status, body = @body
WHERE buyer = @buyer AND key = @key AND status IS NULL;

-- name: IdempotencyKeyRelease :exec
-- Gives a key back when its request failed on our side: a retry runs it again.
DELETE FROM idempotency_keys WHERE buyer = @buyer AND key = @key AND status IS NULL;

-- name: IdempotencyKeysExpire :execrows
DELETE FROM idempotency_keys
WHERE ctid = ANY (ARRAY(SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT @max_rows::int));
